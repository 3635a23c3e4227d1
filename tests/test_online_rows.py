"""The fused row-by-row path of online WNB (Gaussian summaries, batch 1) against the generic
block step it replaces, with missing values, both update orders, optax and no learning."""

import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax import lax

from jaxnb.stream import online
from jaxnb.stream.online import OnlineNB, OnlineWeightedNB


def _data(seed=0, n=96, p=5, c=3, missing=0.1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    X = rng.normal(size=(n, p)) * (1 + y[:, None]) + y[:, None] * np.linspace(1, -1, p)[None, :]
    X[rng.random(X.shape) < missing] = np.nan
    return X, y


def _generic(est, X, y, c):
    """The pre-fusion path: `lax.scan` of `_block_step` over one-row blocks."""
    cfg = est._config()
    state = online.init_state(est._new_summary(c, X.shape[1]), cfg.optimizer)
    blocks = (
        jnp.asarray(X[:, None, :]),
        jnp.asarray(y[:, None], jnp.int32),
        jnp.ones((len(y), 1), bool),
    )
    rate = jnp.asarray(est.learning_rate) if cfg.plain_sgd and cfg.learn else None
    state, out = lax.scan(
        lambda s, b: online._block_step(cfg, s, b, rate, test=True), state, blocks
    )
    return state, np.asarray(out).reshape(-1)


@pytest.mark.parametrize("order", ["summary_first", "weights_first"])
@pytest.mark.parametrize("opt", [None, "sgd", "adam"])
def test_row_path_equals_block_step(order, opt):
    X, y = _data()
    optimizer = {None: None, "sgd": optax.sgd(0.05), "adam": optax.adam(1e-2)}[opt]
    est = OnlineWeightedNB(
        learning_rate=0.05, optimizer=optimizer, order=order, warmup=3, var_smoothing=1e-2
    )
    ok = est.prequential_correct(X, y, classes=[0, 1, 2])
    state, ok_ref = _generic(est, X, y, 3)
    np.testing.assert_array_equal(ok, ok_ref)
    np.testing.assert_allclose(est.weights_, np.asarray(state.weight), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(est.bias_, np.asarray(state.bias), rtol=1e-9, atol=1e-12)
    assert int(est.state_.n_steps) == int(state.n_steps) > 10
    for a, b in zip(
        (est.state_.summary.count, est.state_.summary.mean, est.state_.summary.m2),
        (state.summary.count, state.summary.mean, state.summary.m2),
        strict=True,
    ):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-9, atol=1e-9)
    assert np.abs(est.weights_ - 1).max() > 1e-3


def test_fast_sgd_equals_optax_sgd():
    X, y = _data(seed=1, missing=0.0)
    a = OnlineWeightedNB(learning_rate=0.05, warmup=2).fit(X, y)
    b = OnlineWeightedNB(optimizer=optax.sgd(0.05), warmup=2).fit(X, y)
    assert a._cfg.plain_sgd and not b._cfg.plain_sgd
    np.testing.assert_allclose(a.weights_, b.weights_, rtol=1e-10)
    np.testing.assert_allclose(a.bias_, b.bias_, rtol=1e-10)


def test_row_path_no_learning_and_block_sizes():
    X, y = _data(seed=2, n=300)
    one = OnlineNB(summary_chunk=1, var_smoothing=1e-3)
    ok = one.prequential_correct(X, y, classes=[0, 1, 2])
    _, ok_ref = _generic(one, X, y, 3)
    np.testing.assert_array_equal(ok, ok_ref)
    # any split of the stream (segments of 8..256 rows, groups of Welford rows) gives one pass
    parts = OnlineWeightedNB(learning_rate=0.05, warmup=3)
    for s in range(0, 300, 37):
        parts.partial_fit(X[s : s + 37], y[s : s + 37], classes=[0, 1, 2])
    whole = OnlineWeightedNB(learning_rate=0.05, warmup=3).fit(X, y)
    np.testing.assert_allclose(parts.weights_, whole.weights_, rtol=1e-9)
    np.testing.assert_allclose(parts.predict_proba(X), whole.predict_proba(X), rtol=1e-9)


def test_segment_sizes_cover_the_blocks_with_two_powers_of_two_at_most():
    """Full segments of one cap (rows per segment <= `_SEGMENT_ROWS`), then the remainder padded
    to the next power of two; never more padding than the remainder (or 8 blocks)."""
    for chunk, cap in ((1, 32768), (64, 512), (256, 128), (5000, 8)):
        assert online._segment_sizes(3 * cap, chunk) == [cap] * 3
        for n in [*range(1, 300), cap - 1, cap + 1, 2 * cap + 9, 5 * cap - 3]:
            sizes = online._segment_sizes(n, chunk)
            rest = n % cap or cap
            assert sizes[:-1] == [cap] * (len(sizes) - 1), (chunk, n, sizes)
            assert sum(sizes[:-1]) + rest == n
            last = sizes[-1]
            assert last & (last - 1) == 0 and 8 <= last <= cap
            assert last - rest < max(rest, 8), (chunk, n, sizes)
    assert online._segment_sizes(0, 1) == []


def test_a_fit_runs_one_or_two_scan_shapes_and_equals_its_pieces(monkeypatch):
    """A fit of 600 rows scanned segments of 512, 64, 16 and 8 rows (a binary decomposition):
    four programs to compile, 3.1 s before the first fit returned (0.9 s with one). Now one
    padded segment; a stream longer than a segment adds full segments of one size."""
    seen = []
    real = online.run_stream

    def spy(cfg, state, X, *args, **kw):
        seen.append(X.shape[0])
        return real(cfg, state, X, *args, **kw)

    monkeypatch.setattr(online, "run_stream", spy)
    X, y = _data(seed=4, n=600, p=3)
    whole = OnlineWeightedNB(learning_rate=0.05, warmup=3).fit(X, y)
    assert seen == [1024]
    ok = OnlineWeightedNB(learning_rate=0.05, warmup=3).prequential_correct(X, y)
    assert seen == [1024, 1024]
    # the padded rows change nothing: the same model as the stream in pieces of other sizes
    parts = OnlineWeightedNB(learning_rate=0.05, warmup=3)
    for s in range(0, 600, 150):
        parts.partial_fit(X[s : s + 150], y[s : s + 150], classes=[0, 1, 2])
    assert seen[2:] == [256] * 4
    np.testing.assert_allclose(parts.weights_, whole.weights_, rtol=1e-9)
    np.testing.assert_allclose(parts.predict_proba(X), whole.predict_proba(X), rtol=1e-9)
    assert 0.4 < ok.mean() < 1 and int(whole.state_.n_steps) > 500
    seen.clear()
    cap = online._SEGMENT_ROWS
    Xl, yl = _data(seed=5, n=2 * cap + 5, p=2, missing=0.0)
    OnlineNB(summary_chunk=1).fit(Xl, yl)
    assert seen == [cap, cap, 8]


def test_set_params_between_partial_fits_applies_or_refuses():
    # the training settings were frozen at the first call: a learning rate set to 0 kept moving
    # the weights at the old rate
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 120)
    X = rng.normal(size=(120, 3)) + y[:, None]
    a = OnlineWeightedNB(learning_rate=0.05, warmup=3).partial_fit(X[:60], y[:60], [0, 1, 2])
    w = np.array(a.weights_)
    a.set_params(learning_rate=0.0).partial_fit(X[60:], y[60:])
    np.testing.assert_array_equal(a.weights_, w)
    ref = OnlineWeightedNB(learning_rate=0.05, warmup=3).partial_fit(X[:60], y[:60], [0, 1, 2])
    ref.set_params(learning_rate=0.1).partial_fit(X[60:], y[60:])
    both = OnlineWeightedNB(learning_rate=0.05, warmup=3).partial_fit(X[:60], y[:60], [0, 1, 2])
    both.set_params(learning_rate=0.05).partial_fit(X[60:], y[60:])
    assert not np.allclose(ref.weights_, both.weights_)  # the new rate took effect
    # settings baked into the state are refused with the fix
    g = OnlineWeightedNB(summary="gkclass").partial_fit(X[:60], y[:60], classes=[0, 1, 2])
    for change in ({"summary": "cpid"}, {"summary_size": 50}, {"optimizer": optax.adam(0.01)}):
        with pytest.raises(ValueError, match="call fit"):
            OnlineWeightedNB(summary="gkclass").partial_fit(
                X[:60], y[:60], classes=[0, 1, 2]
            ).set_params(**change).partial_fit(X[60:], y[60:])
    g.set_params(summary="cpid").fit(X, y)  # fit starts again with the new settings
    assert type(g.state_.summary).__name__ == "CPiD"


