"""Every contraction of the package asks for full float32 precision (`jaxnb._matmul`).

On an NVIDIA H200, float32 matrix products at XLA's default precision run in TF32 (10 mantissa
bits): the k-fold class counts of 3 rows came out as 3.0007 and float32 CPTs sat 2e-4 from float64.
XLA:CPU computes float32 products exactly either way, so these tests check the requests, not the
values: the source holds no contraction that bypasses the helpers, and the traced programs carry
``Precision.HIGHEST``.
"""

import ast
import pathlib

import jax
import jax.numpy as jnp
import numpy as np

import jaxnb
from jaxnb import _matmul

PACKAGE = pathlib.Path(jaxnb.__file__).parent
# NumPy-only functions, where `@` is NumPy's product (file, enclosing function)
NUMPY_MATMUL = {("estimators_structure.py", "_var_floor"), ("stream/simulate.py", "bayes_predict")}
CONTRACTIONS = {"einsum", "matmul", "dot", "tensordot", "inner", "vdot"}


class _Scan(ast.NodeVisitor):
    def __init__(self, rel):
        self.rel, self.funcs, self.found = rel, ["<module>"], []

    def visit_FunctionDef(self, node):
        self.funcs.append(node.name)
        self.generic_visit(node)
        self.funcs.pop()

    def visit_BinOp(self, node):
        if isinstance(node.op, ast.MatMult) and (self.rel, self.funcs[-1]) not in NUMPY_MATMUL:
            self.found.append(f"{self.rel}:{node.lineno} `@` in {self.funcs[-1]}")
        self.generic_visit(node)

    def visit_Call(self, node):
        f = node.func
        if (
            isinstance(f, ast.Attribute)
            and f.attr in CONTRACTIONS
            and isinstance(f.value, ast.Name)
            and f.value.id in ("jnp", "lax")
        ):
            self.found.append(f"{self.rel}:{node.lineno} {f.value.id}.{f.attr}")
        self.generic_visit(node)


def _offending_sites(root):
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel != "_matmul.py":
            scan = _Scan(rel)
            scan.visit(ast.parse(path.read_text()))
            found += scan.found
    return found


def test_no_contraction_bypasses_the_precision_helpers():
    """Use `jaxnb._matmul.einsum` / `matmul`; NumPy `@` goes in NUMPY_MATMUL."""
    assert _offending_sites(PACKAGE) == []


def test_the_scan_sees_a_planted_product(tmp_path):
    """The scan above can fail: jnp products in a module are reported, NumPy ones allowed."""
    (tmp_path / "stream").mkdir()
    (tmp_path / "a.py").write_text(
        "import jax.numpy as jnp\n\n\ndef f(a, b):\n"
        "    def g():\n        return a @ b\n\n"
        "    return jnp.einsum('ij,jk', a, b) + jnp.dot(a, g())\n"
    )
    (tmp_path / "stream" / "simulate.py").write_text("def bayes_predict(z, d):\n    return z @ d\n")
    assert _offending_sites(tmp_path) == [
        "a.py:6 `@` in g",
        "a.py:8 jnp.einsum",
        "a.py:8 jnp.dot",
    ]


def _dot_precisions(fn, *args):
    jaxpr = jax.make_jaxpr(fn)(*args)
    out = []

    def walk(jx):
        for eqn in jx.eqns:
            if eqn.primitive is jax.lax.dot_general_p:
                out.append(eqn.params["precision"])
            for value in eqn.params.values():
                for sub in value if isinstance(value, tuple | list) else (value,):
                    if hasattr(sub, "eqns"):  # a Jaxpr
                        walk(sub)
                    elif hasattr(getattr(sub, "jaxpr", None), "eqns"):  # a ClosedJaxpr
                        walk(sub.jaxpr)

    walk(jaxpr.jaxpr)
    return out


def test_helpers_request_highest_precision():
    a = jnp.ones((4, 3), jnp.float32)
    highest = (jax.lax.Precision.HIGHEST,) * 2
    assert _dot_precisions(_matmul.matmul, a, a.T) == [highest]
    assert _dot_precisions(lambda x: _matmul.einsum("ij,kj->ik", x, x), a) == [highest]

    # products inside control flow are found (the walk enters sub-programs), and a plain jnp
    # product there shows as the default precision (None): the check can fail
    def looped(product):
        return lambda x: jax.lax.fori_loop(0, 2, lambda i, z: product(z, z.T)[:, :3], x)

    assert _dot_precisions(looped(_matmul.matmul), a) == [highest]
    assert _dot_precisions(looped(jnp.matmul), a) == [None]


def test_naive_bayes_fit_and_predict_trace_only_highest_products(monkeypatch):
    """Mixed discrete + Gaussian NB in float32: every product traced asks for HIGHEST."""
    seen = []
    bind = jax.lax.dot_general_p.bind

    def recording_bind(*args, **params):
        seen.append(params["precision"])
        return bind(*args, **params)

    monkeypatch.setattr(jax.lax.dot_general_p, "bind", recording_bind)
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 41)
    X = np.column_stack([rng.integers(0, 4, (41, 2)), rng.normal(size=(41, 3)) + y[:, None]])
    with jax.enable_x64(False):
        model = jaxnb.NaiveBayes(discrete=[0, 1]).fit(X, y)
        proba = model.predict_proba(X)
    assert proba.dtype == np.float32
    assert len(seen) >= 3  # the counts, the Gaussian sums and the scores are products
    assert set(seen) == {(jax.lax.Precision.HIGHEST,) * 2}
