"""The core recipe's cache (``chapters/data/core_recipe.json``, ``make core-recipe``) cannot
drift: the grids it holds are the script's, every cell is there, sampled CD runs (4x4 and 3x3
bars and stripes, with and without weight decay), a PCD run and sign runs are re-derived with
the script's own code, and the sentences the pages will state are asserted on the table (each
fails on the opposite).
"""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from tool_scripts import assert_close, assert_grid_complete, load_tool, read_cache

rc = load_tool("run_core_recipe")
ex = rc.ex

# Every re-derived run draws from the model, so its values depend on rounding.  Measured
# (November 2026) from the cache's nudged runs (one starting weight + 1e-12): over updates
# 0-6000 the nudge moves CD-1 at rate 0.1, seed 0 by 1.2e-10 relative at most and PCD-1 (100
# chains) at 0.03, seed 0 by 3.4e-11; rtol 1e-9 is a factor 8 and 30 above.  Later the runs
# are chaotic at some seeds (CD-1 at 0.1, seed 3: 2e-6 by update 6000 and 4.5e-3 by 24,000;
# PCD-1 at 0.03, seed 3: 0.19 by 24,000: a draw flips), so no 4x4 run is compared beyond 6000.
# On 3x3 no run is chaotic: over all 24,000 updates the nudge moves CD-1 at 0.1 by 4.9e-11
# relative at most (seeds 0-4) and CD-1 with decay 1e-3 at 0.1 by 3.1e-11, so the 3x3 runs are
# compared over the whole budget at the same rtol (a factor 20 and 30 above).
RTOL = 1e-9
# The sign runs: a nudge moves the value after 50 updates and the dip by 1e-13 nats at most
# (2e-14 relative; none chaotic within 1000 updates); rtol 1e-9 leaves room for another
# processor's rounding, and the updates of the dip and of the recovery are compared exactly.
SIGN_RTOL = 1e-9
B44, B33 = "bars and stripes 4x4", "bars and stripes 3x3"
RUNS = [(B44, "CD-1", 0.1, 0, 6000), (B44, "PCD-1 (100 chains)", 0.03, 0, 6000),
        (B33, "CD-1", 0.1, 0, 24000), (B33, "CD-1, decay 0.001", 0.1, 0, 24000)]
#: CD-10 at its best rate over 600 updates (the sweeps section; filled from the cache)
SWEEPS_BY_6000 = (0.4, 0.9)


@pytest.fixture(scope="module")
def cache():
    return read_cache(rc.STEM)


@pytest.mark.parametrize("section, grid", [(None, rc.GRID), ("chains_and_steps", rc.CHAINS_GRID)])
def test_the_cache_holds_the_scripts_grids_and_every_cell(cache, section, grid):
    assert_grid_complete(cache if section is None else cache[section], grid, ex)


def test_the_sign_section_has_every_run(cache):
    sign = cache["sign"]
    assert (sign["rate"], sign["updates"], sign["at"]) == (rc.SIGN_RATE, rc.SIGN_UPDATES,
                                                           rc.SIGN_AT)
    keys = {(r["data_set"], r["estimator"], r["seed"], r["sign"], r["nudge"])
            for r in sign["runs"]}
    assert keys == {(d, e, s, sign_, nudge) for d in rc.SIGN_DATA for e in rc.SIGN_ESTIMATORS
                    for s in rc.SIGN_SEEDS
                    for sign_, nudge in ((1, 0.0), (1, rc.GRID.nudge), (-1, 0.0))}


def cached(table, data_set, arm, rate, seed, up_to):
    (cell,) = [c for c in table["cells"] if c["nudge"] == 0 and
               (c["data_set"], c["arm"], c["rate"], c["seed"]) == (data_set, arm, rate, seed)]
    return [v for u, v in zip(table["checkpoints"], cell["log_likelihood"]) if u <= up_to]


@pytest.mark.parametrize("data_set, arm, rate, seed, up_to", RUNS)
def test_a_sampled_run_is_reproduced(cache, data_set, arm, rate, seed, up_to):
    checkpoints = [u for u in cache["checkpoints"] if u <= up_to]
    with threadpool_limits(1, user_api="blas"):
        run = ex.run_cell(data_set, rc.GRID.arms[arm], rate, seed, checkpoints)
    assert_close(run["log_likelihood"], cached(cache, data_set, arm, rate, seed, up_to),
                 f"{data_set} {arm} {rate} {seed}", rtol=RTOL)


