"""`python -m jaxnb` (compare, methods) and `jaxnb.datasets.load_csv`."""

import numpy as np
import pytest

from jaxnb import NaiveBayes
from jaxnb.cli import main
from jaxnb.datasets import load_csv
from jaxnb.model_selection import stratified_folds

CSV = """colour, size, weight, label
red, 3, 1.5, a
blue, 10, 2.5, b
red, 2, ?, a
green, 3, 0.5, b
blue, 10, 2.0, b
, 2, 1.0, a
red, 3, 1.7, a
green, 10, 2.2, b
blue, 2, 0.9, a
red, 10, 2.8, b
green, 3, 1.1, a
blue, 2, 2.6, b
"""


@pytest.fixture
def csv_path(tmp_path):
    path = tmp_path / "toy.csv"
    path.write_text(CSV)
    return path


def test_load_csv_kinds_codes_and_missing(csv_path):
    t = load_csv(csv_path)
    assert t.names == ["colour", "size", "weight"]
    assert t.y.tolist()[:3] == ["a", "b", "a"]
    # auto: non-numeric columns are discrete, numeric ones continuous
    np.testing.assert_array_equal(t.discrete, [True, False, False])
    assert t.categories[0] == ("blue", "green", "red") and t.categories[1] is None
    np.testing.assert_array_equal(t.X[:6, 0], [2, 0, 2, 1, 0, -1])  # '' is missing: code -1
    assert np.isnan(t.X[2, 2]) and t.X[0, 2] == 1.5  # '?' is missing: NaN
    assert t.n_states == [3]
    # a numeric column listed as discrete: its numbers are labels, in numeric order
    t2 = load_csv(csv_path, target="label", discrete=["colour", "size"])
    assert t2.categories[1] == ("2", "3", "10")
    np.testing.assert_array_equal(t2.X[:3, 1], [1, 2, 0])
    assert t2.estimator_params["n_states"] == [3, 3]
    np.testing.assert_array_equal(t2.estimator_params["discrete"], [True, True, False])
    assert load_csv(csv_path, target=-1).y.tolist() == t.y.tolist()
    t3 = load_csv(csv_path, target=1)  # by index: 'size' is the class
    assert t3.names == ["colour", "weight", "label"] and t3.y[1] == "10"
    np.testing.assert_array_equal(t3.discrete, [True, False, True])


def test_load_csv_other_separators(csv_path, tmp_path, capsys):
    tsv = tmp_path / "toy.tsv"
    tsv.write_text(CSV.replace(",", "\t"))
    a, b = load_csv(csv_path), load_csv(tsv, delimiter="\t")
    np.testing.assert_array_equal(a.X, b.X)
    assert a.y.tolist() == b.y.tolist() and a.names == b.names
    with pytest.raises(ValueError, match="delimiter must be one character"):
        load_csv(tsv, delimiter="tab")
    rc = main(
        ["compare", "--data", str(tsv), "--sep", "tab", "--methods", "NB", "--missing", "ignore"]
    )
    assert rc == 0 and "toy.tsv" in capsys.readouterr().out


def test_load_csv_errors(csv_path, tmp_path):
    with pytest.raises(ValueError, match="target 'lab' is not a column"):
        load_csv(csv_path, target="lab")
    with pytest.raises(ValueError, match="not numeric"):
        load_csv(csv_path, discrete="none")
    with pytest.raises(ValueError, match="not predictor columns"):
        load_csv(csv_path, discrete=["shape"])
    with pytest.raises(ValueError, match="discrete must be"):
        load_csv(csv_path, discrete="some")
    with pytest.raises(ValueError, match="missing cells"):
        load_csv(csv_path, target="weight")
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,b,c\n1,2,x\n1,2\n")
    with pytest.raises(ValueError, match=r"rows \[3\]"):
        load_csv(ragged)


def test_fitting_a_loaded_table_knows_every_label(csv_path):
    t = load_csv(csv_path)
    # train without any 'green' row: the code is still a state, so predicting it is no error
    train = t.X[:, 0] != 1
    m = NaiveBayes(missing="ignore", **t.estimator_params).fit(t.X[train], t.y[train])
    assert list(m.n_states_) == [3]
    assert m.predict(t.X[~train]).shape == ((~train).sum(),)


