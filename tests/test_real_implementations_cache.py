"""chapters/checking_an_implementation reads chapters/data/real_implementations.json; it cannot drift.

``tools/check_real_implementations.py`` (``make real-implementations``) writes it with
libraries that are not in requirements.txt (torch, rbms, boltzmannclean, jax).  These tests
check the file's structure, and re-derive its scikit-learn rows (scikit-learn is in
requirements.txt) with the script's own code, without the other libraries; of the JAX rows,
what needs no JAX (the exact values, the code shown, the diagnosis), and the rest only where
JAX is installed.
"""

import importlib.util

import numpy as np
import pytest

from tool_scripts import ROOT, assert_close, load_tool, read_cache

# Measured spread of the re-derived scikit-learn values (its sampled PCD rows included) from the
# cache (OpenBLAS SkylakeX, Haswell, and Sandybridge with NumPy's SIMD dispatch at its baseline;
# November 2026): 2.4e-15 relative at most, 2.1e-12 under a 1e-12 nudge of one starting weight; rtol
# 1e-9 leaves a factor 4e5 above the spread.
RTOL = 1e-9

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
    assert {library for library, _ in defects} == {
        "scikit-learn", "boltzmannclean", "rbms", "learnergy", "paysage", "pydbm",
        "kaiwu-torch-plugin"}
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
        for key in ("largest_z", "found", "expected", "z", "smallest_p"):
            if old.get(key) is not None:
                assert_close(new[key], old[key], (new["check"], key), rtol=RTOL)
    for new, old in zip(rows, cached["checks"]):
        if new.get("classification") != "defect of the library":
            continue
        short = new["evidence"]["values"]
        for measured in short.values():  # the deterministic update equals the hand formula
            assert measured["hidden bias update"] == pytest.approx(
                measured["by hand lr (r - C) / (2 r)"], abs=1e-15)
            assert measured["spread"] == 0.0
        assert short == old["evidence"]["values"]
    # the one call: its own object across calls, batches of 4 rows with 4 chains on 6 rows;
    # the short batch of 2 rows fails, and the message names the model term's weight
    own = next(row for row in rows if row["check"] == "persistent trainer")
    assert own["one_call"] and not own["passed"] and "batches of 2 rows" in own["message"]
    assert own["slip"] == "the model term weighted by chains / rows (4/2)"


def test_the_script_refuses_an_unclassified_failure(monkeypatch):
    def rows():
        return [{"check": "a failing check", "passed": False, "message": "off"}]
    monkeypatch.setitem(cri.ROWS, "scikit-learn", rows)
    with pytest.raises(SystemExit, match="failed unclassified"):
        cri.main(("scikit-learn",))


def pinned(path):
    """The names of the packages a requirements file pins (``name==version`` lines)."""
    return {line.split("==")[0].strip().lower() for line in (ROOT / path).read_text().splitlines()
            if "==" in line and not line.lstrip().startswith("#")}


def test_the_third_party_libraries_are_not_needed_here():
    for name in ("torch", "rbms", "boltzmannclean", "jax", "jaxlib"):
        assert name not in pinned("requirements.txt")
        assert name in pinned("tools/requirements-real-implementations.txt")
    for name in ("learnergy", "paysage", "pydbm", "kaiwu-torch-plugin"):
        assert name not in pinned("requirements.txt")
        assert name in pinned("tools/requirements-real-implementations-nodeps.txt")


def test_the_tempering_law_by_hand_is_reproduced_and_exact_without_tempering(cache):
    stiff = cri.rbm.RBM.random(4, 4, scale=2.0, bias_scale=1.0, rng=3)
    law, exact = cri.tempering_law_by_hand(stiff.W, stiff.b, stiff.c, [1.0, 1.0])
    assert law == pytest.approx(exact, abs=1e-12)  # both replicas at beta = 1: p(v) itself
    law, exact = cri.tempering_law_by_hand(stiff.W, stiff.b, stiff.c, [0.5, 1.0])
    row = next(r for r in cache["libraries"]["rbms"]["checks"] if "tempering" in r["check"])
    assert law == pytest.approx(row["evidence"]["stationary law by hand"], abs=1e-12)
    assert exact == pytest.approx(row["evidence"]["p(v) by hand"], abs=1e-12)
    assert abs(law - exact).max() > 0.01