def test_a_sign_run_is_reproduced(cache):
    data_set, est, seed = "bars and stripes 3x3", "CD-10", 0
    (row,) = [r for r in cache["sign"]["runs"] if (r["data_set"], r["estimator"], r["seed"],
                                                   r["sign"], r["nudge"]) ==
              (data_set, est, seed, 1, 0.0)]
    values = rc.sign_run(data_set, 10, seed)
    assert_close(values[::10], row["curve"], "sign run curve", rtol=SIGN_RTOL)
    found = rc.dip(values, 1)
    assert (found["dip_at"], found["back"]) == (row["dip_at"], row["back"])
    assert_close([found["at"], found["dip"]], [row["at"], row["dip"]], "dip", rtol=SIGN_RTOL)
    wrong = rc.dip(rc.sign_run(data_set, 10, seed, reversed_sign=True, updates=rc.SIGN_AT), 1)
    (row,) = [r for r in cache["sign"]["runs"] if (r["data_set"], r["estimator"], r["seed"],
                                                   r["sign"]) == (data_set, est, seed, -1)]
    assert_close([wrong["at"]], [row["at"]], "reversed", rtol=SIGN_RTOL)


#: runs that fell after their best window by more than 0.1 nats and the nudge spread, of 10
#: (4x4) or 5 (3x3): (data set, arm, budget) -> counts at rates 0.003, 0.01, 0.03, 0.1, 0.3
FALLS = {
    (B44, "CD-1", 6000): (0, 0, 0, 5, 10),
    (B44, "CD-1", 24000): (0, 0, 9, 10, 10),
    (B44, "CD-10", 6000): (0, 0, 0, 0, 9),
    (B44, "CD-10", 24000): (0, 0, 0, 10, 10),
    (B44, "PCD-1 (100 chains)", 6000): (0, 0, 0, 10, 10),
    (B44, "PCD-1 (100 chains)", 24000): (0, 0, 10, 10, 10),
    (B44, "PCD-1 (14 chains)", 6000): (0, 0, 0, 10, 10),
    (B44, "PCD-1 (14 chains)", 24000): (0, 0, 10, 10, 10),
    (B44, "CD-1, decay 0.0001", 6000): (0, 0, 0, 3, 6),
    (B44, "CD-1, decay 0.0001", 24000): (0, 0, 7, 4, 0),
    (B44, "CD-1, decay 0.001", 6000): (0, 0, 0, 0, 0),
    (B44, "CD-1, decay 0.001", 24000): (0, 0, 0, 0, 1),
    (B33, "CD-1", 6000): (0, 0, 0, 0, 1),
    (B33, "CD-1", 24000): (0, 0, 0, 5, 2),
    (B33, "CD-10", 6000): (0, 0, 0, 0, 1),
    (B33, "CD-10", 24000): (0, 0, 0, 0, 2),
    (B33, "PCD-1 (100 chains)", 6000): (0, 0, 0, 5, 5),
    (B33, "PCD-1 (100 chains)", 24000): (0, 0, 5, 5, 5),
    (B33, "PCD-1 (14 chains)", 6000): (0, 0, 0, 5, 5),
    (B33, "PCD-1 (14 chains)", 24000): (0, 0, 5, 5, 5),
    (B33, "CD-1, decay 0.0001", 6000): (0, 0, 0, 0, 1),
    (B33, "CD-1, decay 0.0001", 24000): (0, 0, 0, 1, 0),
    (B33, "CD-1, decay 0.001", 6000): (0, 0, 0, 0, 1),
    (B33, "CD-1, decay 0.001", 24000): (0, 0, 0, 0, 0),
}


@pytest.mark.parametrize("data_set, arm, budget", sorted(FALLS))
def test_the_rise_and_fall_sentences(cache, data_set, arm, budget, capsys):
    m = len(rc.SEEDS[data_set])
    for rate, n in zip(rc.GRID.rates, FALLS[data_set, arm, budget]):
        ex.assert_falls(cache, arm, rate, data_set=data_set, budget=budget, n=n, m=m)
        with pytest.raises(AssertionError, match="not"):  # the opposite fails
            ex.assert_falls(cache, arm, rate, data_set=data_set, budget=budget,
                            n=0 if n == m else m)
    assert capsys.readouterr().out.count("verdict:") == len(rc.GRID.rates)


