"""chapters/practical_recipe_measured reads its runs from chapters/data; they cannot drift.

``tools/train_recipe.py`` (``make recipe``) writes them in a few minutes of one core.  These
tests re-derive one run of each part with the script's own code and compare with what is
committed, and check that the file holds every run the chapter reads.
"""

import pytest
from threadpoolctl import threadpool_limits

from rbm.datasets import bars_and_stripes

from tool_scripts import assert_close, load_tool, read_cache

# Every run here is CD-k, which draws from the model. Measured spread of the re-derived values from
# the cache (OpenBLAS SkylakeX, Haswell, and Sandybridge with NumPy's SIMD dispatch at its
# baseline; November 2026): 1.7e-12 relative at most in the settings, batch and equal-sweeps runs (2000
# to 3000 updates), 1.7e-9 in the search run's 6000 updates (p of the patterns at the end; 1.3e-10
# absolute). A 1e-12 nudge of one starting weight moves them by 3.0e-9 and 1.8e-7 relative: the
# runs are not chaotic at these checkpoints (a chaotic one moves by tenths of a nat), but a
# processor that rounds otherwise may move them more than these three did, so rtol 1e-8 (a factor
# 6000 above the spread, 3 above the nudge's response) and SEARCH_RTOL 1e-6 (600 and 5).
RTOL = 1e-8
SEARCH_RTOL = 1e-6

tr = load_tool("train_recipe")


@pytest.fixture(scope="module")
def cache():
    return read_cache("practical_recipe")


def test_the_cache_holds_every_run(cache):
    assert set(cache["settings"]) == set(tr.SETTINGS)
    assert all(len(row["final"]) == len(tr.SEEDS) == len(row["activity"])
               for row in cache["settings"].values())
    assert set(cache["batch_rates"]) == {
        f"{size} | {rate}" for rate in tr.BATCH_RATES
        for size in ["full batch"] + [f"batch {b}" for b in tr.BATCH_SIZES]}
    assert set(cache["search"]) == {f"{rate} | {seed}" for rate in tr.SEARCH_RATES
                                    for seed in tr.SEARCH_SEEDS}
    checkpoints = tr.SEARCH_UPDATES // tr.SEARCH_EVERY + 1
    assert all(len(run["log_likelihood"]) == checkpoints for run in cache["search"].values())
    assert set(cache["equal_sweeps"]) == {f"CD-{k} | {s}" for k in (1, 10)
                                          for s in tr.SWEEP_SEEDS}


@pytest.mark.parametrize("name", ["base", "batch 7, eta scaled", "sparsity 0.1, cost 1"])
def test_a_settings_run_is_reproduced(cache, name):
    seed = 2
    with threadpool_limits(1, user_api="blas"):
        final, activity = tr.run_setting(bars_and_stripes(3), seed,
                                         **dict(tr.BASE, **tr.SETTINGS[name]))
    assert_close(final, cache["settings"][name]["final"][seed], "final", rtol=RTOL)
    assert_close(activity, cache["settings"][name]["activity"][seed], "activity", rtol=RTOL)


def test_a_scaled_rate_run_and_a_4x4_batch_run_are_reproduced(cache):
    with threadpool_limits(1, user_api="blas"):
        scaled = tr.run_setting(bars_and_stripes(3), 5, **dict(
            tr.BASE, learning_rate=0.4, batch_size=2, epochs=tr.UPDATES, scale_rate=True))[0]
        bars4 = tr.run_setting(bars_and_stripes(4), 5, **dict(
            tr.BASE, batch_size=tr.BARS4_BATCH))[0]
    assert_close(scaled, cache["batch_rates"]["batch 2 | 0.4"][5], "scaled", rtol=RTOL)
    assert_close(bars4, cache["bars4_batches"]["batches of 10"][5], "bars4", rtol=RTOL)


@pytest.mark.slow
def test_a_search_run_is_reproduced(cache):
    with threadpool_limits(1, user_api="blas"):
        run = tr.search_run(0.3, 4)
    cached = cache["search"]["0.3 | 4"]
    for key in ("log_likelihood", "p_patterns_1200", "p_patterns_end"):
        assert_close(run[key], cached[key], key, rtol=SEARCH_RTOL)


def test_an_equal_sweeps_run_is_reproduced(cache):
    with threadpool_limits(1, user_api="blas"):
        curve = tr.equal_sweeps_run(10, 4)
    assert_close(curve, cache["equal_sweeps"]["CD-10 | 4"], "CD-10 | 4", rtol=RTOL)
