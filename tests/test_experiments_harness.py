"""The experiment harness of ``tools/experiments.py`` (issue 44): choice on validation seeds,
window means, the "n of m seeds, by a to b nats" numbers and their assertion, the nudge, bad
input, pool runs equal to serial ones, and Ctrl-C.  A tiny grid: a few seconds in all."""

import math
import os
import signal
import threading
import time

import numpy as np
import pytest

from tool_scripts import load_tool

ex = load_tool("experiments")

DS = "bars and stripes 3x3"


def fake_table(values, *, rates=(0.03, 0.1, 0.3), seeds=(0, 1, 2, 3), validation=(10, 11),
               nudged=None, nudge=1e-12):
    """A table whose runs are flat at `values[(arm, rate, seed)]` (or 0), over budget 40."""
    grid = ex.Grid(arms={"A": ex.Arm("CD-1", momentum=0.5), "B": ex.Arm("CD-1")}, rates=rates,
                   seeds=seeds, validation_seeds=validation, budgets=(40,), data_sets=(DS,),
                   points=4, window=2, nudge=nudge)
    checkpoints = grid.checkpoints
    cells = []
    for arm in grid.arms:
        for rate in rates:
            for seed in seeds + validation:
                v = values.get((arm, rate, seed), 0.0)
                cells.append(dict(data_set=DS, arm=arm, rate=rate, seed=seed, nudge=0.0,
                                  log_likelihood=[v] * len(checkpoints), diverged=None))
    for (arm, rate, seed), v in (nudged or {}).items():
        cells.append(dict(data_set=DS, arm=arm, rate=rate, seed=seed, nudge=nudge,
                          log_likelihood=[v] * len(checkpoints), diverged=None))
    return {"grid": grid.to_json(), "checkpoints": checkpoints, "cells": cells}


def test_the_rate_is_chosen_on_the_validation_seeds_not_the_reported_ones():
    values = {("A", 0.1, s): 1.0 for s in (10, 11)}          # best on validation seeds
    values.update({("A", 0.3, s): 5.0 for s in (0, 1, 2, 3)})  # best on the reported seeds
    values.update({("B", 0.03, s): 2.0 for s in (10, 11)})
    table = fake_table(values)
    assert ex.best_rates(table, DS, 40) == {"A": 0.1, "B": 0.03}
    c = ex.compare(table, "A", "B", data_set=DS, budget=40)
    assert (c.rate_a, c.rate_b) == (0.1, 0.03)
    assert c.edge == ["B"]  # 0.03 is the grid's smallest rate


def test_each_arm_may_have_its_own_rates():
    table = fake_table({})
    table["grid"]["rates"] = {"A": [0.03, 0.1, 0.3], "B": [0.1, 0.3]}
    table["cells"] = [c for c in table["cells"] if c["arm"] == "A" or c["rate"] != 0.03]
    for c in table["cells"]:
        if c["arm"] == "B" and c["rate"] == 0.3 and c["seed"] in (10, 11):
            c["log_likelihood"] = [1.0] * len(c["log_likelihood"])
    assert ex.best_rates(table, DS, 40) == {"A": 0.03, "B": 0.3}
    c = ex.compare(table, "A", "B", data_set=DS, budget=40)
    assert c.edge == ["A", "B"]
    with pytest.raises(ValueError, match="not a rate of 'B'"):
        ex.compare(table, "A", "B", data_set=DS, budget=40, rates={"A": 0.03, "B": 0.03})
    grid = ex.Grid(arms={"A": ex.Arm()}, rates={"A": [0.1, 0.3]}, seeds=(0,),
                   validation_seeds=(1,), budgets=(40,), data_sets=(DS,), points=4, window=2)
    assert grid.rates_of("A") == (0.1, 0.3)
    assert ex.Grid.from_json(grid.to_json()) == grid