def jax_entry(cache):
    return cache["libraries"]["jax"], {row["check"]: row for row in cache["libraries"]["jax"]
                                       ["checks"]}


def test_the_jax_code_and_adapter_shown_are_the_scripts(cache):
    entry, _ = jax_entry(cache)
    assert entry["code"] == cri.inspect.getsource(cri.jax_rbm)
    assert entry["adapter"] == cri.inspect.getsource(cri.wrap_jax)
    assert entry["code_lines"] == cri.code_lines(cri.jax_rbm)
    assert entry["wrapper_lines"] == cri.code_lines(cri.wrap_jax) < 20


def test_each_library_is_checked_by_one_call_through_its_adapter(cache):
    """The rows of the one call come first, one per check that applies, then the rows more;
    every adapter shown is the script's."""
    for library, entry in cache["libraries"].items():
        assert entry["adapter"] == cri.inspect.getsource(cri.WRAPPERS[library]), library
        marks = [bool(row.get("one_call")) for row in entry["checks"]]
        n = sum(marks)
        assert n >= 2 and marks == [True] * n + [False] * (len(marks) - n), library
        names = [row["check"] for row in entry["checks"][:n]]
        assert len(set(names)) == n and set(names) <= set(CHECK_NAMES), (library, names)


# The names of the one call's checks (rbm.testing.suite.plan_checks), in its order.
CHECK_NAMES = ("conditionals", "joint energy", "free energy", "free energy from your energy",
               "log Z", "log-likelihood", "pseudo-likelihood", "sampler of h | v",
               "sampler of v | h", "Gibbs step", "stationary law", "log Z estimate",
               "gradient estimate", "training step", "persistent estimator",
               "pseudo-likelihood estimate", "persistent trainer")


def test_the_jax_float32_failure_is_rounding_re_derived_without_jax(cache):
    """The failing row's exact value and its diagnosis, from the cache and rbm alone."""
    _, rows = jax_entry(cache)
    assert [name for name, row in rows.items() if not row["passed"]] == [
        "free energy, float32 (JAX's default), float64's tolerance, its x64 run as float64"]
    row = next(row for row in rows.values() if not row["passed"])
    state = np.array([float(x) for x in row["entry"][2:-1].split(", ")])
    assert_close(float(cri.MODEL.free_energy(state[None])[0]), row["expected"], "expected",
                 rtol=RTOL)
    assert np.float32(row["found"]) == row["found"]  # a float32 number...
    spacing = float(np.spacing(np.float32(abs(row["expected"]))))
    assert 0 < abs(row["found"] - row["expected"]) <= 8 * spacing  # ...off by a few spacings
    assert "the rounding of float32 arithmetic" in row["message"]
    assert "float64 counterpart passes" in row["message"]
    evidence = row["evidence"]
    assert evidence["largest difference from F by hand, x64"] <= 1e-12
    assert 1e-9 < evidence["largest difference from F by hand, float32"] <= 1e-5


@pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                    reason="jax is not installed here (it is in .venv-real, from "
                           "tools/requirements-real-implementations.txt): the JAX rows are "
                           "re-derived only there")
def test_the_jax_rows_are_reproduced(cache):
    _, cached = jax_entry(cache)
    assert_rows_reproduced(cri.jax_rows(), cached, ("largest_z", "found", "expected"), RTOL)


def assert_rows_reproduced(rows, cached, keys, rtol):
    """The re-run rows: the same checks, verdicts, and numbers within rtol."""
    assert [r["check"] for r in rows] == list(cached)
    for new in rows:
        old = cached[new["check"]]
        assert new["passed"] == old["passed"], new["check"]
        for key in keys:
            if old.get(key) is not None:
                assert_close(new[key], old[key], (new["check"], key), rtol=rtol)


# ---------------------------------------------------------------- the four libraries of issue 46
NEW = ("learnergy", "paysage", "pydbm", "kaiwu-torch-plugin")


def rows_of(cache, library):
    return {row["check"]: row for row in cache["libraries"][library]["checks"]}