@pytest.mark.parametrize("data_set", rc.DATA_SETS)
def test_a_lower_rate_delays_the_fall(cache, data_set):
    """CD-1's, CD-10's and PCD-1's median best window comes later at a lower rate."""
    for arm in rc.ESTIMATORS:
        peaks = [float(np.median(ex.rise_and_fall(cache, arm, r, data_set=data_set,
                                                  budget=24000).peaks))
                 for r in sorted(rc.GRID.rates, reverse=True)]
        assert peaks == sorted(peaks) and peaks[0] < peaks[-1], (arm, peaks)


#: (a, b, data set, budget, value, seeds a was ahead in, margins to one decimal when in all)
SENTENCES = [
    ("CD-10", "CD-1", B44, 6000, "end", 10, (1.1, 1.3)),
    ("CD-10", "CD-1", B44, 6000, "best", 10, (0.9, 1.1)),
    ("CD-10", "CD-1", B44, 24000, "end", 10, (1.2, 1.5)),
    ("CD-10", "CD-1", B44, 24000, "best", 10, (1.1, 1.2)),
    ("CD-10", "CD-1", B33, 6000, "end", 5, (0.2, 0.4)),
    ("CD-10", "CD-1", B33, 6000, "best", 5, (0.2, 0.4)),
    ("CD-10", "CD-1", B33, 24000, "end", 5, (0.4, 0.4)),
    ("CD-10", "CD-1", B33, 24000, "best", 5, (0.4, 0.4)),
    ("CD-10", "PCD-1 (100 chains)", B44, 6000, "end", 10, (1.0, 1.5)),
    ("CD-10", "PCD-1 (100 chains)", B44, 6000, "best", 10, (0.7, 1.0)),
    ("CD-10", "PCD-1 (100 chains)", B44, 24000, "end", 10, (0.3, 0.6)),
    ("CD-10", "PCD-1 (100 chains)", B44, 24000, "best", 10, (0.4, 0.6)),
    ("CD-10", "PCD-1 (100 chains)", B33, 6000, "end", 5, (0.8, 1.3)),
    ("CD-10", "PCD-1 (100 chains)", B33, 6000, "best", 5, (0.3, 0.4)),
    ("CD-10", "PCD-1 (100 chains)", B33, 24000, "end", 5, (0.4, 0.6)),
    ("CD-10", "PCD-1 (100 chains)", B33, 24000, "best", 5, (0.2, 0.3)),
    ("PCD-1 (100 chains)", "CD-1", B44, 6000, "end", 5, None),
    ("PCD-1 (100 chains)", "CD-1", B44, 6000, "best", 10, (0.1, 0.4)),
    ("PCD-1 (100 chains)", "CD-1", B44, 24000, "end", 10, (0.8, 1.0)),
    ("PCD-1 (100 chains)", "CD-1", B44, 24000, "best", 10, (0.5, 0.8)),
    ("PCD-1 (100 chains)", "CD-1", B33, 6000, "end", 0, None),
    ("PCD-1 (100 chains)", "CD-1", B33, 6000, "best", 1, None),
    ("PCD-1 (100 chains)", "CD-1", B33, 24000, "end", 0, None),
    ("PCD-1 (100 chains)", "CD-1", B33, 24000, "best", 5, (0.1, 0.2)),
    ("PCD-1 (100 chains)", "PCD-1 (14 chains)", B44, 6000, "end", 10, (0.2, 0.4)),
    ("PCD-1 (100 chains)", "PCD-1 (14 chains)", B44, 6000, "best", 10, (0.3, 1.1)),
    ("PCD-1 (100 chains)", "PCD-1 (14 chains)", B44, 24000, "end", 10, (0.2, 0.5)),
    ("PCD-1 (100 chains)", "PCD-1 (14 chains)", B44, 24000, "best", 10, (0.2, 0.5)),
    ("PCD-1 (100 chains)", "PCD-1 (14 chains)", B33, 6000, "end", 5, (0.0, 0.5)),
    ("PCD-1 (100 chains)", "PCD-1 (14 chains)", B33, 6000, "best", 5, (0.6, 1.0)),
    ("PCD-1 (100 chains)", "PCD-1 (14 chains)", B33, 24000, "end", 5, (0.1, 0.1)),
    ("PCD-1 (100 chains)", "PCD-1 (14 chains)", B33, 24000, "best", 5, (0.2, 0.5)),
    ("CD-1, decay 0.0001", "CD-1", B44, 6000, "end", 10, (0.1, 0.1)),
    ("CD-1, decay 0.0001", "CD-1", B44, 6000, "best", 10, (0.0, 0.1)),
    ("CD-1, decay 0.0001", "CD-1", B44, 24000, "end", 9, None),
    ("CD-1, decay 0.0001", "CD-1", B44, 24000, "best", 8, None),
    ("CD-1, decay 0.0001", "CD-1", B33, 6000, "end", 5, (0.0, 0.1)),
    ("CD-1, decay 0.0001", "CD-1", B33, 6000, "best", 5, (0.0, 0.2)),
    ("CD-1, decay 0.0001", "CD-1", B33, 24000, "end", 5, (0.2, 0.3)),
    ("CD-1, decay 0.0001", "CD-1", B33, 24000, "best", 5, (0.2, 0.3)),
    ("CD-1, decay 0.001", "CD-1", B44, 6000, "end", 10, (0.9, 1.4)),
    ("CD-1, decay 0.001", "CD-1", B44, 6000, "best", 10, (0.9, 1.1)),
    ("CD-1, decay 0.001", "CD-1", B44, 24000, "end", 10, (1.2, 1.4)),
    ("CD-1, decay 0.001", "CD-1", B44, 24000, "best", 10, (1.0, 1.1)),
    ("CD-1, decay 0.001", "CD-1", B33, 6000, "end", 5, (0.1, 0.3)),
    ("CD-1, decay 0.001", "CD-1", B33, 6000, "best", 5, (0.1, 0.3)),
    ("CD-1, decay 0.001", "CD-1", B33, 24000, "end", 5, (0.3, 0.3)),
    ("CD-1, decay 0.001", "CD-1", B33, 24000, "best", 5, (0.3, 0.3)),
    ("CD-10", "CD-1, decay 0.001", B44, 6000, "end", 8, None),
    ("CD-10", "CD-1, decay 0.001", B44, 6000, "best", 9, None),
    ("CD-10", "CD-1, decay 0.001", B44, 24000, "end", 8, None),
    ("CD-10", "CD-1, decay 0.001", B44, 24000, "best", 9, None),
    ("CD-10", "CD-1, decay 0.001", B33, 6000, "end", 5, (0.0, 0.2)),
    ("CD-10", "CD-1, decay 0.001", B33, 6000, "best", 5, (0.0, 0.2)),
    ("CD-10", "CD-1, decay 0.001", B33, 24000, "end", 5, (0.1, 0.1)),
    ("CD-10", "CD-1, decay 0.001", B33, 24000, "best", 5, (0.1, 0.1)),
]