def test_a_run_is_read_as_the_mean_of_its_last_checkpoints():
    checkpoints = [0, 10, 20, 30, 40, 80, 120, 160]
    values = [0.0, 1.0, 2.0, 3.0, 4.0, 8.0, 12.0, 16.0]
    assert ex.window_points(160, points=4, window=3) == [80, 120, 160]
    assert ex.window_mean(checkpoints, values, 160, points=4, window=3) == 12.0
    assert ex.window_mean(checkpoints, values, 40, points=4, window=2) == 3.5
    assert ex.window_mean(checkpoints, values[:-1] + [None], 160, points=4,
                          window=3) == -math.inf  # a diverged run
    with pytest.raises(ValueError, match="not measured"):
        ex.window_mean(checkpoints, values, 160, points=8, window=3)


def sentence_table():
    diffs = {0: 0.5, 1: 0.25, 2: 0.125, 3: -0.5}
    values = {("A", 0.1, s): d for s, d in diffs.items()}
    values.update({("A", 0.1, s): 1.0 for s in (10, 11)})
    values.update({("B", 0.1, s): 1.0 for s in (10, 11)})
    nudged = {("A", 0.1, s): d + 1e-9 for s, d in diffs.items()}
    nudged.update({("B", 0.1, s): 0.0 for s in diffs})
    return fake_table(values, nudged=nudged)


def test_the_sentence_numbers():
    c = ex.compare(sentence_table(), "A", "B", data_set=DS, budget=40)
    assert (c.n, c.m, c.low, c.high) == (3, 4, -0.5, 0.5)
    assert c.n_nudged == 3 and c.spread == pytest.approx(1e-9, rel=1e-6)
    text = ex.sentence(c)
    assert text.startswith("A ended above B in 3 of 4 seeds (A - B from -0.50 to +0.50 nats)")
    assert "rates 0.1 and 0.1" in text and "one weight nudged: 3 of 4" in text
    ex.assert_sentence(sentence_table(), "A", "B", data_set=DS, budget=40, n=3, m=4,
                       by=(-0.5, 0.5))


def test_the_assertion_fails_on_the_opposite_and_on_a_wrong_statement(capsys):
    table = sentence_table()
    with pytest.raises(AssertionError, match="ahead in 1 of 4 seeds, not 3"):
        ex.assert_sentence(table, "B", "A", data_set=DS, budget=40, n=3)
    with pytest.raises(AssertionError, match="not 4"):
        ex.assert_sentence(table, "A", "B", data_set=DS, budget=40, n=4)
    with pytest.raises(AssertionError, match="not -0.4 to 0.5"):
        ex.assert_sentence(table, "A", "B", data_set=DS, budget=40, n=3, by=(-0.4, 0.5))
    with pytest.raises(AssertionError, match="4 seeds in the table, not 10"):
        ex.assert_sentence(table, "A", "B", data_set=DS, budget=40, n=3, m=10)
    with pytest.raises(AssertionError, match="not 4"):  # at fixed rates
        ex.assert_sentence(table, "A", "B", data_set=DS, budget=40, n=4,
                           rates={"A": 0.03, "B": 0.03})
    assert capsys.readouterr().out == ""  # nothing printed for a failed check
    ex.assert_sentence(table, "A", "B", data_set=DS, budget=40, n=0, rates={"A": 0.03, "B": 0.3})
    assert "the stated rates 0.03 and 0.3" in " ".join(capsys.readouterr().out.split())


def test_the_assertion_fails_when_a_nudge_moves_the_count_or_the_margin_is_too_fine():
    values = {("A", 0.1, s): d for s, d in {0: 0.5, 1: 0.25, 2: 0.125, 3: 0.01}.items()}
    values.update({("A", 0.1, s): 1.0 for s in (10, 11)})
    values.update({("B", 0.1, s): 1.0 for s in (10, 11)})
    moved = {("A", 0.1, 3): -0.02, ("A", 0.1, 0): 0.5, ("A", 0.1, 1): 0.25, ("A", 0.1, 2): 0.125}
    moved.update({("B", 0.1, s): 0.0 for s in range(4)})
    with pytest.raises(AssertionError, match="but in 3 with one weight nudged"):
        ex.assert_sentence(fake_table(values, nudged=moved), "A", "B", data_set=DS,
                           budget=40, n=4)
    moved[("A", 0.1, 3)] = 0.04  # count holds; spread 0.03: margins to one decimal at most
    table = fake_table(values, nudged=moved)
    with pytest.raises(AssertionError, match="stated to 2 decimals, but the nudge spread"):
        ex.assert_sentence(table, "A", "B", data_set=DS, budget=40, n=4, by=(0.01, 0.5),
                           decimals=2)
    ex.assert_sentence(table, "A", "B", data_set=DS, budget=40, n=4, by=(0.0, 0.5))


