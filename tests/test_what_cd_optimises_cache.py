"""chapters/what_cd_optimises reads its grid of bounds and its further runs from chapters/data.

``tools/what_cd_optimises.py`` (``make cdopt``) writes them.  These tests check that the
file holds every model and snapshot the chapter reads, and re-derive two models of the
grid and one snapshot of the further runs with the script's own code.
"""

import pytest
from threadpoolctl import threadpool_limits

from rbm import exact
from rbm.datasets import bars_and_stripes

from tool_scripts import assert_close, load_tool, read_cache

# Everything here is exact (the cache holds no run that draws). Measured spread of the re-derived
# values from the cache (OpenBLAS SkylakeX, Haswell, and Sandybridge with NumPy's SIMD dispatch at
# its baseline; November 2026): at most 3.3e-15 absolute in the grid's bias and TV (whose smallest
# entries are rounding), 1.1e-11 relative in the snapshot's ratios; a 1e-12 nudge of one weight of
# the snapshot's start moves the ratios by 1.6e-12. atol 1e-12 leaves a factor 300 on the grid;
# rtol 1e-9 a factor 90 on the ratios.
RTOL = 1e-9

tool = load_tool("what_cd_optimises")


@pytest.fixture(scope="module")
def cache():
    return read_cache("what_cd_optimises")


def test_the_cache_holds_every_model_and_snapshot(cache):
    assert cache["bounds"]["k"] == list(tool.K_GRID)
    assert [(m["n_hidden"], m["scale"], m["seed"]) for m in cache["bounds"]["models"]] == [
        (h, s, seed) for h in tool.GRID_HIDDEN for s in tool.GRID_SCALES
        for seed in tool.GRID_SEEDS]
    assert all(len(m["bias"]) == len(m["tv"]) == len(tool.K_GRID)
               for m in cache["bounds"]["models"])
    assert list(cache["rate_band"]) == [tool.run_key(h, seed, u)
                                        for h, seed, stops in tool.RATE_RUNS for u in stops]
    # each snapshot keeps at least k = 5 (where |D_k| is far above rounding)
    assert all(1 <= len(r) <= len(tool.RATE_K) for r in cache["rate_band"].values())


@pytest.mark.parametrize("index", [0, 19])
def test_a_model_of_the_grid_is_reproduced(cache, index):
    cached = cache["bounds"]["models"][index]
    model = tool.grid_model(cached["n_hidden"], cached["scale"], cached["seed"])
    with threadpool_limits(1, user_api="blas"):
        row = tool.bounds_row(model, bars_and_stripes(3))
    # entries of the bias below 1e-12 are rounding: compare them absolutely
    assert_close(row["bias"], cached["bias"], "bias", rtol=RTOL, atol=1e-12)
    for key in ("tv", "dobrushin", "lambda_2", "l1", "chi", "flip_energy"):
        assert_close(row[key], cached[key], key, rtol=RTOL, atol=1e-14)


def test_a_snapshot_of_the_further_runs_is_reproduced(cache):
    q = exact.empirical_distribution(bars_and_stripes(3))
    with threadpool_limits(1, user_api="blas"):
        (model,) = tool.ascent_snapshots(6, 3, (600,), q).values()
        ratios = tool.over_lambda(model, q)
    assert_close(ratios, cache["rate_band"][tool.run_key(6, 3, 600)], "ratios", rtol=RTOL)
