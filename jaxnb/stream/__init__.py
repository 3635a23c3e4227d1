"""Online summaries for data streams (see `jaxnb.stream.summaries`)."""
