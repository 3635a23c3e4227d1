r"""Synthetic data of the fsNB paper (Vidaurre, Bielza & Larrañaga 2011, §4 and §7.1).

All generators are pure JAX functions of a PRNG key with static sizes, so ``jax.vmap`` over a batch
of keys produces many data sets in one call (``make_table1_batch``).

Returned data sets are dicts of arrays: ``codes_train`` (n, q) int32, ``values_train`` (n, r) float,
``y_train`` (n,) int32 and the same for ``_test``; ``noisy`` (p,) bool marks the fully noisy
predictors (V3), ``n_states`` is a static tuple (kept outside the dict by the batch helper).
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

__all__ = [
    "FIG1_CPT_X1",
    "FIG1_CPT_X23",
    "TABLE1_DEFAULTS",
    "make_fig1",
    "make_table1",
    "make_table1_batch",
    "sample_discrete",
]

# Eq (12) of the fsNB paper: columns are classes, rows are states.
FIG1_CPT_X1 = ((0.80, 1 / 3, 1 / 3), (0.10, 1 / 3, 1 / 3), (0.10, 1 / 3, 1 / 3))
FIG1_CPT_X23 = ((1 / 3, 0.30, 0.30), (1 / 3, 0.10, 0.60), (1 / 3, 0.60, 0.10))


def sample_discrete(key, cpt, y):
    """Draw one code per row from CPT columns ``cpt[:, y_r]`` (cpt: (M, c) probabilities)."""
    logits = jnp.log(jnp.asarray(cpt))[:, y].T  # (n, M)
    return jax.random.categorical(key, logits, axis=-1).astype(jnp.int32)


@partial(jax.jit, static_argnames=("n_train", "n_test", "n_irrelevant", "n_redundant"))
def make_fig1(key, n_train=1000, n_test=3000, n_irrelevant=0, n_redundant=0):
    r"""The Fig. 1–2 scenario of the fsNB paper.

    Three classes with equal prior; X1 has CPT columns (0.8, 0.1, 0.1), (1/3, 1/3, 1/3),
    (1/3, 1/3, 1/3) and discriminates class 1 from the others; X2 and X3 share the CPT with columns
    (1/3, 1/3, 1/3), (0.3, 0.1, 0.6), (0.3, 0.6, 0.1) and separate classes 2 and 3 (eq 12). Then
    ``n_irrelevant`` 3-state predictors whose CPT column (one Dirichlet(1, 1, 1) draw per predictor)
    is the same for every class, and ``n_redundant`` exact copies of X1 ("fully redundant",
    redundant with the first non-noisy predictor as in the paper's Fig. 2).

    Returns:
      dict with codes_train (n_train, 3 + n_irrelevant + n_redundant), y_train, codes_test,
      y_test, and values_* of width 0. Column order: X1, X2, X3, irrelevant..., redundant...
    """
    n = n_train + n_test
    k_y, k1, k2, k3, k_irr_p, k_irr = jax.random.split(key, 6)
    y = jax.random.randint(k_y, (n,), 0, 3)
    cpt1 = jnp.asarray(FIG1_CPT_X1)
    cpt23 = jnp.asarray(FIG1_CPT_X23)
    x1 = sample_discrete(k1, cpt1, y)
    x2 = sample_discrete(k2, cpt23, y)
    x3 = sample_discrete(k3, cpt23, y)
    cols = [x1[:, None], x2[:, None], x3[:, None]]
    if n_irrelevant:
        probs = jax.random.dirichlet(k_irr_p, jnp.ones(3), (n_irrelevant,))  # (k, 3)
        irr = jax.random.categorical(k_irr, jnp.log(probs)[None], axis=-1, shape=(n, n_irrelevant))
        cols.append(irr.astype(jnp.int32))
    if n_redundant:
        cols.append(jnp.repeat(x1[:, None], n_redundant, axis=1))
    codes = jnp.concatenate(cols, axis=1).astype(jnp.int32)
    return _split(codes, jnp.zeros((n, 0)), y.astype(jnp.int32), n_train)


def _split(codes, values, y, n_train):
    return {
        "codes_train": codes[:n_train],
        "values_train": values[:n_train],
        "y_train": y[:n_train],
        "codes_test": codes[n_train:],
        "values_test": values[n_train:],
        "y_test": y[n_train:],
    }


#: Calibrated constants of the Table-1 generator (see `make_table1`).
TABLE1_DEFAULTS = {
    "dirichlet_base": 1.0,
    "dirichlet_raised": 6.0,
    "v2_copy_prob": 0.5,
    "v3_copy_prob": 0.9,
    "v3_common_source": 1.0,
    "continuous_noise_std": 0.05,
}
_V2_MODES = ("paper", "partial")


@partial(jax.jit, static_argnames=("scenario", "n_train", "n_test", "v2_mode"))
def make_table1(
    key,
    scenario="DR",
    n_train=300,
    n_test=3000,
    *,
    v2_mode="paper",
    dirichlet_base=TABLE1_DEFAULTS["dirichlet_base"],
    dirichlet_raised=TABLE1_DEFAULTS["dirichlet_raised"],
    v2_copy_prob=TABLE1_DEFAULTS["v2_copy_prob"],
    v3_copy_prob=TABLE1_DEFAULTS["v3_copy_prob"],
    v3_common_source=TABLE1_DEFAULTS["v3_common_source"],
    continuous_noise_std=TABLE1_DEFAULTS["continuous_noise_std"],
):
    r"""One data set of a Table-1 scenario of the fsNB paper (§7.1): DI, CI, DR or CR.

    p = 20 predictors, J = 3 classes with π = (1/3, 1/3, 1/3), N = ``n_train`` + ``n_test`` rows.

    * V1 (3 non-noisy predictors). Discrete (M = 3): column θ_ij ~ Dir(c_j) where c_j has every
      component equal to ``dirichlet_base`` except component j (mod 3), which is
      ``dirichlet_raised`` — "all equal except one, which is different for each j".
      Continuous: μ_ij ~ U(−2, 2), σ_ij = 0.75.
    * V2 (7 relevant, partly redundant predictors) share one CPT (drawn like a V1 CPT) or one set of
      Gaussian parameters, and are first drawn independently given the class. Then
      ``v2_mode="paper"`` (the paper's sentence read literally): going left to right, each V2 value
      is set, with probability 1/2 each, to its left neighbour's current value (X3 of V1 for the
      first) or to its right neighbour's independent draw (the first V3 predictor for the last).
      ``v2_mode="partial"``: with probability ``v2_copy_prob`` a value is replaced by the
      independent draw of a V2 neighbour (X_{i−1} or X_{i+1}, 1/2 each), otherwise kept.
    * V3 (10 fully noisy predictors). Irrelevant (DI, CI): discrete CPT columns all equal to one
      Dir(1, 1, 1) draw; continuous μ_ij = m_i ~ U(−2, 2), σ = 0.75. Redundant (DR, CR): drawn as
      irrelevant, then with probability ``v3_copy_prob`` (0.9 in the paper) replaced by the value of
      a V1 predictor (plus N(0, ``continuous_noise_std``²) noise when continuous). The source is
      one V1 predictor drawn per V3 predictor, or, with probability ``v3_common_source`` per data
      set, one common V1 predictor for all ten.

    The paper leaves the Dirichlet parameters, the V3 source rule and the continuous noise open.
    Every constant except ``v2_mode`` is a traced argument, so a calibration sweep compiles once.
    The calibration (``experiments/calibrate_table1.py``: 100 data sets per scenario, NB with
    Laplace smoothing on discrete data and MLE Gaussians on continuous data) chose the defaults in
    `TABLE1_DEFAULTS`; its results are in ``experiments/results/calibrate_table1.json``.

    Returns:
      dict: codes_/values_/y_ train and test arrays, and ``noisy`` (20,) bool (True on V3).
    """
    if scenario not in ("DI", "CI", "DR", "CR"):
        raise ValueError(f"scenario must be one of 'DI', 'CI', 'DR', 'CR'; got {scenario!r}")
    if v2_mode not in _V2_MODES:
        raise ValueError(f"v2_mode must be one of {_V2_MODES}; got {v2_mode!r}")
    discrete = scenario[0] == "D"
    redundant = scenario[1] == "R"
    n = n_train + n_test
    p1, p2, p3 = 3, 7, 10
    keys = jax.random.split(key, 13)
    y = jax.random.randint(keys[0], (n,), 0, 3)

    if discrete:
        base = dirichlet_base + (dirichlet_raised - dirichlet_base) * jnp.eye(3)

        def draw_cpt(k):  # (M=3, c=3) columns ~ Dir(c_j)
            return jax.vmap(lambda kk, a: jax.random.dirichlet(kk, a))(
                jax.random.split(k, 3), base
            ).T

        cpt_v1 = jax.vmap(draw_cpt)(jax.random.split(keys[1], p1))  # (p1, M, c)
        cpt_v2 = draw_cpt(keys[2])
        v1 = jax.vmap(lambda k, cpt: sample_discrete(k, cpt, y), out_axes=1)(
            jax.random.split(keys[3], p1), cpt_v1
        )
        v2 = jax.vmap(lambda k: sample_discrete(k, cpt_v2, y), out_axes=1)(
            jax.random.split(keys[4], p2)
        )
        marg = jax.random.dirichlet(keys[5], jnp.ones(3), (p3,))  # (p3, M)
        v3 = jax.random.categorical(keys[6], jnp.log(marg)[None], axis=-1, shape=(n, p3)).astype(
            jnp.int32
        )
    else:
        mu_v1 = jax.random.uniform(keys[1], (p1, 3), minval=-2.0, maxval=2.0)
        mu_v2 = jax.random.uniform(keys[2], (3,), minval=-2.0, maxval=2.0)
        v1 = mu_v1.T[y] + 0.75 * jax.random.normal(keys[3], (n, p1))
        v2 = mu_v2[y][:, None] + 0.75 * jax.random.normal(keys[4], (n, p2))
        m = jax.random.uniform(keys[5], (p3,), minval=-2.0, maxval=2.0)
        v3 = m[None, :] + 0.75 * jax.random.normal(keys[6], (n, p3))

    if redundant:
        common = jax.random.bernoulli(keys[12], v3_common_source)
        src = jnp.where(
            common,
            jax.random.randint(keys[9], (), 0, p1),
            jax.random.randint(keys[9], (p3,), 0, p1),
        )
        copy3 = jax.random.bernoulli(keys[10], v3_copy_prob, (n, p3))
        source = v1[:, src]
        if not discrete:
            source = source + continuous_noise_std * jax.random.normal(keys[11], (n, p3))
        v3 = jnp.where(copy3, source, v3)

    left = jax.random.bernoulli(keys[8], 0.5, (n, p2))
    if v2_mode == "paper":
        cols = []
        prev = v1[:, -1]
        for i in range(p2):  # seven columns: a static unrolled scan
            right_val = v2[:, i + 1] if i + 1 < p2 else v3[:, 0]
            prev = jnp.where(left[:, i], prev, right_val)
            cols.append(prev)
        v2 = jnp.stack(cols, axis=1)
    else:
        copy = jax.random.bernoulli(keys[7], v2_copy_prob, (n, p2))
        idx = jnp.arange(p2)
        go_right = jnp.where(idx == 0, True, jnp.where(idx == p2 - 1, False, ~left))
        neighbour = jnp.where(go_right, jnp.minimum(idx + 1, p2 - 1), jnp.maximum(idx - 1, 0))
        v2 = jnp.where(copy, jnp.take_along_axis(v2, neighbour, axis=1), v2)

    X = jnp.concatenate([v1, v2, v3], axis=1)
    if discrete:
        codes, values = X.astype(jnp.int32), jnp.zeros((n, 0))
    else:
        codes, values = jnp.zeros((n, 0), jnp.int32), X
    out = _split(codes, values, y.astype(jnp.int32), n_train)
    out["noisy"] = jnp.arange(p1 + p2 + p3) >= p1 + p2
    return out


def make_table1_batch(key, scenario="DR", n_datasets=100, n_train=300, n_test=3000, **kwargs):
    """``n_datasets`` Table-1 data sets from one vmapped call; every array gains a leading axis.

    Returns:
      (data, n_states): the batched dict, and the static n_states tuple ((3,)*20 for discrete
      scenarios, () for continuous ones).
    """
    keys = jax.random.split(key, n_datasets)
    data = jax.vmap(lambda k: make_table1(k, scenario, n_train, n_test, **kwargs))(keys)
    n_states = (3,) * 20 if scenario[0] == "D" else ()
    return data, n_states