def test_float32_overflow_is_refused_before_the_state():
    import jax

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2))
    y = rng.integers(0, 2, 50)
    X[10, 0] = 1e39
    with jax.enable_x64(False):
        with pytest.raises(ValueError, match="column 0 holds 1e\\+39, beyond the range of float32"):
            OnlineNB().fit(X, y)
    assert np.isfinite(np.asarray(OnlineNB().fit(X, y).state_.summary.mean)).all()  # float64


@pytest.mark.parametrize("layout", [{}, {"batch_size": 4, "summary_chunk": 8}])
def test_learning_rates_share_compilations_and_vmap(layout, compiles):
    """The default SGD's rate is a traced argument of the compiled stream: a second estimator
    with another rate compiles nothing (each new rate compiled ~6 programs, ~6 s, before), and
    one `vmap` over rates of `run_stream` gives each rate's estimator."""
    import jax

    X, y = _data(seed=4, n=64, missing=0.0)
    rates = [0.02, 0.1, 0.3]
    OnlineWeightedNB(learning_rate=rates[0], warmup=2, **layout).fit(X, y).predict(X[:4])
    before = compiles.n
    fits = [OnlineWeightedNB(learning_rate=r, warmup=2, **layout).fit(X, y) for r in rates]
    [m.predict(X[:4]) for m in fits]
    assert compiles.n == before
    assert np.abs(fits[0].weights_ - fits[2].weights_).max() > 1e-3  # the rates took effect
    est = fits[0]
    chunk = est._chunk()
    blocks = (
        jnp.asarray(X.reshape(-1, chunk, X.shape[1])),
        jnp.asarray(y.reshape(-1, chunk), jnp.int32),
        jnp.ones((len(y) // chunk, chunk), bool),
    )
    start = online.init_state(est._new_summary(3, X.shape[1]), est._cfg.optimizer)
    swept = jax.vmap(lambda r: online.run_stream(est._cfg, start, *blocks, rate=r)[0])(
        jnp.asarray(rates)
    )
    for k, m in enumerate(fits):
        np.testing.assert_allclose(swept.weight[k], m.weights_, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(swept.bias[k], m.bias_, rtol=1e-10, atol=1e-12)


def test_run_stream_checks_its_rate():
    X, y = _data(n=16, missing=0.0)
    est = OnlineWeightedNB(learning_rate=0.1).fit(X, y)
    start = online.init_state(est._new_summary(3, X.shape[1]), est._cfg.optimizer)
    blocks = (jnp.asarray(X[:, None]), jnp.asarray(y[:, None]), jnp.ones((16, 1), bool))
    with pytest.raises(ValueError, match="needs rate="):
        online.run_stream(est._cfg, start, *blocks)
    with pytest.raises(ValueError, match="rate must be a scalar"):
        online.run_stream(est._cfg, start, *blocks, rate=[0.1, 0.2])
    with pytest.raises(ValueError, match="rate must be >= 0"):
        online.run_stream(est._cfg, start, *blocks, rate=-0.1)
    for bad in (np.nan, True, "0.1"):
        with pytest.raises(ValueError, match="rate must be a finite number"):
            online.run_stream(est._cfg, start, *blocks, rate=bad)
    adam = OnlineWeightedNB(optimizer=optax.adam(0.01)).fit(X, y)
    with pytest.raises(ValueError, match="has its own rates"):
        online.run_stream(adam._cfg, adam.state_, *blocks, rate=0.1)
    # no learning (OnlineNB): no rate needed
    nb = OnlineNB().fit(X, y)
    online.run_stream(nb._cfg, start, *blocks)