def test_the_nudge_changes_one_starting_weight_by_the_nudge():
    plain = ex.starting_model(DS, 3)
    nudged = ex.starting_model(DS, 3, nudge=1e-12)
    changed = np.argwhere(nudged.W != plain.W)
    assert changed.tolist() == [[4, 0]]  # the centre pixel of the 3x3 image, hidden unit 0
    w = plain.W[4, 0]
    # w + 1e-12 is rounded to the grid of doubles near w (spacing ~2e-18 for |w| ~ 0.01)
    assert abs((nudged.W[4, 0] - w) - 1e-12) <= abs(np.spacing(w))
    assert np.array_equal(nudged.b, plain.b) and np.array_equal(nudged.c, plain.c)


@pytest.mark.parametrize("change, error, name", [
    (dict(arms={}), ValueError, "arms"),
    (dict(arms={"A": "CD-1"}), TypeError, "arms"),
    (dict(seeds=()), ValueError, "seeds"),
    (dict(rates=(0.1, 0.0)), ValueError, "rates"),
    (dict(rates=(-0.1,)), ValueError, "rates"),
    (dict(rates=0.1), TypeError, "rates"),
    (dict(validation_seeds=(0,)), ValueError, "validation_seeds"),
    (dict(data_sets=("digits",)), ValueError, "data_sets"),
    (dict(budgets=(30,)), ValueError, "budgets"),
    (dict(rates={"B": (0.1,)}), ValueError, "rates"),
    (dict(rates={"A": ()}), ValueError, "rates"),
    (dict(rates={"A": 0.1}), TypeError, "rates"),
    (dict(seeds={"other": (0,)}), ValueError, "seeds, a dict, must name the data sets"),
    (dict(seeds={DS: ()}), ValueError, "seeds"),
    (dict(seeds={DS: "0"}), TypeError, "seeds"),
])
def test_bad_grids_are_refused_naming_the_argument(change, error, name):
    good = dict(arms={"A": ex.Arm()}, rates=(0.1,), seeds=(0,), validation_seeds=(1,),
                budgets=(40,), data_sets=(DS,), points=4, window=2)
    with pytest.raises(error, match=name):
        ex.Grid(**dict(good, **change))


def test_bad_arms_and_lookups_are_refused_naming_the_argument():
    with pytest.raises(ValueError, match="estimator"):
        ex.Arm("CD-0")
    with pytest.raises(ValueError, match="momentum"):
        ex.Arm("CD-1", momentum=1.0)
    table = sentence_table()
    with pytest.raises(ValueError, match="unknown arm 'C'"):
        ex.compare(table, "A", "C", data_set=DS, budget=40)
    with pytest.raises(ValueError, match="budget"):
        ex.compare(table, "A", "B", data_set=DS, budget=80)
    with pytest.raises(ValueError, match="rate"):
        ex.run_cell(DS, ex.Arm(), 0.0, 0, [0, 10])
    with pytest.raises(TypeError, match="grid"):
        ex.run_grid({"arms": {}})


TINY = ex.Grid(arms={"plain": ex.Arm("CD-1"), "momentum": ex.Arm("CD-1", momentum=0.5)},
               rates=(0.1, 0.3), seeds=(0, 1), validation_seeds=(5,), budgets=(20, 80),
               data_sets=(DS,), points=4, window=2)


def test_a_pool_gives_the_serial_table_bit_for_bit_and_a_shorter_budget_is_a_prefix():
    serial = ex.run_grid(TINY, progress=None)
    pooled = ex.run_grid(TINY, processes=2, progress=None)
    assert serial["cells"] == pooled["cells"]
    # 2 arms x 2 rates x 3 seeds, then each arm's chosen rates on the 2 reported seeds
    assert sum(c["nudge"] == 0 for c in serial["cells"]) == 12
    assert all(c["nudge"] in (0.0, 1e-12) for c in serial["cells"])
    cell = serial["cells"][0]
    short = ex.run_cell(DS, TINY.arms[cell["arm"]], cell["rate"], cell["seed"], [0, 5, 10, 15, 20])
    at = dict(zip(serial["checkpoints"], cell["log_likelihood"]))
    assert short["log_likelihood"] == [at[u] for u in (0, 5, 10, 15, 20)]