def _table_rows(out):
    return [line.split() for line in out.splitlines() if line.startswith(("DR ", "Diabetes", "/"))]


def test_compare_on_a_csv_with_cv_equals_a_direct_loop(csv_path, capsys):
    rc = main(
        ["compare", "--data", str(csv_path), "--methods", "NB", "--cv", "3", "--missing", "ignore"]
    )
    out, err = capsys.readouterr()
    assert rc == 0
    assert "12 rows, 2 classes, 1 discrete (D) and 2 continuous (C)" in err
    (row,) = [r for r in _table_rows(out) if "NB" in r]
    t = load_csv(csv_path)
    folds = stratified_folds(t.y, 3, 0)
    errs = []
    for k in range(3):
        m = NaiveBayes(missing="ignore", **t.estimator_params)
        m.fit(t.X[folds != k], t.y[folds != k])
        errs.append(1.0 - m.score(t.X[folds == k], t.y[folds == k]))
    err_col = row.index("NB") + 1
    assert float(row[err_col]) == pytest.approx(np.mean(errs), abs=5e-5)
    assert float(row[err_col + 1]) == pytest.approx(np.std(errs, ddof=1), abs=5e-5)
    assert "\n3 fits in " in out  # one per fold


def test_compare_on_missing_cells_says_what_to_do(csv_path, capsys):
    # without --missing ignore: one error naming the columns and the option (every method used
    # to fail on its own, with an error about negative codes)
    rc = main(["compare", "--data", str(csv_path), "--methods", "NB"])
    _, err = capsys.readouterr()
    assert rc == 2
    assert "has 2 missing cells in colour, weight; pass --missing ignore" in err
    # with it: the methods without missing-value support are reported as such, not run
    rc = main(
        ["compare", "--data", str(csv_path), "--methods", "NB,CFS+NB,ANB", "--missing", "ignore"]
    )
    out, _ = capsys.readouterr()
    assert rc == 0  # some method ran
    assert "not run: CFS+NB" in out and "does not handle missing values" in out
    assert [r for r in _table_rows(out) if "NB" in r and "CFS+NB" not in r]
    assert [r for r in _table_rows(out) if "ANB" in r]  # ANB drops missing terms too


def test_compare_embedded_and_argument_errors(capsys):
    assert main(["compare", "--methods", "NB", "--quick"]) == 0
    out, _ = capsys.readouterr()
    rows = _table_rows(out)
    assert [r[0] for r in rows] == ["DR", "Diabetes"]
    errors = [float(r[r.index("NB") + 1]) for r in rows]
    assert all(0.0 < e < 0.5 for e in errors)
    assert main(["compare", "--cv", "3"]) == 2
    assert "require --data" in capsys.readouterr().err
    assert main(["compare", "--methods", "NoSuchNB"]) == 2
    assert "unknown method 'NoSuchNB'" in capsys.readouterr().err
    assert main(["compare", "--data", "/no/such/file.csv"]) == 2
    assert main(["methods"]) == 0
    listed = capsys.readouterr().out
    assert "CFS+NB" in listed and "fsNB" in listed


def test_compare_reports_requested_methods_the_data_kind_excludes(tmp_path, capsys):
    path = tmp_path / "tiny.csv"
    path.write_text("a,b,cls\n" + "x,p,no\ny,q,yes\n" * 5)
    rc = main(["compare", "--data", str(path), "--methods", "SemiNaive"])
    out, _ = capsys.readouterr()
    assert rc == 1  # nothing ran
    assert "not run: SemiNaive" in out and "not discrete" in out


