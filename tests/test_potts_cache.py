"""chapters/other_unit_types reads its longer Potts-dReLU runs from chapters/data; they cannot drift.

``tools/train_potts.py`` (``make potts``) writes them in about five minutes of one core.  These
tests re-derive the first segment (100 epochs) of both long runs and one seed's summary with the
script's own code and compare with what is committed.
"""

import pytest
from threadpoolctl import threadpool_limits

from tool_scripts import assert_close, load_tool, read_cache

# Exact gradients (the cache holds no run that draws). Measured spread of the re-derived
# log-likelihoods after 100 epochs from the cache (OpenBLAS SkylakeX, Haswell, and Sandybridge with
# NumPy's SIMD dispatch at its baseline; November 2026): 6.0e-12 relative, 3.0e-12 under a 1e-12 nudge
# of one starting weight; rtol 1e-9 leaves a factor 170 (the whole 1500 epochs re-run under
# SkylakeX move by 4.2e-8 at most, 1.7e-11 at the end: not chaotic). The seed's correlation and
# share: 1.7e-13 (2.3e-13 under the nudge), under SEED_RTOL a factor 4e5 (the chapter reads them to
# two digits).
RTOL = 1e-9
SEED_RTOL = 1e-7

tp = load_tool("train_potts")


@pytest.fixture(scope="module")
def cache():
    return read_cache("potts_drelu")


@pytest.mark.parametrize("n_hidden", ["2", "3"])
def test_first_segment_of_the_long_runs_is_rederived(cache, n_hidden):
    with threadpool_limits(1):
        got = tp.long_run(int(n_hidden), epochs=tp.EVERY)
    run = cache["long"][n_hidden]
    assert run["epochs"][:2] == got["epochs"] == [0, tp.EVERY]
    assert_close(got["train"], run["train"][:2], "train", rtol=RTOL)
    assert_close(got["held"], run["held"][:2], "held", rtol=RTOL)


def test_the_runs_are_what_the_chapter_states(cache):
    """The cache holds 7 seeds and runs of 1500 epochs, with masses that are probabilities."""
    assert [s["k"] for s in cache["seeds"]] == list(range(7))
    for run in cache["long"].values():
        assert run["epochs"][-1] == tp.LONG_EPOCHS
        assert 0 <= run["same_letter"] and run["complementary"] + run["same_letter"] <= 1


def test_one_seed_is_rederived(cache):
    k = 1
    X, family, held = tp.data(k)
    with threadpool_limits(1):
        model = tp.start(X, 2, k)
        tp.train(model, X, tp.SEED_EPOCHS, k)
    corr, share = tp.units(model, X, family)
    seed = cache["seeds"][k]
    assert_close([corr, share], [seed["family_corr"], seed["contact_share"]],
                 "family_corr, contact_share", rtol=SEED_RTOL)