@pytest.mark.parametrize("a, b, data_set, budget, value, n, by", SENTENCES)
def test_the_estimator_and_decay_sentences_each_at_its_best_rate(cache, a, b, data_set, budget,
                                                                 value, n, by):
    m = len(rc.SEEDS[data_set])
    ex.assert_sentence(cache, a, b, data_set=data_set, budget=budget, n=n, m=m, by=by,
                       decimals=None if by is None else 1, value=value)
    if n == m:
        with pytest.raises(AssertionError, match=f"not {m}"):
            ex.assert_sentence(cache, b, a, data_set=data_set, budget=budget, n=m, value=value)


def test_the_sign_sentences(cache):
    """With the right sign the likelihood dips below its start in 10 of 10 seeds (quickstart's
    configuration, CD-1 and CD-10; 4x4 too) and is back above it for good by update 550; the
    reversed sign loses more than 60 nats in 50 updates."""
    sign = cache["sign"]
    for data_set in rc.SIGN_DATA:
        for est in rc.SIGN_ESTIMATORS:
            right = rc._sign_rows(sign, data_set, est, 1)
            assert sum(r["at"] < r["start"] for r in right) == 10
            assert all(0.02 < r["dip"] < 0.07 and r["back"] is not None and r["back"] <= 550
                       for r in right)
            assert all(r["start"] - r["at"] > 60 for r in rc._sign_rows(sign, data_set, est, -1))
    assert len(rc.sign_sentences(sign)) == 4