def test_the_adapters_shown_are_the_scripts_and_short(cache):
    for library in NEW:
        entry = cache["libraries"][library]
        assert entry["adapter"] == cri.inspect.getsource(cri.WRAPPERS[library]), library
        assert entry["wrapper_lines"] == cri.wrapper_lines(library) <= 20, library
    assert cri.wrapper_lines("learnergy") <= 15 and cri.wrapper_lines("paysage") <= 15


def test_each_defect_is_named_or_said_untested(cache):
    """The causes the review found, as the cached messages name them."""
    named = {
        ("pydbm", "conditionals"): "computed alone",
        ("pydbm", "training step, a true Bernoulli unit, momentum 0, dropout 0"):
            "summed over the rows",
        ("pydbm", "training step, a true Bernoulli unit, SGD(momentum=0.9), dropout 0"):
            "-6 times the expected value",
        ("paysage", "free energy as TAPLogLikelihood computes it"): "hidden bias c is added twice",
        ("paysage", "free energy as TAPLogLikelihood computes it, hidden biases + 10"):
            "hidden bias c is added twice",
        ("learnergy", "conditionals, DropoutRBM, dropout 0.5 (its default)"):
            "Two calls on the same input returned different values",
        ("learnergy", "gibbs step, RBM(temperature=2)"): "temperature",
        ("kaiwu-torch-plugin", "conditionals of a float64 model (get_hidden, get_visible)"):
            "float64 in, float32 out",
        ("learnergy", "free energy (energy), hidden biases + 20.3"): "replaced by x",
        ("rbms", "free energy (compute_energy_visibles), hidden biases + 10"): "replaced by x",
        ("rbms", "free energy (compute_energy_visibles), weights x 40"): "replaced by x",
        ("rbms", "free energy (compute_energy_visibles), float32, hidden biases + 10"):
            "replaced by x",
        ("scikit-learn", "persistent trainer"): "weighted by chains / rows (4/2)",
        ("boltzmannclean", "free energy"): "computed alone",
        ("jax", "free energy, float32 (JAX's default), float64's tolerance, its x64 run as "
                "float64"): "the rounding of float32 arithmetic",
    }
    untested = {("paysage", "pcd's persistent chains across calls, beta_std 0.6 (the trainer's "
                            "default)"),
                ("rbms", "parallel tempering's beta = 1 replica (sample_state, "
                         "swap_configurations), betas 1/2 and 1, weight scale 2"),
                ("pydbm", "training step, a true Bernoulli unit, momentum 0, dropout 0.5 (its "
                          "default)")}
    for (library, check), phrase in named.items():
        row = rows_of(cache, library)[check]
        assert not row["passed"] and phrase in row["message"], (library, check, row["message"])
    for library, check in untested:
        row = rows_of(cache, library)[check]
        assert not row["passed"] and "No tested cause fits" in row["message"], row["message"]
        assert "restarted at the batch:" not in row["message"]
    for library in cache["libraries"]:  # no message of an old version: |z| of a passing
        for row in cache["libraries"][library]["checks"]:  # verdict, a generic list
            assert "largest |z|" not in row["message"] and "Common causes" not in row["message"]


def test_pydbm_conditionals_re_derived_without_pydbm(cache):
    """Its LogisticFunction by hand (NumPy) fails the check with the cached message."""
    row = rows_of(cache, "pydbm")["conditionals"]
    by_hand = cri.pydbm_logistic_by_hand
    new = cri.run(cri.testing.check_conditionals, cri.MODEL,
                  prob_h_given_v=lambda v: by_hand(v @ cri.W + cri.C),
                  prob_v_given_h=lambda h: by_hand(h @ cri.W.T + cri.B))
    assert new["message"] == row["message"]
    assert row["evidence"]["largest difference from the library, by hand"] <= 1e-15
    assert row["evidence"]["row 5 alone"] != row["evidence"]["row 5 in the batch of 16"]


def test_paysage_tap_free_energy_re_derived_without_paysage(cache):
    """Its cached value is F of the model with the hidden biases doubled, in float32."""
    for check, model in (("free energy as TAPLogLikelihood computes it", cri.MODEL),
                         ("free energy as TAPLogLikelihood computes it, hidden biases + 10",
                          cri.hot(10.0))):
        row = rows_of(cache, "paysage")[check]
        state = np.array([float(x) for x in row["entry"][2:-1].split(", ")])
        doubled = cri.rbm.RBM(model.W, model.b, 2 * model.c)
        assert_close(float(model.free_energy(state[None])[0]), row["expected"], check,
                     rtol=RTOL)
        assert row["found"] == pytest.approx(float(doubled.free_energy(state[None])[0]),
                                             rel=1e-6)
        assert row["evidence"]["largest difference from F by hand with 2c"] <= 1e-5


