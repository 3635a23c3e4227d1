"""jaxnb: regularized, selective and weighted naive Bayes as differentiable, jit-compiled JAX
programs.

Public API: estimators (scikit-learn style), the functional core (sufficient statistics, parameters,
log-contributions, combination rules, losses), synthetic generators and loaders.
"""

import importlib.metadata as _metadata

from . import likelihood as likelihood
from . import params as params
from . import suffstats as suffstats
from .cache import enable_compilation_cache as enable_compilation_cache
from .estimators import BaseNB as BaseNB
from .estimators import NaiveBayes as NaiveBayes
from .estimators_penalized import L1NB as L1NB
from .estimators_penalized import GroupLassoNB as GroupLassoNB
from .estimators_penalized import WeightedNB as WeightedNB
from .estimators_search import SelectiveNB as SelectiveNB
from .estimators_search import StagewiseNB as StagewiseNB
from .estimators_structure import TAN as TAN
from .estimators_structure import FilterNB as FilterNB
from .estimators_structure import FilterWrapperNB as FilterWrapperNB
from .estimators_structure import FlexibleNB as FlexibleNB
from .estimators_structure import FlexibleTAN as FlexibleTAN
from .estimators_structure import GaussianSemiNaiveNB as GaussianSemiNaiveNB
from .estimators_structure import ParzenNB as ParzenNB
from .exceptions import ConvergenceWarning as ConvergenceWarning
from .exceptions import NotFittedError as NotFittedError
from .likelihood import (
    combine as combine,
)
from .likelihood import (
    error_probability as error_probability,
)
from .likelihood import (
    error_rate as error_rate,
)
from .likelihood import (
    joint_log_likelihood as joint_log_likelihood,
)
from .likelihood import (
    log_contributions as log_contributions,
)
from .likelihood import (
    log_joint as log_joint,
)
from .likelihood import (
    log_loss as log_loss,
)
from .likelihood import (
    log_posterior as log_posterior,
)
from .methods.nb import fit_nb as fit_nb
from .methods.nb import fit_stats as fit_stats
from .params import NBParams as NBParams
from .params import fit_marginal as fit_marginal
from .params import fit_mle as fit_mle
from .params import interpolate as interpolate
from .stream.anb import AveragedNB as AveragedNB
from .stream.online import OnlineNB as OnlineNB
from .stream.online import OnlineWeightedNB as OnlineWeightedNB
from .suffstats import SuffStats as SuffStats
from .suffstats import accumulate as accumulate
from .suffstats import merge as merge
from .suffstats import subtract as subtract

try:
    __version__ = _metadata.version("jaxnb")
except _metadata.PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+local"

__all__ = [
    "ConvergenceWarning",
    "NotFittedError",
    "BaseNB",
    "NaiveBayes",
    "StagewiseNB",
    "SelectiveNB",
    "GroupLassoNB",
    "L1NB",
    "WeightedNB",
    "TAN",
    "GaussianSemiNaiveNB",
    "FlexibleNB",
    "FlexibleTAN",
    "ParzenNB",
    "FilterNB",
    "FilterWrapperNB",
    "OnlineNB",
    "OnlineWeightedNB",
    "AveragedNB",
    "NBParams",
    "SuffStats",
    "accumulate",
    "merge",
    "subtract",
    "fit_mle",
    "fit_marginal",
    "interpolate",
    "fit_nb",
    "fit_stats",
    "log_contributions",
    "log_joint",
    "log_posterior",
    "combine",
    "error_rate",
    "error_probability",
    "log_loss",
    "joint_log_likelihood",
    "likelihood",
    "params",
    "suffstats",
    "enable_compilation_cache",
]