def test_reused_cells_are_those_a_fresh_run_gives():
    smaller = ex.Grid(**dict(vars(TINY), rates=(0.1,)))
    first = ex.run_grid(smaller, progress=None)
    calls = []
    table = ex.run_grid(TINY, progress=lambda done, total: calls.append(total), reuse=first)
    assert table["cells"] == ex.run_grid(TINY, progress=None)["cells"]
    assert table["reused_cells"] >= 6 and calls[0] == 6  # only the rate 0.3 cells ran anew


@pytest.mark.parametrize("processes", [1, 2])
def test_ctrl_c_stops_a_grid_within_a_second(processes):
    long = ex.Grid(arms={"A": ex.Arm("CD-10")}, rates=(0.1,), seeds=(0, 1, 2, 3),
                   validation_seeds=(9,), budgets=(200000,), data_sets=(DS,))
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            ex.run_grid(long, processes=processes, progress=None)
    finally:
        timer.cancel()
    assert time.monotonic() - start < 0.5 + 1.0


def test_pcd_arms_train_with_their_number_of_chains_and_steps():
    for estimator, chains, k in (("PCD-1", 14, 1), ("PCD-10", 1000, 10)):
        pcd = ex.Arm(estimator, chains=chains).make_estimator()
        assert (type(pcd).__name__, pcd.n_chains, pcd.k) == ("PCD", chains, k)
    assert type(ex.Arm("CD-10", chains=5).make_estimator()).__name__ == "CD"
    with pytest.raises(ValueError, match="chains"):
        ex.Arm("PCD-1", chains=0)
    few, many = (ex.run_cell(DS, ex.Arm("PCD-1", chains=c), 0.3, 0, [0, 10, 20])
                 for c in (14, 100))
    assert few["log_likelihood"][0] == many["log_likelihood"][0]  # the same start
    assert few["log_likelihood"][-1] != many["log_likelihood"][-1]


def curve_table(curves, *, nudged=None, nudge=1e-12, seeds=(0, 1, 2), validation=(10,)):
    """A table over budget 40 (points 4, window 2: checkpoints 0, 10, 20, 30, 40) whose runs
    are `curves[(arm, rate, seed)]` (five values; flat at 0 if not given)."""
    grid = ex.Grid(arms={"A": ex.Arm("CD-1"), "B": ex.Arm("CD-10")}, rates=(0.1, 0.3),
                   seeds=seeds, validation_seeds=validation, budgets=(20, 40), data_sets=(DS,),
                   points=4, window=2, nudge=nudge)
    assert grid.checkpoints == [0, 5, 10, 15, 20, 30, 40]

    def full(c):  # the 20-update budget's checkpoints 5 and 15 interpolated
        return [c[0], (c[0] + c[1]) / 2, c[1], (c[1] + c[2]) / 2, c[2], c[3], c[4]]
    cells = [dict(data_set=DS, arm=arm, rate=rate, seed=seed, nudge=0.0,
                  log_likelihood=full(curves.get((arm, rate, seed), [0.0] * 5)), diverged=None)
             for arm in grid.arms for rate in grid.rates for seed in seeds + validation]
    cells += [dict(data_set=DS, arm=arm, rate=rate, seed=seed, nudge=nudge,
                   log_likelihood=full(c), diverged=None)
              for (arm, rate, seed), c in (nudged or {}).items()]
    return {"grid": grid.to_json(), "checkpoints": grid.checkpoints, "cells": cells}