@pytest.mark.parametrize("a, b", rc.STEP_PAIRS)
def test_more_chains_helped_more_than_more_steps_at_rate_0_3(cache, a, b):
    """TR-5: at rate 0.3 on 4x4, PCD-1 with 1000 chains and PCD-10 with 100 each ended above
    PCD-1 with 100, and 1000 chains above 10 steps, in 10 of 10 seeds at both budgets; all
    three still fell after their best window in 10 of 10."""
    chains = cache["chains_and_steps"]
    for budget in rc.CHAINS_GRID.budgets:
        ex.assert_sentence(chains, a, b, data_set=B44, budget=budget, n=10, m=10)
        with pytest.raises(AssertionError):
            ex.assert_sentence(chains, b, a, data_set=B44, budget=budget, n=10)
    for arm in (a, b):
        ex.assert_falls(chains, arm, 0.3, data_set=B44, budget=6000, n=10, m=10)


def test_the_sweeps_section_holds_its_grid_and_every_cell(cache):
    assert_grid_complete(cache["sweeps"], rc.SWEEPS_GRID, ex)


def test_the_conditioned_chains_have_the_plain_chains_mean():
    """`moved_projections` draws each one-step chain conditioned on leaving its pattern and
    weighs it by the probability that it does: on two small models trained by CD-1 (where
    most chains return, as late in chapter 6's run) its mean is the exact expected CD-1
    update's component along the gradient (``rbm.transition``), within 4 standard errors
    (measured: 0.2 and 0.7); the same draws unweighted miss it by more than 4 (5.8 and 5.6)."""
    from rbm import RBM, exact
    from rbm.datasets import bars_and_stripes
    from rbm.transition import cd_expected_gradient

    data = bars_and_stripes(3)
    for seed in (0, 1):
        model = RBM.random(9, 5, scale=0.01, rng=seed)
        rc.train(model, data, rc.CD(1), learning_rate=0.3, epochs=2000, batch_size=len(data),
                 rng=seed)
        g = exact.gradient(model, data).flat()
        want = cd_expected_gradient(model, data, 1).flat() @ g / np.linalg.norm(g)
        along, se, norm = rc.along_gradient(model, data, 20_000, np.random.default_rng(5))
        assert norm == pytest.approx(np.linalg.norm(g), rel=1e-12)
        assert abs(along - want) < 4 * se, (seed, along, want, se)
        wrong, wrong_se, _ = rc.along_gradient(  # the draws without their weight
            model, data, 2_000, np.random.default_rng(5),
            draw=lambda *args: rc.moved_projections(*args, weighted=False))
        assert abs(wrong - want) > 4 * wrong_se


# The along section: the model at each stop comes from 300-6000 updates of CD-1, which draw
# from the model, and its chains from seeded draws; rounding moves a projection by about the
# model's own relative change (1e-10 at most over 6000 updates under a 1e-12 nudge, above),
# a mean of ~1e-2-sized projections by ~1e-12 absolute; a rounding flip of one chain's draw
# needs a uniform within ~1e-16 of its threshold.  atol 1e-9 and rtol 1e-6 leave room.
ALONG_TOL = dict(rtol=1e-6, atol=1e-9)


