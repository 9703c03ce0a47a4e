"""The core recipe's training claims, each by the protocol: CD-1, CD-10 and PCD-1 over rates,
budgets, seeds and two data sets; PCD's chains and steps; the sign line's dip.

Usage: python tools/run_core_recipe.py [--reuse] [--processes N] [--sentences] [OUTPUT_DIR]
(behind `make core-recipe`; ``--reuse`` takes over the runs of an earlier ``core_recipe.json``
that the grids still have, unchanged; ``--sentences`` only reads the cache and prints.)

Round 5's referee of the core (``referee_core.md``, main findings 2-4, QS-2..QS-7, TR-3..TR-6,
IW-1, IW-2) found that the quickstart's and chapter 6's lines on CD-1's fall, CD-10 against
CD-1, PCD's rate and chains and "if it falls from the start, the sign is reversed" do not
survive another rate, budget or seed.  This runs them by the protocol of
``tools/experiments.py`` (``../shared/experiments.md``):

* the main grid (:data:`GRID`): arms CD-1, CD-10, PCD-1 with 100 persistent chains, PCD-1
  with 14, and CD-1 with weight decay 1e-4 and with 1e-3; learning rates 0.003, 0.01, 0.03,
  0.1, 0.3 (0.01 added when every arm chose 0.03 at 24,000 updates, 0.003 when CD-1 and PCD-1
  chose 0.01); full batch; budgets of 6000 and 24,000 updates (points 20, window 5: a run's
  value is the mean exact log-likelihood of the training data over its last 5 of 20
  checkpoints); 4x4 bars and stripes with reported seeds 0-9 and 3x3 bars and stripes with
  seeds 0-4, 16 hidden units, each arm's rate chosen on validation seeds 10 and 11 per data
  set and budget; each arm's chosen rates rerun with one starting weight nudged by 1e-12.
  Read for the rise and fall (:func:`rise_and_fall`: the best window of 5 consecutive
  checkpoints of a budget against its final window), for the estimators at their best rates,
  for 14 against 100 chains and for weight decay against none;
* ``sweeps``: CD-10 at a tenth of the main budgets (600 and 2400 updates), rates 0.01-1.0,
  the same seeds and data sets: against CD-1 of the main grid at equal Gibbs sweeps, each at
  its best rate (referee PR-3);
* ``chains_and_steps``: PCD-1 with 100 and with 1000 chains and PCD-10 with 100 chains at rate
  0.3 on 4x4 bars and stripes, 1500 and 6000 updates (referee TR-5: do more chains help as much
  as more steps?);
* ``sign``: the quickstart's configuration (3x3 bars and stripes, 16 hidden units, weights from
  N(0, 0.01^2), rate 0.1, full batch, CD-1 and CD-10), every update's exact log-likelihood for
  the first 1000 updates, with the right sign and reversed, seeds 0-9 (and 4x4 bars and stripes
  alongside); the same runs nudged by 1e-12;
* ``along``: the CD-1 mechanism (referee TR-6) on chapter 6's run (4x4, seed 1, rate 0.3):
  the mean CD-1 update's component along the exact gradient at seven stops, from 60,000
  one-step chains per pattern (:func:`moved_projections`); the run continued from update 3600
  to 6000 one update at a time, each update's change split into its first-order term and the
  remainder (:func:`first_order_and_remainder`); at the late stops the remainder of single
  updates and of their mean (:func:`one_update`);
* ``along_many``: the same run with 100 one-step chains per pattern (the data tiled 100 times,
  a hundredth of the noise variance of an update, referee 44f PR-1): to update 3600, then
  continued to 6000 as in ``along``, with the exact log-likelihood every 300 updates.

Writes ``core_recipe.json`` (the main grid's table of :func:`experiments.run_grid`, with the
others as sections) and prints the sentences.  Costs of one core, from scratch: the main grid
about 55 minutes (its 4x4 estimator arms about 20; the 3x3 data set, the decay arms and rate
0.003, 473 runs with the nudged ones, took 42 minutes of wall time on two processes of the
shared machine in November 2026), the sweeps 2, the chains 3, the sign runs 2, the along
section 1.5, the along_many 1; on the shared machine the cache was written in pieces with ``--reuse`` and
``--parts``.  Single-threaded and seeded, so another machine gives the same
numbers up to rounding (``tests/test_core_recipe_cache.py`` re-derives some runs).
"""