def test_compare_lists_the_methods_it_leaves_out_for_the_data_kind(tmp_path, capsys, monkeypatch):
    # without --methods, a method for other data kinds is not an error, but it is named
    import jaxnb.registry

    listed = ["NB", "SemiNaive", "Parzen", "ANB"]
    monkeypatch.setattr(jaxnb.registry, "available_methods", lambda: listed)
    path = tmp_path / "tiny.csv"
    path.write_text("a,b,cls\n" + "x,p,no\ny,q,yes\n" * 5)
    rc = main(["compare", "--data", str(path)])
    out, _ = capsys.readouterr()
    assert rc == 0
    assert "not run:" not in out
    assert (
        f"skipped on {path} (70%/30%) (discrete data), methods for other kinds: "
        "SemiNaive (continuous), Parzen (continuous, mixed)" in out
    )
    assert "\n2 fits in" in out
    assert [r[r.index("(70%/30%)") + 1] for r in _table_rows(out)] == ["NB", "ANB"]


def test_compare_flags_options_without_effect(csv_path, capsys):
    assert main(["compare", "--cv", "0"]) == 2  # cv=0 is not "no --cv"
    assert "require --data" in capsys.readouterr().err
    assert main(["compare", "--test-size", "0.5"]) == 2
    assert "--test-size require --data" in capsys.readouterr().err
    rc = main(["compare", "--data", str(csv_path), "--cv", "3", "--test-size", "0.5"])
    assert rc == 2 and "--test-size has no effect with --cv" in capsys.readouterr().err


def test_load_csv_byte_order_mark_duplicates_and_bad_target(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes("\ufeffcolour,size,cls\nred,1,a\nblue,2,b\n".encode())
    table = load_csv(path, target="colour")
    assert list(table.names) == ["size", "cls"]
    dup = tmp_path / "dup.csv"
    dup.write_text("x,x,cls\n1,2,a\n3,4,b\n")
    with pytest.raises(ValueError, match=r"column names \['x'\] appear more than once"):
        load_csv(dup)
    with pytest.raises(TypeError, match="target must be a column name or index"):
        load_csv(path, target=True)
    one = tmp_path / "semi.csv"
    one.write_text("a;b;cls\n1;2;x\n3;4;y\n")
    with pytest.raises(ValueError, match="one column only"):
        load_csv(one)


@pytest.mark.parametrize("discrete", ["all", "auto", ["b"]])
def test_load_csv_rejects_columns_without_any_cell(tmp_path, discrete):
    """An all-missing column coded as discrete had 0 states (a fit failed later, far from the
    cause); as continuous it was all NaN. Either way the loader names it now."""
    path = tmp_path / "empty.csv"
    path.write_text("a,b,cls\n1,?,x\n2,,y\n3,NA,x\n")
    with pytest.raises(ValueError, match=r"columns \['b'\] have no non-missing cell"):
        load_csv(path, discrete=discrete)


def test_compare_notes_two_valued_columns_and_identifiers(tmp_path, capsys):
    """0/1 columns read as numbers are Gaussians under --discrete auto (SPECT Heart: NB error
    0.475 as Gaussians, 0.225 as categories); the run says so and names the option. A label
    column with a value per row (Zoo's animal names) is named as a likely identifier."""
    rng = np.random.default_rng(0)
    y = np.arange(40) % 2
    flags = np.where(rng.random(40) < 0.8, y, 1 - y)
    rows = "\n".join(
        f"{f},{v:.3f},{c}" for f, v, c in zip(flags, rng.normal(size=40), y, strict=True)
    )
    path = tmp_path / "bin.csv"
    path.write_text("flag,x,label\n" + rows + "\n")
    assert main(["compare", "--data", str(path), "--methods", "NB"]) == 0
    _, err = capsys.readouterr()
    assert "at most two values are modelled as Gaussians: flag; --discrete all" in err
    assert main(["compare", "--data", str(path), "--methods", "NB", "--discrete", "flag"]) == 0
    _, err = capsys.readouterr()
    assert "modelled as Gaussians" not in err
    assert "identifier" not in err
    path.write_text(
        "id,flag,x,label\n" + "\n".join(f"r{i},{r}" for i, r in enumerate(rows.splitlines()))
    )
    assert main(["compare", "--data", str(path), "--methods", "NB"]) == 0
    _, err = capsys.readouterr()
    assert "every row has its own value in id (an identifier?)" in err