def test_the_best_window_and_what_keeping_it_gains():
    assert ex.best_window([0, 10, 20, 30, 40], [0.0, 3.0, 5.0, 2.0, 1.0], 40, points=4,
                          window=2) == (4.0, 10, 20)
    # a diverged point rules its windows out; a run flat from the start keeps the first
    assert ex.best_window([0, 10, 20, 30, 40], [0.0, 3.0, None, 2.0, 1.0], 40, points=4,
                          window=2) == (1.5, 0, 10)
    assert ex.best_window([0, 10, 20], [1.0, 1.0, 1.0], 20, points=2, window=2) == (1.0, 0, 10)
    assert ex.read_run([0, 10, 20], [1.0, 3.0, 2.0], 20, points=2, window=1, value="best") == 3.0
    assert ex.read_run([0, 10, 20], [1.0, 3.0, 2.0], 20, points=2, window=1) == 2.0
    with pytest.raises(ValueError, match="value"):
        ex.read_run([0, 10, 20], [1.0, 3.0, 2.0], 20, points=2, window=1, value="last")


def test_a_fall_is_counted_beyond_the_threshold_and_the_nudge_spread(capsys):
    curves = {("A", 0.1, 0): [0, 2, 3, 2, 1],     # best window (10, 20) 2.5, end 1.5: falls 1
              ("A", 0.1, 1): [0, 2, 2, 2, 1.95],  # falls 0.025: under the threshold
              ("A", 0.1, 2): [0, 1, 2, 3, 4]}     # still rising: falls 0
    f = ex.rise_and_fall(curve_table(curves), "A", 0.1, data_set=DS, budget=40)
    assert (f.n, f.m, f.spread) == (1, 3, None)
    assert f.falls == pytest.approx([1.0, 0.025, 0.0])
    assert f.peaks == [15.0, 15.0, 35.0] and f.best[0] == 2.5 and f.end[0] == 1.5
    # the shorter budget reads the first half of the same runs: all still rising
    assert ex.rise_and_fall(curve_table(curves), "A", 0.1, data_set=DS, budget=20).n == 0
    # a nudge that moves a fall by 1.2 nats: a fall of 1 nat is no longer counted
    nudged = {("A", 0.1, s): c for s, c in ((0, [0, 2, 3, 2, 1]), (1, [0, 2, 2, 2, 1.95]),
                                          (2, [0, 1, 2, 3, 4]))}
    nudged[("A", 0.1, 0)] = [0, 2, 3, 3.2, 3.2]
    table = curve_table(curves, nudged=nudged)
    f = ex.rise_and_fall(table, "A", 0.1, data_set=DS, budget=40)
    assert f.spread == pytest.approx(1.0) and f.spread_rate == 0.1 and f.n == 0
    # a rate without nudged runs borrows the arm's spread at its nudged rate, and says so
    g = ex.rise_and_fall(table, "A", 0.3, data_set=DS, budget=40)
    assert g.spread_rate == 0.1 and "at rate 0.1" in ex.fall_sentence(g)
    text = ex.fall_sentence(ex.rise_and_fall(curve_table(curves), "A", 0.1, data_set=DS,
                                             budget=40))
    assert text.startswith(f"On {DS}, A at rate 0.1 fell after its best window by more than "
                           f"0.1 nats in 1 of 3 seeds within 40 updates")
    assert "centred at updates 15 to 35, median 15" in text
    with pytest.raises(AssertionError, match="in 1 of 3 seeds, not 3"):
        ex.assert_falls(curve_table(curves), "A", 0.1, data_set=DS, budget=40, n=3)
    assert capsys.readouterr().out == ""
    ex.assert_falls(curve_table(curves), "A", 0.1, data_set=DS, budget=40, n=1, m=3)
    assert "1 of 3 seeds" in capsys.readouterr().out
    with pytest.raises(ValueError, match="rate"):
        ex.rise_and_fall(table, "A", 0.2, data_set=DS, budget=40)