import dataclasses
import multiprocessing
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for `experiments` when imported
import experiments as ex  # noqa: E402

from rbm import Gradient  # noqa: E402
from rbm.estimators import CD  # noqa: E402
from rbm.training import train  # noqa: E402

OUTPUT = Path(__file__).resolve().parent.parent / "chapters" / "data"
STEM = "core_recipe"
#: 4x4 bars and stripes with ten reported seeds; the protocol's second data set, 3x3, with five
#: (to keep the added cost near a quarter of an hour of one core)
DATA_SETS = ("bars and stripes 4x4", "bars and stripes 3x3")
SEEDS = {"bars and stripes 4x4": tuple(range(10)), "bars and stripes 3x3": tuple(range(5))}
#: weight decay, a nuisance of CD-1: each decay an arm, at its own best rate
DECAYS = (1e-4, 1e-3)
ARMS = {"CD-1": ex.Arm("CD-1"), "CD-10": ex.Arm("CD-10"),
        "PCD-1 (100 chains)": ex.Arm("PCD-1", chains=100),
        "PCD-1 (14 chains)": ex.Arm("PCD-1", chains=14),
        **{f"CD-1, decay {d:g}": ex.Arm("CD-1", weight_decay=d) for d in DECAYS}}
#: The grid the cache holds: the four estimator arms and the two decay arms, rates 0.003-0.3,
#: 4x4 and 3x3 bars and stripes (rate 0.003 added when CD-1 and both PCD arms chose 0.01, then
#: the smallest rate, at 24,000 updates)
GRID = ex.Grid(arms=ARMS, rates=(0.003, 0.01, 0.03, 0.1, 0.3), seeds=SEEDS,
               validation_seeds=(10, 11), budgets=(6000, 24000), data_sets=DATA_SETS)
#: CD-10 at a tenth of the main grid's budgets: against CD-1 of the main grid, equal numbers
#: of Gibbs sweeps (referee PR-3), each at its best rate (1.0 and 3.0 added: CD-10 chose 1.0 at
#: 600 updates)
SWEEPS_GRID = ex.Grid(arms={"CD-10": ex.Arm("CD-10")}, rates=(0.01, 0.03, 0.1, 0.3, 1.0, 3.0),
                      seeds=SEEDS, validation_seeds=(10, 11), budgets=(600, 2400),
                      data_sets=DATA_SETS)
CHAINS_GRID = ex.Grid(
    arms={"PCD-1 (100 chains)": ex.Arm("PCD-1", chains=100),
          "PCD-1 (1000 chains)": ex.Arm("PCD-1", chains=1000),
          "PCD-10 (100 chains)": ex.Arm("PCD-10", chains=100)},
    rates=(0.3,), seeds=tuple(range(10)), validation_seeds=(10,), budgets=(1500, 6000),
    data_sets=("bars and stripes 4x4",))
#: the sign experiment: the quickstart's rate, every update's log-likelihood up to this many
SIGN_RATE = 0.1
SIGN_UPDATES = 1000
SIGN_AT = 50
SIGN_SEEDS = tuple(range(10))
SIGN_ESTIMATORS = ("CD-1", "CD-10")


ESTIMATORS = ("CD-1", "CD-10", "PCD-1 (100 chains)")
#: (a, b) pairs of the estimator question, a the arm expected ahead
PAIRS = (("CD-10", "CD-1"), ("CD-10", "PCD-1 (100 chains)"), ("PCD-1 (100 chains)", "CD-1"))
CHAIN_PAIRS = (("PCD-1 (100 chains)", "PCD-1 (14 chains)"),)
#: weight decay against none, and CD-10 against CD-1 with decay
DECAY_PAIRS = tuple((f"CD-1, decay {d:g}", "CD-1") for d in DECAYS) + tuple(
    ("CD-10", f"CD-1, decay {d:g}") for d in DECAYS)
STEP_PAIRS = (("PCD-1 (1000 chains)", "PCD-1 (100 chains)"),
              ("PCD-10 (100 chains)", "PCD-1 (100 chains)"),
              ("PCD-1 (1000 chains)", "PCD-10 (100 chains)"))
#: "more than 0.2 nats" of the quickstart's estimator and chains lines
QUICKSTART_MARGIN = 0.2


