"""Projections, proximal operators and proximal-gradient solvers (pure JAX, pytree-friendly),
and `NamedOptimizer` (an optax optimizer that pickles)."""

from .fista import FistaState as FistaState
from .fista import SolverInfo as SolverInfo
from .fista import fista_init as fista_init
from .fista import fista_step as fista_step
from .fista import prox_gradient_residual as prox_gradient_residual
from .fista import solve_fista as solve_fista
from .named import NamedOptimizer as NamedOptimizer
from .projections import project_box as project_box
from .projections import project_cpt as project_cpt
from .projections import project_cpt_affine as project_cpt_affine
from .projections import project_simplex as project_simplex
from .prox import DykstraInfo as DykstraInfo
from .prox import group_norms as group_norms
from .prox import prox_dykstra as prox_dykstra
from .prox import prox_group_l2 as prox_group_l2
from .prox import prox_group_l2_box as prox_group_l2_box
from .prox import prox_group_l2_simplex as prox_group_l2_simplex
from .transforms import contrast_basis as contrast_basis
from .transforms import helmert_basis as helmert_basis
from .transforms import inv_sqrt_schedule as inv_sqrt_schedule

__all__ = [
    "DykstraInfo",
    "NamedOptimizer",
    "contrast_basis",
    "helmert_basis",
    "inv_sqrt_schedule",
    "FistaState",
    "SolverInfo",
    "fista_init",
    "fista_step",
    "group_norms",
    "project_box",
    "project_cpt",
    "project_cpt_affine",
    "project_simplex",
    "prox_dykstra",
    "prox_gradient_residual",
    "prox_group_l2",
    "prox_group_l2_box",
    "prox_group_l2_simplex",
    "solve_fista",
]