def test_learnergy_softplus_threshold_re_derived_without_torch(cache):
    row = rows_of(cache, "learnergy")["free energy (energy), hidden biases + 20.3"]
    model = cri.hot(20.3)
    state = np.array([float(x) for x in row["entry"][2:-1].split(", ")])
    x = state @ model.W + model.c
    dropped = np.log1p(np.exp(-x[x > 20])).sum()
    assert_close(float(model.free_energy(state[None])[0]), row["expected"], "F", rtol=RTOL)
    assert row["found"] - row["expected"] == pytest.approx(dropped, rel=1e-4)
    assert row["evidence"]["largest difference from F by hand less the dropped terms"] <= 1e-12


def softplus_cut_by_hand(model, threshold, strict):
    """F in NumPy with softplus(x) written as x past `threshold` (x > t if `strict`, torch's
    Softplus; x >= t otherwise, rbms' cut)."""
    def free_energy(v):
        x = v @ model.W + model.c
        past = x > threshold if strict else x >= threshold
        return -v @ model.b - np.where(past, x, np.logaddexp(0.0, x)).sum(axis=1)
    return free_energy


@pytest.mark.parametrize("library, check, model, threshold", [
    ("learnergy", "free energy (energy), hidden biases + 20.3", cri.hot(20.3), 20.0),
    ("rbms", "free energy (compute_energy_visibles), hidden biases + 10", cri.SHIFTED, 10.0),
    ("rbms", "free energy (compute_energy_visibles), weights x 40", cri.BIG, 10.0)])
def test_the_softplus_cuts_are_re_derived_without_the_libraries(cache, library, check, model,
                                                                threshold):
    """The cut by hand in NumPy fails the check with the cached message, whose fitted
    threshold holds the library's."""
    row = rows_of(cache, library)[check]
    new = cri.run(cri.testing.check_free_energy,
                  softplus_cut_by_hand(model, threshold, library == "learnergy"), model)
    assert new["message"] == row["message"] and new["slip"] == row["slip"]
    low, high = (float(x) for x in row["slip"].split("(")[1].rstrip("]").split(", "))
    assert low < threshold <= high


def test_the_boltzmannclean_batch_free_energy_is_re_derived_without_it(cache):
    """Its sum of the softplus over every row of the batch, by hand: the cached message."""
    row = rows_of(cache, "boltzmannclean")["free energy"]
    new = cri.run(cri.testing.check_free_energy, lambda v: -v @ cri.B - np.logaddexp(
        0.0, v @ cri.W + cri.C).sum(), cri.MODEL)
    assert new["message"] == row["message"] and row["slip"] == "rows not independent"


def test_kaiwu_float32_conditionals_re_derived_without_kaiwu(cache):
    row = rows_of(cache, "kaiwu-torch-plugin")[
        "conditionals of a float64 model (get_hidden, get_visible)"]
    exact = 1 / (1 + np.exp(-(cri.STATES @ cri.W + cri.C)))
    assert np.float32(row["found"]) == row["found"]  # a float32 number
    assert row["found"] in exact.astype(np.float32).astype(float)
    assert row["evidence"]["float32 values"]


# rbms imports code that calls torch.jit.script, deprecated in torch 2.13 (a warning of
# torch's, not of rbms' results)
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("library", NEW + ("boltzmannclean", "rbms"))
def test_the_new_libraries_rows_are_reproduced(cache, library):
    if importlib.util.find_spec(library.split("-")[0] if library != "kaiwu-torch-plugin"
                                else "kaiwu") is None:
        pytest.skip(f"{library} is not installed here (it is in .venv-real, from "
                    "tools/requirements-real-implementations-nodeps.txt)")
    # rtol 1e-6: float32 libraries and PyTorch's kernels round differently across processors
    assert_rows_reproduced(cri.ROWS[library](), rows_of(cache, library),
                           ("found", "expected", "smallest_p"), 1e-6)
