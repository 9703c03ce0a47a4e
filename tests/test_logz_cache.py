"""chapters/estimating_log_z reads its comparison of log Z estimators from chapters/data; it
cannot drift.

``tools/logz_estimators.py`` (``make logz``) writes it in 10-20 minutes of two cores, from the
models of ``make digits``.  These tests check that the file holds every run, and re-derive the
shortest forward and reverse annealing paths of one model and repeat (chains that draw from
the model at every temperature) with the script's own code.
"""

import pytest

from tool_scripts import assert_close, load_tool, read_cache

le = load_tool("logz_estimators")

# Measured spread of the re-derived log-weights and estimates from the cache (OpenBLAS SkylakeX,
# Haswell, and Sandybridge with NumPy's SIMD dispatch at its baseline; November 2026): 3.9e-14 relative
# at most (8.1e-13 absolute, in a chain's log-weight); rtol 1e-9 leaves a factor 2e4.  (The models
# are read from the cache, so no starting weight is nudged; the paths draw from them throughout.)
RTOL = 1e-9


@pytest.fixture(scope="module")
def cache():
    return read_cache("logz_estimators")


def test_the_cache_holds_every_run(cache):
    assert cache["settings"]["models"] == list(le.MODELS)
    found = {(r["model"], r["repeat"], r["sweeps"], r["kind"]) for r in cache["runs"]}
    assert found == {(m, rep, s, kind) for m in le.MODELS for rep in range(le.REPEATS)
                     for s in le.SWEEPS for kind in le.PATHS
                     if kind != "reverse" or not m.startswith("784x25")}
    for r in cache["runs"]:
        assert len(r["log_weights"]) == le.N_CHAINS
        assert r["total_sweeps"] == le.N_CHAINS * r["sweeps"]


def test_the_shortest_paths_are_reproduced(cache):
    name, repeat = le.MODELS[0], 0
    records = le.one_task((name, repeat, ("forward", "reverse"), (le.SWEEPS[0],)))
    assert [r["kind"] for r in records] == ["forward", "reverse"]
    for new in records:
        (old,) = [r for r in cache["runs"] if (r["model"], r["repeat"], r["sweeps"], r["kind"])
                  == (name, repeat, le.SWEEPS[0], new["kind"])]
        assert new["exact_log_z"] == old["exact_log_z"]
        assert_close(new["log_z_base"], old["log_z_base"], "log_z_base", rtol=RTOL)
        assert_close(new["log_weights"], old["log_weights"], (new["kind"], "log_weights"),
                     rtol=RTOL)
        for label, estimate in new["estimates"].items():
            for key in ("log_z", "std_error"):
                assert_close(estimate[key], old["estimates"][label][key],
                             (new["kind"], label, key), rtol=RTOL)