def test_arms_compared_by_their_best_window_keep_the_best_model():
    curves = {}
    for s in (0, 1, 2, 10):  # A peaks high and falls; B rises slowly to the end
        curves[("A", 0.1, s)] = [0, 3, 4, 1, 0]
        curves[("B", 0.1, s)] = [0, 1, 2, 2.5, 3]
    table = curve_table(curves)
    end = ex.compare(table, "A", "B", data_set=DS, budget=40)
    best = ex.compare(table, "A", "B", data_set=DS, budget=40, value="best")
    assert (end.n, best.n) == (0, 3)
    assert best.low == pytest.approx(3.5 - 2.75) and best.value == "best"
    assert ex.sentence(best).startswith("A had its best window above that of B in 3 of 3 seeds")
    ex.assert_sentence(table, "A", "B", data_set=DS, budget=40, n=3, value="best")
    with pytest.raises(AssertionError, match="best windows"):
        ex.assert_sentence(table, "A", "B", data_set=DS, budget=40, n=0, value="best")
    # the rate is chosen by the same reading: A at 0.3 ends higher, A at 0.1 peaks higher
    for s in (0, 1, 2, 10):
        curves[("A", 0.3, s)] = [0, 1, 1.5, 1.6, 1.7]
    table = curve_table(curves)
    assert ex.best_rates(table, DS, 40)["A"] == 0.3
    assert ex.best_rates(table, DS, 40, "best")["A"] == 0.1
    with pytest.raises(ValueError, match="value"):
        ex.compare(table, "A", "B", data_set=DS, budget=40, value="final")


def test_each_data_set_may_have_its_own_seeds():
    other = "bars and stripes 4x4"
    grid = ex.Grid(arms={"A": ex.Arm()}, rates=(0.1,), seeds={DS: (0, 1, 2), other: (0,)},
                   validation_seeds=(10,), budgets=(40,), data_sets=(DS, other), points=4,
                   window=2)
    assert (grid.seeds_of(DS), grid.seeds_of(other)) == ((0, 1, 2), (0,))
    assert ex.Grid.from_json(grid.to_json()) == grid
    table = fake_table({("A", r, s): 1.0 for r in (0.03, 0.1, 0.3) for s in (0, 1, 2, 3)})
    table["grid"]["seeds"] = {DS: [0, 1, 2]}
    c = ex.compare(table, "A", "B", data_set=DS, budget=40)
    assert (c.n, c.m) == (3, 3)  # seed 3's cells are in the table, not among its seeds
    for seeds, error, name in (({DS: (0,)}, ValueError, "seeds, a dict"),
                               ({DS: (0,), other: ()}, ValueError, "seeds"),
                               ({DS: (0,), other: (10,)}, ValueError, "validation_seeds"),
                               ({DS: (0,), other: 3}, TypeError, "seeds")):
        with pytest.raises(error, match=name):
            ex.Grid(arms={"A": ex.Arm()}, rates=(0.1,), seeds=seeds, validation_seeds=(10,),
                    budgets=(40,), data_sets=(DS, other), points=4, window=2)


def test_an_arm_is_compared_against_another_table_at_another_budget(capsys):
    """Equal cost other than updates (CD-1 for ten times the updates of CD-10): each arm's
    rate is chosen in its own table at its own budget, and the sentence names both budgets."""
    mine = fake_table({("A", 0.1, s): 2.0 for s in (0, 1, 2, 3, 10, 11)})
    theirs = fake_table({("B", 0.3, s): 1.0 + s / 10 for s in (0, 1, 2, 3, 10, 11)})
    c = ex.compare(mine, "A", "B", data_set=DS, budget=40, against=(theirs, 40))
    assert (c.rate_a, c.rate_b, c.n, c.budget_b) == (0.1, 0.3, 4, 40)
    assert np.allclose(c.differences, [1.0, 0.9, 0.8, 0.7])
    assert "40 and 40 updates" in ex.sentence(c)
    ex.assert_sentence(mine, "A", "B", data_set=DS, budget=40, n=4, against=(theirs, 40))
    assert "40 and 40 updates" in " ".join(capsys.readouterr().out.split())
    with pytest.raises(AssertionError, match="not 4"):
        ex.assert_sentence(theirs, "B", "A", data_set=DS, budget=40, n=4, against=(mine, 40))
    with pytest.raises(TypeError, match="against"):
        ex.compare(mine, "A", "B", data_set=DS, budget=40, against=theirs)
    fewer = fake_table({}, seeds=(0, 1))
    with pytest.raises(ValueError, match="seeds"):
        ex.compare(mine, "A", "B", data_set=DS, budget=40, against=(fewer, 40))