def test_the_along_section_is_reproduced_at_its_decisive_stop(cache):
    """The log-likelihood at every stop, the component along the gradient and one-update
    remainders at the first late stop, re-derived with the script's code; the continued
    run's first-order terms and remainders add up to its change."""
    from rbm import exact

    along = cache["along"]
    assert (along["rate"], along["seed"], along["chains"], along["draws"]) == (
        rc.ALONG_RATE, rc.ALONG_SEED, rc.ALONG_CHAINS, rc.ALONG_DRAWS)
    data = ex.DATA_SETS["bars and stripes 4x4"][0]()
    model = ex.starting_model("bars and stripes 4x4", rc.ALONG_SEED)
    rng, done = np.random.default_rng(rc.ALONG_SEED), 0
    with threadpool_limits(1, user_api="blas"):
        for stop in along["stops"]:
            rc.train(model, data, rc.CD(1), learning_rate=rc.ALONG_RATE,
                     epochs=stop["update"] - done, batch_size=len(data), rng=rng)
            done = stop["update"]
            assert_close(exact.log_likelihood(model, data), stop["log_likelihood"],
                         f"LL at {done}", **ALONG_TOL)
            if done == rc.ALONG_FROM:
                found = rc.along_gradient(model, data, rc.ALONG_CHAINS,
                                          np.random.default_rng(done))
                assert_close(found, [stop["along"], stop["se"], stop["norm"]],
                             f"along at {done}", **ALONG_TOL)
                one = rc.one_update(model, data, rc.ALONG_DRAWS, rc.ALONG_RATE,
                                    np.random.default_rng(done + 1))
                assert_close([one[k] for k in sorted(one)],
                             [stop["one_update"][k] for k in sorted(one)],
                             f"one update at {done}", **ALONG_TOL)
    c = along["continued"]
    assert c["updates"] == rc.ALONG_TO - rc.ALONG_FROM
    assert (c["first"] + c["remainder"]) * c["updates"] == pytest.approx(
        c["end"] - c["start"], rel=1e-9)
    (first,) = [s for s in along["stops"] if s["update"] == rc.ALONG_FROM]
    assert c["start"] == pytest.approx(first["log_likelihood"], rel=1e-12)


def test_a_sweeps_run_is_reproduced(cache):
    """CD-10 at rate 0.3, seed 0, 2400 updates (the sweeps section), re-derived."""
    sweeps = cache["sweeps"]
    with threadpool_limits(1, user_api="blas"):
        run = ex.run_cell(B44, rc.SWEEPS_GRID.arms["CD-10"], 0.3, 0, sweeps["checkpoints"])
    assert_close(run["log_likelihood"], cached(sweeps, B44, "CD-10", 0.3, 0, 2400),
                 "CD-10 0.3 0 (sweeps)", rtol=RTOL)


@pytest.mark.parametrize("data_set, budget, n, by", [
    (B44, 6000, 10, SWEEPS_BY_6000), (B44, 24000, 10, (1.0, 1.4)),
    (B33, 6000, 1, None), (B33, 24000, 5, (0.1, 0.2))])
def test_cd10_against_cd1_at_equal_sweeps_each_at_its_best_rate(cache, data_set, budget, n, by):
    """Referee PR-3: CD-10 after a tenth of the updates (equal Gibbs sweeps), each at its best
    rate, ended above CD-1 in 10 of 10 seeds on 4x4 at both budgets and in 5 of 5 on 3x3 at
    24,000 sweeps, but in 1 of 5 at 6000; at a common rate of 0.03 it ended below in every
    seed."""
    sweeps, m = cache["sweeps"], len(rc.SEEDS[data_set])
    ex.assert_sentence(sweeps, "CD-10", "CD-1", data_set=data_set, budget=budget // 10,
                       against=(cache, budget), n=n, m=m, by=by,
                       decimals=None if by is None else 1)
    with pytest.raises(AssertionError, match=f"not {m}"):
        ex.assert_sentence(cache, "CD-1", "CD-10", data_set=data_set, budget=budget,
                           against=(sweeps, budget // 10), n=m)
    ex.assert_sentence(sweeps, "CD-10", "CD-1", data_set=data_set, budget=budget // 10,
                       against=(cache, budget), rates={"CD-10": 0.03, "CD-1": 0.03}, n=0)


def test_the_along_many_section_starts_as_the_script_runs_it(cache):
    """The low-noise counter-case (100 chains per pattern): its first 300 updates re-derived."""
    from rbm import exact
    from rbm.estimators import CD
    from rbm.training import train

    section = cache["along_many"]
    assert (section["rate"], section["seed"], section["copies"]) == (
        rc.ALONG_RATE, rc.ALONG_SEED, rc.ALONG_COPIES)
    assert len(section["log_likelihood"]) == rc.ALONG_TO // section["every"] + 1
    data = ex.DATA_SETS[B44][0]()
    model = ex.starting_model(B44, rc.ALONG_SEED)
    with threadpool_limits(1, user_api="blas"):
        train(model, np.tile(data, (section["copies"], 1)), CD(1), learning_rate=rc.ALONG_RATE,
              epochs=section["every"], batch_size=len(data) * section["copies"],
              rng=np.random.default_rng(rc.ALONG_SEED))
        value = exact.log_likelihood(model, data)
    assert_close([value], [section["log_likelihood"][1]], "along_many at update 300",
                 rtol=RTOL)
