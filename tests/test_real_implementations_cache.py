"""chapters/checking_an_implementation reads chapters/data/real_implementations.json; it cannot drift.

``tools/check_real_implementations.py`` (``make real-implementations``) writes it with
libraries that are not in requirements.txt (torch, rbms, boltzmannclean).  These tests check
the file's structure, and re-derive its scikit-learn rows (scikit-learn is in
requirements.txt) with the script's own code, without the other libraries.
"""

import pytest

from tool_scripts import ROOT, RTOL, load_tool, read_cache

cri = load_tool("check_real_implementations")

CLASSES = {"defect of the library", "convention difference", "limitation of the oracle"}


@pytest.fixture(scope="module")
def cache():
    return read_cache("real_implementations")


def test_the_cache_holds_every_library_and_classifies_every_failure(cache):
    assert set(cache["libraries"]) == set(cri.ROWS) == set(cri.WRAPPERS)
    assert len(cache["libraries"]) >= 3
    for library, entry in cache["libraries"].items():
        assert isinstance(entry["version"], str) and entry["version"]
        assert isinstance(entry["wrapper_lines"], int) and 0 < entry["wrapper_lines"] < 100
        assert entry["checks"], library
        for row in entry["checks"]:
            assert isinstance(row["passed"], bool) and row["message"] and row["check"]
            if row["passed"]:
                assert row["message"].startswith("verdict:"), row
                assert "classification" not in row
            else:
                assert not row["message"].startswith("verdict:"), row
                assert row["classification"] in CLASSES, row
                assert row["evidence"], row
                assert "found" in row and "expected" in row
            if "diagnosis" in row:  # a failure whose message names a wrong cause
                assert row["diagnosis"]["classification"] in CLASSES and row["diagnosis"]["what"]


def test_the_wrapper_sizes_are_those_of_the_script(cache):
    # counted from the source, so the libraries themselves are not needed
    for library, entry in cache["libraries"].items():
        assert entry["wrapper_lines"] == cri.wrapper_lines(library), library


def test_every_defect_is_shown_by_hand(cache):
    # a defect's evidence holds a computation of its own that differs from the exact value
    defects = [(library, row) for library, entry in cache["libraries"].items()
               for row in entry["checks"] if row.get("classification") == "defect of the library"]
    assert {library for library, _ in defects} == {"scikit-learn", "boltzmannclean", "rbms"}
    for library, row in defects:
        assert isinstance(row["evidence"], dict) and row["evidence"]["what"], (library, row)


def test_the_scikit_learn_rows_are_reproduced(cache):
    rows = cri.sklearn_rows()
    cached = cache["libraries"]["scikit-learn"]
    assert cached["wrapper_lines"] == cri.wrapper_lines("scikit-learn")
    assert [r["check"] for r in rows] == [r["check"] for r in cached["checks"]]
    for new, old in zip(rows, cached["checks"]):
        assert new["passed"] == old["passed"], new["check"]
        assert new.get("classification") == old.get("classification")
        for key in ("largest_z", "found", "expected", "z"):
            if old.get(key) is not None:
                assert new[key] == pytest.approx(old[key], rel=RTOL), (new["check"], key)
    short = rows[-1]["evidence"]["values"]
    for measured in short.values():  # the deterministic update equals the hand formula
        assert measured["hidden bias update"] == pytest.approx(
            measured["by hand lr (r - C) / (2 r)"], abs=1e-15)
        assert measured["spread"] == 0.0
    assert short == cached["checks"][-1]["evidence"]["values"]


def test_the_script_refuses_an_unclassified_failure(monkeypatch):
    def rows():
        return [{"check": "a failing check", "passed": False, "message": "off"}]
    monkeypatch.setitem(cri.ROWS, "scikit-learn", rows)
    with pytest.raises(SystemExit, match="failed unclassified"):
        cri.main(("scikit-learn",))


def test_the_third_party_libraries_are_not_needed_here():
    requirements = (ROOT / "requirements.txt").read_text()
    for name in ("torch", "rbms", "boltzmannclean"):
        assert name not in requirements
        assert name in (ROOT / "tools/requirements-real-implementations.txt").read_text()


def test_the_tempering_law_by_hand_is_reproduced_and_exact_without_tempering(cache):
    stiff = cri.rbm.RBM.random(4, 4, scale=2.0, bias_scale=1.0, rng=3)
    law, exact = cri.tempering_law_by_hand(stiff.W, stiff.b, stiff.c, [1.0, 1.0])
    assert law == pytest.approx(exact, abs=1e-12)  # both replicas at beta = 1: p(v) itself
    law, exact = cri.tempering_law_by_hand(stiff.W, stiff.b, stiff.c, [0.5, 1.0])
    row = next(r for r in cache["libraries"]["rbms"]["checks"] if "tempering" in r["check"])
    assert law == pytest.approx(row["evidence"]["stationary law by hand"], abs=1e-12)
    assert exact == pytest.approx(row["evidence"]["p(v) by hand"], abs=1e-12)
    assert abs(law - exact).max() > 0.01