class Reversed:
    """An estimator whose update has the wrong sign (the mistake of common_mistakes)."""

    def __init__(self, estimator):
        self.estimator = estimator

    def gradient(self, model, data, *, rng):
        g = self.estimator.gradient(model, data, rng=rng)
        return Gradient(**{name: -step for name, step in g.fields.items()})


def sign_run(data_set, k, seed, *, reversed_sign=False, nudge=0.0, updates=SIGN_UPDATES,
             every=1):
    """The quickstart's configuration on `data_set` (full batch, rate :data:`SIGN_RATE`,
    CD-`k`, starting model and training seed of the harness's cell `seed`): the exact
    log-likelihood every `every` updates up to `updates`."""
    data = ex.DATA_SETS[data_set][0]()
    model = ex.starting_model(data_set, seed, nudge=nudge)
    estimator = Reversed(CD(k)) if reversed_sign else CD(k)
    with threadpool_limits(1, user_api="blas"):
        history = train(model, data, estimator, learning_rate=SIGN_RATE, epochs=updates,
                        batch_size=len(data), rng=ex.TRAIN_SEED_OFFSET + seed,
                        track_every=every)
    assert history.updates == list(range(0, updates + 1, every))
    return [float(x) for x in history.log_likelihood]


def dip(values, every, at=SIGN_AT):
    """The start, the value after `at` updates, the largest dip below the start (>= 0) and
    its update, and the first update from which the run stays at or above its start (None:
    still below at the end)."""
    v = np.asarray(values)
    low = int(np.argmin(v))
    below = np.flatnonzero(v < v[0])
    back = None if len(below) and below[-1] == len(v) - 1 else (
        0 if not len(below) else int((below[-1] + 1) * every))
    return {"start": float(v[0]), "at": float(v[at // every]),
            "dip": float(max(0.0, v[0] - v[low])), "dip_at": low * every, "back": back}


#: the sign runs: data set -> tracking interval
SIGN_DATA = {"bars and stripes 3x3": 1, "bars and stripes 4x4": 5}


def _sign_task(task):
    data_set, est, seed, reversed_sign, nudge = task
    every = SIGN_DATA[data_set]
    k = int(est.split("-")[1])
    updates = SIGN_AT if reversed_sign else SIGN_UPDATES
    values = sign_run(data_set, k, seed, reversed_sign=reversed_sign, nudge=nudge,
                      updates=updates, every=every)
    row = dict(data_set=data_set, estimator=est, seed=seed, sign=-1 if reversed_sign else 1,
               nudge=nudge, every=every, **dip(values, every))
    if not reversed_sign:
        row["curve"] = values[::10 // every]
    return row


def run_sign(processes=1):
    """The sign section of the cache: each run's :func:`dip` summary (right sign, nudged,
    reversed) and its curve every 10 updates (`processes` workers; the same rows for any)."""
    tasks = [(data_set, est, seed, reversed_sign, nudge) for data_set in SIGN_DATA
             for est in SIGN_ESTIMATORS for seed in SIGN_SEEDS
             for reversed_sign, nudge in ((False, 0.0), (False, GRID.nudge), (True, 0.0))]
    start = time.process_time()
    if processes == 1:
        runs = [_sign_task(t) for t in tasks]
    else:
        with multiprocessing.get_context("fork").Pool(processes) as pool:
            runs = pool.map(_sign_task, tasks)
    return {"rate": SIGN_RATE, "updates": SIGN_UPDATES, "at": SIGN_AT, "seeds": list(SIGN_SEEDS),
            "curve_every": 10, "runs": runs, "cpu_seconds": time.process_time() - start}


def _sign_rows(sign, data_set, est, s, nudge=0.0):
    return [r for r in sign["runs"] if (r["data_set"], r["estimator"], r["sign"], r["nudge"])
            == (data_set, est, s, nudge)]


def sign_sentences(sign):
    """The sign line, by data set and estimator."""
    out = []
    for data_set in SIGN_DATA:
        for est in SIGN_ESTIMATORS:
            right = _sign_rows(sign, data_set, est, 1)
            nudged = {r["seed"]: r for r in _sign_rows(sign, data_set, est, 1, GRID.nudge)}
            wrong = _sign_rows(sign, data_set, est, -1)
            below = [r for r in right if r["at"] < r["start"]]
            moved = max(max(abs(r[key] - nudged[r["seed"]][key]) for key in ("at", "dip"))
                        for r in right)
            backs = [r["back"] for r in right]
            never = sum(b is None for b in backs)
            back_text = ("" if not [b for b in backs if b is not None] else
                         f"back at or above its start for good from update "
                         f"{min(b for b in backs if b is not None)} to "
                         f"{max(b for b in backs if b is not None)}")
            if never:
                back_text += f"{'; ' if back_text else ''}still below in {never} at update " \
                             f"{sign['updates']}"
            drops = [r["start"] - r["at"] for r in wrong]
            out.append(
                f"On {data_set}, {est} at rate {sign['rate']:g} from N(0, 0.01^2) weights "
                f"(full batch): with the right sign the exact log-likelihood after "
                f"{sign['at']} updates was below its start in {len(below)} of {len(right)} "
                f"seeds (by {min(r['start'] - r['at'] for r in right):.3f} to "
                f"{max(r['start'] - r['at'] for r in right):.3f} nats); the "
                f"largest dip {min(r['dip'] for r in right):.3f} to "
                f"{max(r['dip'] for r in right):.3f} nats, at updates "
                f"{min(r['dip_at'] for r in right)} to {max(r['dip_at'] for r in right)}; "
                f"{back_text}.  With the sign reversed it fell {min(drops):.1f} to "
                f"{max(drops):.1f} nats in {sign['at']} updates.  (1e-12 nudge moves the "
                f"value at {sign['at']} and the dip by {moved:.1g} nats at most.)")
    return out


def fall_sentences(table):
    """Question 1: each estimator at each rate, data set and budget."""
    grid = table["grid"]
    out = []
    for data_set in grid["data_sets"]:
        for est in ESTIMATORS:
            for budget in grid["budgets"]:
                for rate in grid["rates"]:
                    out.append(ex.fall_sentence(ex.rise_and_fall(
                        table, est, rate, data_set=data_set, budget=budget)))
    return out


def fall_summaries(table):
    """Question 1 in one sentence per estimator and data set (the long budget)."""
    grid = table["grid"]
    budget = max(grid["budgets"])
    out = []
    for data_set in grid["data_sets"]:
        for est in ESTIMATORS:
            fs = [ex.rise_and_fall(table, est, r, data_set=data_set, budget=budget)
                  for r in grid["rates"]]
            counts = ", ".join(f"{f.n} of {f.m} at {f.rate:g}" for f in fs)
            peaks = ", ".join(f"{np.median(f.peaks):g} at {f.rate:g}" for f in fs)
            gains = ", ".join(f"{f.low:.2f}-{f.high:.2f} at {f.rate:g}" for f in fs)
            out.append(f"On {data_set}, within {budget} updates, {est} fell after its best "
                       f"window by more than 0.1 nats and the nudge spread in {counts} seeds; "
                       f"median peak (centre of the best window) near update {peaks}; keeping "
                       f"the best window gains {gains} nats over the final window.")
    return out


def comparison_sentences(table, pairs, *, values=ex.VALUES):
    grid = table["grid"]
    out = []
    for value in values:
        for a, b in pairs:
            for data_set in grid["data_sets"]:
                for budget in grid["budgets"]:
                    out.append(ex.sentence(ex.compare(table, a, b, data_set=data_set,
                                                      budget=budget, value=value)))
    return out


def sweeps_sentences(table):
    """CD-10 after a tenth of the updates against CD-1 (equal Gibbs sweeps)."""
    return [ex.sentence(ex.compare(table["sweeps"], "CD-10", "CD-1", data_set=data_set,
                                   budget=budget // 10, against=(table, budget)))
            for data_set in table["grid"]["data_sets"] for budget in table["grid"]["budgets"]]


def margin_count(table, a, b, *, data_set, budget, margin=QUICKSTART_MARGIN, rates=None):
    """In how many reported seeds `a` ended more than `margin` above `b` (each at its best
    rate, or at `rates`)."""
    c = ex.compare(table, a, b, data_set=data_set, budget=budget, rates=rates)
    return sum(d > margin for d in c.differences), c


def quickstart_margin_sentences(table):
    grid = table["grid"]
    out = []
    for a, b in (("CD-10", "CD-1"), ("PCD-1 (100 chains)", "PCD-1 (14 chains)")):
        for data_set in grid["data_sets"]:
            for budget in grid["budgets"]:
                for rates in (None, {a: 0.1, b: 0.1}):
                    n, c = margin_count(table, a, b, data_set=data_set, budget=budget,
                                        rates=rates)
                    how = "each at its best rate" if rates is None else "both at rate 0.1"
                    out.append(f"On {data_set}, {b} ended more than {QUICKSTART_MARGIN} nats "
                               f"below {a} in {n} of {c.m} seeds within {budget} updates "
                               f"({how}: {c.rate_a:g} and {c.rate_b:g}; differences "
                               f"{c.low:+.2f} to {c.high:+.2f})")
    return out


def print_sentences(table):
    print("\n1. Rise and fall (best window minus final window):")
    print("\n".join(fall_summaries(table)))
    print("\n".join(fall_sentences(table)))
    print("\n2. Estimators, each at its best rate chosen on the validation seeds:")
    print("\n".join(comparison_sentences(table, PAIRS)))
    print("\n3. PCD-1's chains, each at its best rate:")
    print("\n".join(comparison_sentences(table, CHAIN_PAIRS)))
    if all(a in table["grid"]["arms"] for pair in DECAY_PAIRS for a in pair):
        print("\n3b. Weight decay, each decay at its best rate:")
        print("\n".join(comparison_sentences(table, DECAY_PAIRS)))
    if "sweeps" in table:
        print("\n3c. CD-10 against CD-1 at equal Gibbs sweeps, each at its best rate:")
        print("\n".join(sweeps_sentences(table)))
    print("\nThe quickstart's margins:")
    print("\n".join(quickstart_margin_sentences(table)))
    if "chains_and_steps" in table:
        chains = table["chains_and_steps"]
        print("\nTR-5: more chains or more steps, at rate 0.3 (4x4):")
        print("\n".join(comparison_sentences(chains, STEP_PAIRS, values=("end",))))
        for arm in chains["grid"]["arms"]:
            print(ex.fall_sentence(ex.rise_and_fall(chains, arm, 0.3,
                                                    data_set=chains["grid"]["data_sets"][0],
                                                    budget=max(chains["grid"]["budgets"]))))
    if "along" in table:
        c = table["along"]["continued"]
        print(f"\n5. CD-1's mechanism (4x4, seed 1, rate {table['along']['rate']:g}): over "
              f"updates {ALONG_FROM}-{ALONG_TO} the first-order term {c['first']:+.1e} +- "
              f"{c['first_se']:.0e} and the remainder {c['remainder']:+.1e} +- "
              f"{c['remainder_se']:.0e} nats per update")
    if "sign" in table:
        print("\n4. The sign line:")
        print("\n".join(sign_sentences(table["sign"])))


def run_section(output, processes, reuse, section, grid):
    """Run `grid` into the cache's `section` (``chains_and_steps``: :data:`CHAINS_GRID`;
    ``sweeps``: :data:`SWEEPS_GRID`)."""
    path = Path(output) / f"{STEM}.json"
    table = ex.read_cache(path)
    old = table.get(section) if reuse else None
    start = time.time()
    runs = ex.run_grid(grid, processes=processes, reuse=old)
    runs["wall_seconds"] = time.time() - start
    table[section] = runs
    ex.write_cache(table, path, table.pop("description"))
    return table


#: the CD-1 mechanism (referee TR-6): chapter 6's CD-1 run (4x4, seed 1, rate 0.3, full batch),
#: at these updates the mean CD-1 update's component along the exact gradient's unit vector
ALONG_RATE = 0.3
ALONG_SEED = 1
ALONG_STOPS = (300, 900, 1200, 2400, 3600, 4800, 6000)
#: one-step chains per training pattern at each stop (each conditioned on leaving its pattern,
#: :func:`moved_projections`), in chunks of ALONG_CHUNK drawn in turn from one generator
ALONG_CHAINS = 60_000
ALONG_CHUNK = 5_000
#: the run continued by hand from the first late stop to the last, every update's first-order
#: term and remainder recorded (:func:`first_order_and_remainder`)
ALONG_FROM, ALONG_TO = 3600, 6000
#: draws of one update at each late stop, for the remainder of one update and of the mean one
ALONG_DRAWS = 300


def moved_projections(model, gradient, v0, rng, *, weighted=True):
    """One unbiased draw per row of `v0` of the CD-1 statistics' projection on `gradient`
    (an :class:`rbm.Gradient`): ``v0 W_g p0 - v1 W_g p1 + (v0 - v1) b_g + (p0 - p1) c_g``,
    with ``p = p(h = 1 | v)``.

    A chain that returns to its start (``v1 = v0``) projects to 0 exactly, and most do, so
    instead of one plain draw of ``v1`` this draws ``h0 ~ p(h | v0)``, then ``v1`` from
    ``p(v1 | h0)`` conditioned on ``v1 != v0`` (the first pixel that differs, then the rest
    freely) and weighs the projection by ``P(v1 != v0 | h0)``: the same mean, a smaller
    variance.  (``weighted=False`` leaves the weight out: a wrong mean, for a test.)
    """
    p0 = model.prob_h_given_v(v0)
    h0 = model.sample_h_given_v(v0, rng=rng)
    pv = model.prob_v_given_h(h0)
    differ = np.where(v0 > 0.5, 1 - pv, pv)  # P(v1_i != v0_i | h0)
    same = np.cumsum(np.log1p(-differ), axis=1)
    moved = -np.expm1(same[:, -1])  # P(v1 != v0 | h0)
    first = np.exp(np.hstack([np.zeros((len(v0), 1)), same[:, :-1]])) * differ
    u = rng.random(len(v0)) * first.sum(axis=1)
    at = np.minimum((np.cumsum(first, axis=1) < u[:, None]).sum(axis=1), v0.shape[1] - 1)
    free = (rng.random(v0.shape) < pv).astype(float)
    v1 = np.where(np.arange(v0.shape[1]) < at[:, None], v0, free)
    rows = np.arange(len(v0))
    v1[rows, at] = 1 - v0[rows, at]
    p1 = model.prob_h_given_v(v1)
    g = gradient
    projection = ((v0 @ g.W * p0).sum(1) - (v1 @ g.W * p1).sum(1) + (v0 - v1) @ g.b
                  + (p0 - p1) @ g.c)
    return moved * projection if weighted else projection


def along_gradient(model, data, chains, rng, chunk=ALONG_CHUNK, draw=moved_projections):
    """The mean CD-1 update's component along the unit vector of the exact gradient of the
    mean log-likelihood, its standard error (from `chains` chains per row, each drawn by
    `draw`, :func:`moved_projections`), and the gradient's norm."""
    from rbm import exact

    g = exact.gradient(model, data)
    norm = float(np.sqrt((g.W**2).sum() + (g.b**2).sum() + (g.c**2).sum()))
    total, squares = np.zeros(len(data)), np.zeros(len(data))
    for start in range(0, chains, chunk):
        size = min(chunk, chains - start)
        draws = draw(model, g, np.repeat(data, size, axis=0), rng)
        draws = draws.reshape(len(data), size)
        total += draws.sum(axis=1)
        squares += (draws**2).sum(axis=1)
    mean = total / chains
    variance = (squares - chains * mean**2) / (chains - 1)
    se = np.sqrt((variance / chains).sum()) / len(data)
    return float(mean.mean() / norm), float(se / norm), norm


def _moved(model, step, rate):
    out = model.copy()
    out.W += rate * step.W
    out.b += rate * step.b
    out.c += rate * step.c
    return out


def first_order_and_remainder(model, data, updates, rate, rng, keep_model=False):
    """Continue `model` (a copy) for `updates` full-batch CD-1 updates ``theta += rate * d``,
    ``d = CD(1).gradient``, and split each update's change of the exact mean log-likelihood
    into its first-order term ``rate * grad(theta) . d`` and the remainder.  Summed, the two
    are the run's change exactly; the first-order terms' noise averages out over the updates.

    Returns the per-update means and standard errors of both, and the start and end values
    (with `keep_model`, also the continued model and every update's two terms).
    """
    from rbm import exact

    model = model.copy()
    first, rest = np.empty(updates), np.empty(updates)
    value = start = exact.log_likelihood(model, data)
    for t in range(updates):
        step = CD(1).gradient(model, data, rng=rng)
        first[t] = rate * step.flat() @ exact.gradient(model, data).flat()
        model = _moved(model, step, rate)
        new = exact.log_likelihood(model, data)
        rest[t] = new - value - first[t]
        value = new

    def se(x):
        return float(x.std(ddof=1) / np.sqrt(len(x)))

    out = {"updates": updates, "start": start, "end": value,
           "first": float(first.mean()), "first_se": se(first),
           "remainder": float(rest.mean()), "remainder_se": se(rest)}
    if keep_model:
        out.update(model=model, first_values=first, remainder_values=rest)
    return out


def one_update(model, data, draws, rate, rng):
    """At `model`: the mean change of the exact log-likelihood over `draws` single CD-1
    updates, the mean remainder beyond first order, and the remainder of their mean update
    (the update without its noise, up to 1/draws of it)."""
    from rbm import exact

    gradient = exact.gradient(model, data).flat()
    base = exact.log_likelihood(model, data)
    steps = [CD(1).gradient(model, data, rng=rng) for _ in range(draws)]
    changes = np.array([exact.log_likelihood(_moved(model, d, rate), data) - base
                        for d in steps])
    rest = changes - rate * np.array([d.flat() @ gradient for d in steps])
    mean = Gradient(**{name: np.mean([d.fields[name] for d in steps], axis=0)
                       for name in steps[0].fields})
    mean_rest = (exact.log_likelihood(_moved(model, mean, rate), data) - base
                 - rate * mean.flat() @ gradient)
    return {"change": float(changes.mean()),
            "change_se": float(changes.std(ddof=1) / np.sqrt(draws)),
            "remainder": float(rest.mean()),
            "remainder_se": float(rest.std(ddof=1) / np.sqrt(draws)),
            "mean_step_remainder": float(mean_rest)}


def run_along(chains=ALONG_CHAINS, stops=ALONG_STOPS):
    """The ``along`` section: chapter 6's CD-1 run retrained in pieces; at each stop its
    exact log-likelihood and :func:`along_gradient` (generator seeded by the stop)."""
    from rbm import exact

    data = ex.DATA_SETS["bars and stripes 4x4"][0]()
    model = ex.starting_model("bars and stripes 4x4", ALONG_SEED)
    rng, done, rows = np.random.default_rng(ALONG_SEED), 0, []
    start = time.process_time()
    with threadpool_limits(1, user_api="blas"):
        for until in stops:
            train(model, data, CD(1), learning_rate=ALONG_RATE, epochs=until - done,
                  batch_size=len(data), rng=rng)
            done = until
            along, se, norm = along_gradient(model, data, chains,
                                             np.random.default_rng(until))
            rows.append({"update": until, "log_likelihood": exact.log_likelihood(model, data),
                         "along": along, "se": se, "norm": norm})
            if until >= ALONG_FROM:
                rows[-1]["one_update"] = one_update(model, data, ALONG_DRAWS, ALONG_RATE,
                                                    np.random.default_rng(until + 1))
            if until == ALONG_FROM:
                continued = first_order_and_remainder(model, data, ALONG_TO - ALONG_FROM,
                                                      ALONG_RATE, np.random.default_rng(until))
            print(f"  {until:5d} updates: along {along:+.2e} +- {se:.1e}", flush=True)
    return {"rate": ALONG_RATE, "seed": ALONG_SEED, "chains": chains, "chunk": ALONG_CHUNK,
            "draws": ALONG_DRAWS, "stops": rows, "continued": continued,
            "cpu_seconds": time.process_time() - start}


#: chains per pattern of the low-noise counter-case (``along_many``)
ALONG_COPIES = 100


def run_along_many(copies=ALONG_COPIES, every=300):
    """The ``along_many`` section: chapter 6's CD-1 run with `copies` one-step chains per
    pattern (the data tiled), trained to :data:`ALONG_FROM`, then continued to
    :data:`ALONG_TO` by :func:`first_order_and_remainder` in pieces of `every` updates; the
    exact log-likelihood every `every` updates, and the split of the continued updates."""
    from rbm import exact

    data = ex.DATA_SETS["bars and stripes 4x4"][0]()
    many = np.tile(data, (copies, 1))
    model = ex.starting_model("bars and stripes 4x4", ALONG_SEED)
    rng = np.random.default_rng(ALONG_SEED)
    start = time.process_time()
    with threadpool_limits(1, user_api="blas"):
        history = train(model, many, CD(1), learning_rate=ALONG_RATE, epochs=ALONG_FROM,
                        batch_size=len(many), rng=rng, track_every=every)
        values = [float(v) for v in history.log_likelihood]
        pieces = []
        for _ in range((ALONG_TO - ALONG_FROM) // every):
            piece = first_order_and_remainder(model, many, every, ALONG_RATE, rng,
                                              keep_model=True)
            model = piece.pop("model")
            pieces.append(piece)
            values.append(exact.log_likelihood(model, data))
    first = np.concatenate([p.pop("first_values") for p in pieces])
    rest = np.concatenate([p.pop("remainder_values") for p in pieces])
    n = len(first)
    return {"rate": ALONG_RATE, "seed": ALONG_SEED, "copies": copies, "every": every,
            "log_likelihood": values,
            "continued": {"updates": n, "start": pieces[0]["start"], "end": pieces[-1]["end"],
                          "first": float(first.mean()),
                          "first_se": float(first.std(ddof=1) / np.sqrt(n)),
                          "remainder": float(rest.mean()),
                          "remainder_se": float(rest.std(ddof=1) / np.sqrt(n))},
            "cpu_seconds": time.process_time() - start}


def add_along(output, key="along", run=run_along):
    """Write the section `key` of the cache, from `run()`."""
    path = Path(output) / f"{STEM}.json"
    table = ex.read_cache(path)
    table[key] = run()
    ex.write_cache(table, path, table.pop("description"))
    return table


def add_sign(output, processes=1):
    path = Path(output) / f"{STEM}.json"
    table = ex.read_cache(path)
    table["sign"] = run_sign(processes)
    ex.write_cache(table, path, table.pop("description"))
    return table


def main_grid(output, processes, reuse, only=None, grid=GRID):
    """Run `grid` (:data:`GRID`; only on the data set `only`, if given) and write the
    cache."""
    path = Path(output) / f"{STEM}.json"
    old = ex.read_cache(path) if path.exists() else None
    if only is not None:
        grid = dataclasses.replace(grid, data_sets=(only,), seeds={only: grid.seeds_of(only)})
    start = time.time()
    table = ex.run_grid(grid, processes=processes, reuse=old if reuse else None)
    table["wall_seconds"] = time.time() - start
    for key in ("chains_and_steps", "sign", "sweeps", "along", "along_many"):
        if old is not None and key in old:
            table[key] = old[key]
    ex.write_cache(table, path, __doc__.split("\n\n")[0])
    return table


def main(output=OUTPUT, processes=1, reuse=False,
         parts=("main", "chains", "sign", "sweeps", "along", "along_many")):
    """Run the `parts` (``main``: :data:`GRID`; ``chains``: :data:`CHAINS_GRID`; ``sign``:
    :func:`run_sign`), writing the cache after each, and print the sentences."""
    start = time.time()
    for part in parts:
        if part == "main":
            main_grid(output, processes, reuse)
        elif part == "chains":
            run_section(output, processes, reuse, "chains_and_steps", CHAINS_GRID)
        elif part == "sign":
            add_sign(output, processes)
        elif part == "sweeps":
            run_section(output, processes, reuse, "sweeps", SWEEPS_GRID)
        elif part == "along":
            add_along(output)
        elif part == "along_many":
            add_along(output, "along_many", run_along_many)
        elif part.startswith("main:"):
            main_grid(output, processes, reuse, only=part[5:])
        else:
            raise ValueError(f"unknown part {part!r}")
    table = ex.read_cache(Path(output) / f"{STEM}.json")
    print(f"wall {time.time() - start:.0f} s")
    print_sentences(table)


if __name__ == "__main__":
    args = sys.argv[1:]
    reuse = "--reuse" in args
    processes = 1
    if "--processes" in args:
        i = args.index("--processes")
        processes = int(args[i + 1])
        del args[i:i + 2]
    parts = ("main", "chains", "sign", "sweeps", "along", "along_many")
    if "--parts" in args:
        i = args.index("--parts")
        parts = tuple(args[i + 1].split(","))
        del args[i:i + 2]
    if "--sentences" in args:
        parts = ()
    args = [a for a in args if not a.startswith("--")]
    main(*(args[:1] or [OUTPUT]), processes, reuse, parts)
