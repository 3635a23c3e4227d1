"""Data streams: online summaries and the estimators built on them.

* `jaxnb.stream.summaries`: per-class summaries at bounded memory (Gaussian, GKClass, cPiD).
* `jaxnb.stream.online`: `OnlineWeightedNB` (weights learned by jit-compiled SGD, one pass) and
  `OnlineNB`; `jaxnb.stream.anb`: the offline reference `AveragedNB`. The three estimators are
  also `jaxnb.OnlineWeightedNB`, `jaxnb.OnlineNB` and `jaxnb.AveragedNB`.
* `jaxnb.stream.prequential`: test-then-train evaluation; `jaxnb.stream.simulate`: a stream
  generator shaped like the PASCAL Large Scale Learning sets.
"""
