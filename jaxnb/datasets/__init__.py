"""Synthetic generators of the papers' scenarios and loaders of the shipped real data sets."""

from .synthetic import (
    FIG1_CPT_X1 as FIG1_CPT_X1,
)
from .synthetic import (
    FIG1_CPT_X23 as FIG1_CPT_X23,
)
from .synthetic import (
    TABLE1_DEFAULTS as TABLE1_DEFAULTS,
)
from .synthetic import (
    make_fig1 as make_fig1,
)
from .synthetic import (
    make_table1 as make_table1,
)
from .synthetic import (
    make_table1_batch as make_table1_batch,
)

__all__ = [
    "FIG1_CPT_X1",
    "FIG1_CPT_X23",
    "TABLE1_DEFAULTS",
    "make_fig1",
    "make_table1",
    "make_table1_batch",
]

from .loaders import load_csv as load_csv  # noqa: E402
from .loaders import load_diabetes as load_diabetes  # noqa: E402
from .loaders import load_flags as load_flags  # noqa: E402
from .loaders import load_soybean_small as load_soybean_small  # noqa: E402

__all__ += ["load_csv", "load_diabetes", "load_flags", "load_soybean_small"]
