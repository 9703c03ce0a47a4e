"""One harness for the book's training comparisons, so that the protocol is written once.

The protocol is ``../shared/experiments.md``: each arm at its own best learning rate from a
grid, chosen on a validation quantity (here separate *validation seeds*: bars and stripes has
no held-out rows), never on the number then reported; a run's value is the mean over a window
of its last checkpoints, not one checkpoint; several seeds, reported as "n of m" with the range
of the differences; two budgets; a second data set; and the spread under a 1e-12 nudge of one
starting weight before a margin is quoted.

A *grid* (:class:`Grid`) is a set of arms (:class:`Arm`: estimator, momentum, weight decay,
batch size) x learning rates x seeds (reported and validation) x budgets x data sets
(:data:`DATA_SETS`).  :func:`run_grid` trains every (data set, arm, rate, seed) once, to the
largest budget, with :func:`rbm.training.train` and the exact log-likelihood at checkpoints (a
shorter budget is read from the same run: the updates do not depend on how many follow), then
reruns each arm at its chosen rates with one starting weight nudged by `grid.nudge`.  The result
is a JSON-able table (:func:`write_cache` / :func:`read_cache`), and everything after it is a
function of the table alone:

* :func:`window_mean` -- a run's value at a budget; :func:`best_window` -- its best window
  (what "keep the best model" keeps), :func:`read_run` either;
* :func:`best_rates` -- each arm's rate, chosen on the validation seeds;
* :func:`compare` -- arm A against arm B at their best rates: "n of m seeds, by a to b nats",
  and the same count and margins again for the nudged runs;
* :func:`sentence` -- that comparison in words; :func:`assert_sentence` -- a stated sentence
  checked against the table (it fails on the opposite, on a count that a nudge moves and on a
  margin stated more finely than the nudge spread);
* :func:`rise_and_fall` -- did the runs of one arm at one rate fall after their best window,
  by more than a threshold and the nudge spread; where was the peak, and what does keeping
  the best model gain; :func:`fall_sentence` and :func:`assert_falls` -- that in words and
  as a check.

Cells are seeded one by one (seed ``s`` draws the starting weights, ``100 + s`` the training),
so the runs of a process pool are bit-identical to serial ones and arms share their seeds
(paired comparisons).  Used by ``tools/run_momentum.py`` (``make momentum``) and
``tools/run_core_recipe.py`` (``make core-recipe``).
"""

import json
import math
import multiprocessing
import re
import signal
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import rbm
from rbm import exact
from rbm.datasets import bars_and_stripes
from rbm.estimators import CD, PCD
from rbm.short_run import noisy_prototypes
from rbm.training import train

__all__ = ["Arm", "Grid", "DATA_SETS", "TRAIN_SEED_OFFSET", "INIT_SCALE", "VALUES",
           "starting_model", "run_cell", "run_grid", "window_mean", "window_points",
           "best_window", "read_run", "best_rates", "compare", "sentence", "assert_sentence",
           "Fall", "rise_and_fall", "fall_sentence", "assert_falls", "write_cache",
           "read_cache"]

#: Seed ``s`` draws the starting model; ``TRAIN_SEED_OFFSET + s`` the batches and Gibbs draws.
TRAIN_SEED_OFFSET = 100
#: The starting weights' standard deviation (the book's recipe: N(0, 0.01^2)).
INIT_SCALE = 0.01

#: name -> (function of no argument returning the training rows, number of hidden units)
DATA_SETS = {
    "bars and stripes 3x3": (lambda: bars_and_stripes(3), 16),
    "bars and stripes 4x4": (lambda: bars_and_stripes(4), 16),
    "noisy prototypes 9": (lambda: noisy_prototypes(100, n_visible=9, rng=0)[0], 16),
}

_ESTIMATOR = re.compile(r"(P?CD)-([1-9][0-9]*)")


@dataclass(frozen=True)
class Arm:
    """One arm of a comparison: what is held fixed while the learning rate is tuned.

    Parameters
    ----------
    estimator : str
        ``"CD-k"`` or ``"PCD-k"`` (PCD with `chains` persistent chains).
    momentum : float, default 0.0
    weight_decay : float, default 0.0
    batch_size : int, optional
        Rows per update; ``None`` is the full batch.
    chains : int, default 100
        PCD's persistent chains (ignored for CD).
    """

    estimator: str = "CD-1"
    momentum: float = 0.0
    weight_decay: float = 0.0
    batch_size: int = None
    chains: int = 100

    def __post_init__(self):
        if not isinstance(self.estimator, str) or not _ESTIMATOR.fullmatch(self.estimator):
            raise ValueError(f"estimator must be 'CD-k' or 'PCD-k' with k >= 1, got "
                             f"{self.estimator!r}")
        for name in ("momentum", "weight_decay"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{name} must be a number, got {type(value).__name__}")
        if not 0 <= self.momentum < 1:
            raise ValueError(f"momentum must be in [0, 1), got {self.momentum}")
        if not self.weight_decay >= 0:
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay}")
        if self.batch_size is not None and not (
                isinstance(self.batch_size, int) and self.batch_size >= 1):
            raise ValueError(f"batch_size must be None or a positive int, got "
                             f"{self.batch_size!r}")
        if isinstance(self.chains, bool) or not isinstance(self.chains, int) or self.chains < 1:
            raise ValueError(f"chains must be a positive int, got {self.chains!r}")

    def make_estimator(self):
        kind, k = _ESTIMATOR.fullmatch(self.estimator).groups()
        return CD(int(k)) if kind == "CD" else PCD(self.chains, k=int(k))


def _per_name(field, values, names, what):
    """`values` (a dict giving each of `names`, `what`, a non-empty sequence) as tuples in
    `names`'s order; TypeError or ValueError naming `field` otherwise."""
    if set(values) != set(names):
        raise ValueError(f"{field}, a dict, must name {what} {list(names)}, got {list(values)}")
    for name, sequence in values.items():
        if isinstance(sequence, (str, bytes)) or not hasattr(sequence, "__iter__"):
            raise TypeError(f"{field}[{name!r}] must be a sequence, got "
                            f"{type(sequence).__name__}")
        if not tuple(sequence):
            raise ValueError(f"{field}[{name!r}] must not be empty")
    return {name: tuple(values[name]) for name in names}


@dataclass(frozen=True)
class Grid:
    """A grid of training runs: arms x learning rates x seeds x budgets x data sets.

    Parameters
    ----------
    arms : dict of str to Arm
    rates : sequence of float, or dict of str to sequence of float
        Positive learning rates; each arm's is chosen among them per data set and budget.
        A dict gives each arm its own (say, a grid shifted by the factor by which the arm
        changes the effective step, so that its best rate is not at an end).
    seeds : sequence of int, or dict of str to sequence of int
        The reported seeds; a dict gives each data set its own (say, fewer on a second data
        set that is there to see whether a result carries over).
    validation_seeds : sequence of int
        Seeds on which the rates are chosen; none of them among `seeds`.
    budgets : sequence of int
        Numbers of updates; each a multiple of `points`.
    data_sets : sequence of str
        Keys of :data:`DATA_SETS`.
    points : int, default 20
        Checkpoints per budget: the exact log-likelihood every ``budget / points`` updates.
    window : int, default 5
        A run's value at a budget is the mean of its last `window` checkpoints of that budget.
    nudge : float, default 1e-12
        Added to one starting weight in the reruns that measure the rounding spread
        (0: no reruns).
    """

    arms: dict
    rates: tuple
    seeds: tuple
    validation_seeds: tuple
    budgets: tuple
    data_sets: tuple
    points: int = 20
    window: int = 5
    nudge: float = 1e-12

    def __post_init__(self):
        if not isinstance(self.arms, dict):
            raise TypeError(f"arms must be a dict of name -> Arm, got {type(self.arms).__name__}")
        if not self.arms:
            raise ValueError("arms must not be empty")
        for name, arm in self.arms.items():
            if not isinstance(arm, Arm):
                raise TypeError(f"arms[{name!r}] must be an Arm, got {type(arm).__name__}")
        for field, owners, what in (("rates", self.arms, "the arms"),
                                    ("seeds", self.data_sets, "the data sets")):
            if isinstance(getattr(self, field), dict):
                object.__setattr__(self, field,
                                   _per_name(field, getattr(self, field), owners, what))
        for name in ("rates", "seeds", "validation_seeds", "budgets", "data_sets"):
            value = getattr(self, name)
            if name in ("rates", "seeds") and isinstance(value, dict):
                continue
            if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
                raise TypeError(f"{name} must be a sequence, got {type(value).__name__}")
            object.__setattr__(self, name, tuple(value))
            if not getattr(self, name):
                raise ValueError(f"{name} must not be empty")
        for rate in {r for arm in self.arms for r in self.rates_of(arm)}:
            if isinstance(rate, bool) or not isinstance(rate, (int, float)):
                raise TypeError(f"rates must hold numbers, got {rate!r}")
            if not (math.isfinite(rate) and rate > 0):
                raise ValueError(f"rates must be positive, got {rate!r}")
        reported = {s for d in self.data_sets for s in self.seeds_of(d)}
        for name, values in (("seeds", reported), ("validation_seeds", self.validation_seeds),
                             ("budgets", self.budgets)):
            for value in values:
                if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                    raise TypeError(f"{name} must hold ints, got {value!r}")
        if reported & set(self.validation_seeds):
            raise ValueError(f"validation_seeds must not repeat a reported seed: "
                             f"{sorted(reported & set(self.validation_seeds))}")
        for name in self.data_sets:
            if name not in DATA_SETS:
                raise ValueError(f"data_sets: unknown data set {name!r}; known: "
                                 f"{sorted(DATA_SETS)}")
        for name in ("points", "window"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if self.window > self.points:
            raise ValueError(f"window ({self.window}) must not exceed points ({self.points})")
        for budget in self.budgets:
            if budget < 1 or budget % self.points:
                raise ValueError(f"budgets must be positive multiples of points "
                                 f"({self.points}), got {budget}")
        if not (isinstance(self.nudge, (int, float)) and self.nudge >= 0):
            raise ValueError(f"nudge must be a number >= 0, got {self.nudge!r}")

    def rates_of(self, arm):
        """The learning rates of `arm`."""
        return self.rates[arm] if isinstance(self.rates, dict) else self.rates

    def seeds_of(self, data_set):
        """The reported seeds of `data_set`."""
        return self.seeds[data_set] if isinstance(self.seeds, dict) else self.seeds

    @property
    def checkpoints(self):
        """The updates at which every run measures the log-likelihood (sorted, with 0)."""
        points = {0}
        for budget in self.budgets:
            points.update(range(0, budget + 1, budget // self.points))
        return sorted(points)

    def to_json(self):
        return {"arms": {name: asdict(arm) for name, arm in self.arms.items()},
                "rates": ({k: list(v) for k, v in self.rates.items()}
                          if isinstance(self.rates, dict) else list(self.rates)),
                "seeds": ({k: list(v) for k, v in self.seeds.items()}
                          if isinstance(self.seeds, dict) else list(self.seeds)),
                "validation_seeds": list(self.validation_seeds), "budgets": list(self.budgets),
                "data_sets": list(self.data_sets), "points": self.points,
                "window": self.window, "nudge": self.nudge}

    @classmethod
    def from_json(cls, d):
        return cls(**dict(d, arms={name: Arm(**arm) for name, arm in d["arms"].items()}))


def starting_model(data_set, seed, *, nudge=0.0):
    """The model a cell starts from: ``RBM.random(n_visible, n_hidden, scale=INIT_SCALE,
    rng=seed)``, with `nudge` added to the weight from the centre visible unit (the centre
    pixel of a square image) to the first hidden unit."""
    make, n_hidden = DATA_SETS[data_set]
    n_visible = make().shape[1]
    model = rbm.RBM.random(n_visible, n_hidden, scale=INIT_SCALE, rng=seed)
    if nudge:
        model.W[n_visible // 2, 0] += nudge
    return model


def run_cell(data_set, arm, rate, seed, checkpoints, *, nudge=0.0):
    """Train one cell and measure the exact mean log-likelihood of the data at `checkpoints`.

    Returns ``{"log_likelihood": [...], "diverged": None or the update}``, the values at
    `checkpoints` (``None`` from a divergence on).  The run is one call of
    :func:`rbm.training.train` (momentum carries through), tracked at the greatest common
    divisor of the checkpoints.
    """
    if data_set not in DATA_SETS:
        raise ValueError(f"data_set: unknown data set {data_set!r}; known: {sorted(DATA_SETS)}")
    if not isinstance(arm, Arm):
        raise TypeError(f"arm must be an Arm, got {type(arm).__name__}")
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not rate > 0:
        raise ValueError(f"rate must be a positive number, got {rate!r}")
    data = DATA_SETS[data_set][0]()
    model = starting_model(data_set, seed, nudge=nudge)
    n = len(data)
    batch_size = n if arm.batch_size is None else arm.batch_size
    per_epoch = -(-n // batch_size)
    budget = max(checkpoints)
    if budget % per_epoch:
        raise ValueError(f"the budget {budget} is not a whole number of passes of "
                         f"{per_epoch} updates")
    every = math.gcd(*[c for c in checkpoints if c]) if budget else 1
    measured = {}
    diverged = None
    try:
        history = train(model, data, arm.make_estimator(), learning_rate=float(rate),
                        epochs=budget // per_epoch, batch_size=batch_size,
                        rng=np.random.default_rng(TRAIN_SEED_OFFSET + seed),
                        momentum=arm.momentum, weight_decay=arm.weight_decay,
                        track_every=every)
        measured = dict(zip(history.updates, history.log_likelihood))
    except ValueError as err:
        if "diverged" not in str(err):
            raise
        diverged = int(re.search(r"epoch (\d+)", str(err)).group(1)) * per_epoch
    values = [measured.get(c) for c in checkpoints]
    if diverged is None and None in values:
        raise RuntimeError(f"checkpoints {checkpoints} not all measured")
    return {"log_likelihood": [None if v is None else float(v) for v in values],
            "diverged": diverged}


def _task(args):
    data_set, arm, rate, seed, checkpoints, nudge = args
    return run_cell(data_set, arm, rate, seed, checkpoints, nudge=nudge)


def _worker_init():
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and ends us
    threadpool_limits(1, user_api="blas")


def _run_tasks(tasks, processes, progress):
    """Run `tasks` (argument tuples of :func:`run_cell`) serially or in a pool, in order."""
    results = []
    if processes == 1:
        with threadpool_limits(1, user_api="blas"):
            for i, task in enumerate(tasks):
                results.append(_task(task))
                progress(i + 1, len(tasks))
        return results
    pool = multiprocessing.get_context("fork").Pool(processes, initializer=_worker_init)
    try:
        iterator = pool.imap(_task, tasks)
        while len(results) < len(tasks):
            try:  # poll, so that Ctrl-C in the parent is seen within a fraction of a second
                results.append(iterator.next(timeout=0.2))
            except multiprocessing.TimeoutError:
                continue
            progress(len(results), len(tasks))
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
    return results


def _print_progress(done, total):
    if done == total or done % max(1, total // 20) == 0:
        print(f"  {done}/{total} runs", flush=True)


def _cell(data_set, arm, rate, seed, nudge, run):
    return dict(data_set=data_set, arm=arm, rate=rate, seed=seed, nudge=nudge, **run)


def _reusable(reuse, grid):
    """The cells of the table `reuse` that `grid` would compute the same way, by key."""
    if reuse is None:
        return {}
    if not isinstance(reuse, dict) or "cells" not in reuse:
        raise TypeError("reuse must be a table from run_grid or read_cache")
    if reuse.get("checkpoints") != grid.checkpoints:
        return {}
    arms = reuse["grid"]["arms"]
    same = {name for name, arm in grid.arms.items() if arms.get(name) == asdict(arm)}
    return {(c["data_set"], c["arm"], c["rate"], c["seed"], c["nudge"]): c
            for c in reuse["cells"] if c["arm"] in same}


def run_grid(grid, *, processes=1, progress=_print_progress, reuse=None):
    """Run `grid`: every cell unnudged, then each arm at its chosen rates, nudged.

    Parameters
    ----------
    grid : Grid
    processes : int, default 1
        Worker processes (forked; each on one BLAS thread).  The cells are seeded one by one,
        so the table is the same, bit for bit, for any number.
    progress : callable, optional
        Called as ``progress(done, total)`` after each run; ``None`` for silence.
    reuse : dict, optional
        A table of an earlier grid: its cells with the same data set, arm (the same
        :class:`Arm`), rate, seed, nudge and checkpoints are taken over instead of run again
        (the runs are seeded one by one, so they would come out the same).

    Returns
    -------
    dict
        ``{"grid": grid.to_json(), "checkpoints": [...], "cells": [...], "cpu_seconds": {...}}``,
        each cell ``{"data_set", "arm", "rate", "seed", "nudge", "log_likelihood",
        "diverged"}``.
    """
    if not isinstance(grid, Grid):
        raise TypeError(f"grid must be a Grid, got {type(grid).__name__}")
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise ValueError(f"processes must be a positive int, got {processes!r}")
    progress = progress or (lambda done, total: None)
    checkpoints = grid.checkpoints
    old = _reusable(reuse, grid)

    def run(keys, nudge):
        todo = [key for key in keys if key + (nudge,) not in old]
        runs = dict(zip(todo, _run_tasks([(d, grid.arms[a], r, s, checkpoints, nudge)
                                          for d, a, r, s in todo], processes, progress)))
        return [_cell(*key, nudge, runs[key]) if key in runs else old[key + (nudge,)]
                for key in keys]

    keys = [(d, a, r, s) for d in grid.data_sets for a in grid.arms for r in grid.rates_of(a)
            for s in grid.seeds_of(d) + grid.validation_seeds]
    start = time.process_time()
    table = {"grid": grid.to_json(), "checkpoints": checkpoints, "cells": run(keys, 0.0)}
    cpu = {"main": time.process_time() - start}
    if grid.nudge:
        chosen = sorted({(d, a, rate) for d in grid.data_sets for b in grid.budgets
                         for a, rate in best_rates(table, d, b).items()},
                        key=lambda x: (grid.data_sets.index(x[0]), list(grid.arms).index(x[1]),
                                       x[2]))
        keys = [(d, a, r, s) for d, a, r in chosen for s in grid.seeds_of(d)]
        start = time.process_time()
        table["cells"] += run(keys, grid.nudge)
        cpu["nudged"] = time.process_time() - start
    # of this process (with processes > 1 the workers' is not in it), for the cells run now
    table["cpu_seconds"] = cpu
    if old:
        table["reused_cells"] = sum(c is old.get((c["data_set"], c["arm"], c["rate"], c["seed"],
                                                  c["nudge"])) for c in table["cells"])
    return table


# -- the table, read -----------------------------------------------------------------------

def window_points(budget, *, points, window):
    """The checkpoints whose mean is a run's value at `budget`: the last `window` of the
    `points` checkpoints spaced ``budget / points`` apart."""
    step = budget // points
    return [budget - i * step for i in range(window - 1, -1, -1)]


def window_mean(checkpoints, values, budget, *, points, window):
    """The mean of `values` (measured at `checkpoints`) over the window of `budget`
    (:func:`window_points`); ``-inf`` if the run diverged before the window's end.

    >>> window_mean([0, 10, 20, 30, 40], [0.0, 1.0, 2.0, 3.0, 5.0], 40, points=4, window=2)
    4.0
    """
    at = dict(zip(checkpoints, values))
    want = window_points(budget, points=points, window=window)
    missing = [c for c in want if c not in at]
    if missing:
        raise ValueError(f"budget {budget}: checkpoints {missing} were not measured")
    picked = [at[c] for c in want]
    if any(v is None or not math.isfinite(v) for v in picked):
        return -math.inf
    return float(np.mean(picked))


def best_window(checkpoints, values, budget, *, points, window):
    """A run's best window within `budget`: the highest mean of `window` consecutive
    checkpoints among the ``points + 1`` spaced ``budget / points`` apart from update 0 (the
    value of "keep the best model seen", read as a window), with the first and last update of
    that window.  A window with a diverged point (``None``, not finite) counts as ``-inf``.

    Returns ``(mean, first, last)``.

    >>> best_window([0, 10, 20, 30, 40], [0.0, 3.0, 5.0, 2.0, 1.0], 40, points=4, window=2)
    (4.0, 10, 20)
    """
    at = dict(zip(checkpoints, values))
    step = budget // points
    want = list(range(0, budget + 1, step))
    missing = [c for c in want if c not in at]
    if missing:
        raise ValueError(f"budget {budget}: checkpoints {missing} were not measured")
    best = (-math.inf, want[0], want[window - 1])
    for i in range(len(want) - window + 1):
        picked = [at[c] for c in want[i:i + window]]
        if any(v is None or not math.isfinite(v) for v in picked):
            continue
        mean = float(np.mean(picked))
        if mean > best[0]:
            best = (mean, want[i], want[i + window - 1])
    return best


#: How a run is read at a budget: its final window, or its best window ("keep the best").
VALUES = ("end", "best")


def read_run(checkpoints, values, budget, *, points, window, value="end"):
    """A run's value at `budget`: :func:`window_mean` (``value="end"``) or the mean of
    :func:`best_window` (``value="best"``)."""
    if value == "end":
        return window_mean(checkpoints, values, budget, points=points, window=window)
    if value == "best":
        return best_window(checkpoints, values, budget, points=points, window=window)[0]
    raise ValueError(f"value must be one of {VALUES}, got {value!r}")


def _check_table(table, data_set, budget, arms=()):
    grid = table["grid"]
    if data_set not in grid["data_sets"]:
        raise ValueError(f"data_set {data_set!r} is not in the grid: {grid['data_sets']}")
    if budget not in grid["budgets"]:
        raise ValueError(f"budget {budget!r} is not in the grid: {grid['budgets']}")
    for arm in arms:
        if arm not in grid["arms"]:
            raise ValueError(f"unknown arm {arm!r}; the grid's arms: {list(grid['arms'])}")


def _cells(table, data_set, arm, rate, seeds, nudge=0.0):
    """The cells at (data_set, arm, rate, nudge) for `seeds`, in order."""
    found = {c["seed"]: c for c in table["cells"]
             if c["data_set"] == data_set and c["arm"] == arm and c["rate"] == rate
             and c["nudge"] == nudge}
    missing = [s for s in seeds if s not in found]
    if missing:
        raise ValueError(f"no run of {arm!r} at rate {rate} on {data_set!r} (nudge {nudge}) "
                         f"for seeds {missing}")
    return [found[s] for s in seeds]


def _values(table, data_set, arm, rate, seeds, budget, nudge=0.0, value="end"):
    """Window means (or best windows) of the cells at (data_set, arm, rate) for `seeds`."""
    grid = table["grid"]
    return np.array([read_run(table["checkpoints"], c["log_likelihood"], budget,
                              points=grid["points"], window=grid["window"], value=value)
                     for c in _cells(table, data_set, arm, rate, seeds, nudge)])


def _rates(grid, arm):
    """`arm`'s learning rates in a table's grid (shared, or the arm's own)."""
    return grid["rates"][arm] if isinstance(grid["rates"], dict) else grid["rates"]


def _seeds(grid, data_set):
    """The reported seeds of `data_set` in a table's grid (shared, or its own)."""
    return grid["seeds"][data_set] if isinstance(grid["seeds"], dict) else grid["seeds"]


def best_rates(table, data_set, budget, value="end"):
    """Each arm's learning rate: the one with the highest mean value over the *validation*
    seeds (never the reported ones) at `budget` on `data_set`.  Ties go to the smaller rate.
    `value` (:data:`VALUES`) is how a run is read: by its final or its best window."""
    _check_table(table, data_set, budget)
    grid = table["grid"]
    best = {}
    for arm in grid["arms"]:
        scores = [(_values(table, data_set, arm, r, grid["validation_seeds"], budget,
                           value=value).mean(), -r)
                  for r in _rates(grid, arm)]
        best[arm] = -max(scores)[1]
    return best


@dataclass
class Comparison:
    """Arm `a` against arm `b` at their best rates on one data set and budget.

    ``n`` of ``m`` reported seeds had a above b; the differences a - b (window means, nats)
    ran from ``low`` to ``high``.  ``n_nudged``, ``low_nudged``, ``high_nudged``: the same
    with one starting weight nudged (``None`` without nudged runs); ``spread``: the largest
    change of a difference under the nudge.  ``edge``: the arms whose rate is at an end of
    the grid's rates (the best may lie outside it).  ``value``: how the runs were read
    (:data:`VALUES`: final window, or best window).  ``budget_b``: `b`'s budget when it
    differs from `a`'s (:func:`compare`'s `against`).
    """

    a: str
    b: str
    data_set: str
    budget: int
    rate_a: float
    rate_b: float
    n: int
    m: int
    low: float
    high: float
    mean_a: float
    mean_b: float
    n_nudged: int = None
    low_nudged: float = None
    high_nudged: float = None
    spread: float = None
    edge: list = field(default_factory=list)
    differences: list = field(default_factory=list)
    value: str = "end"
    budget_b: int = None


def compare(table, a, b, *, data_set, budget, rates=None, value="end", against=None):
    """Arm `a` against arm `b` on `data_set` at `budget`, each at its best rate
    (:func:`best_rates`), over the reported seeds: a :class:`Comparison`.

    `value` (:data:`VALUES`) reads each run by its final window (``"end"``) or by its best
    window (``"best"``: the model "keep the best" keeps); the rates are chosen the same way.

    `rates` (arm -> rate) fixes the rates instead, for a claim made at one stated setting;
    the nudge spread is then ``None`` unless the nudged runs happen to be at those rates.

    `against` ``(table_b, budget_b)`` reads arm `b` from another table at another budget
    (each arm's rate chosen on the validation seeds at its own budget): a comparison at an
    equal cost other than the number of updates, say CD-1 after ten times as many updates as
    CD-10 (equal Gibbs sweeps).  The two tables must share the data set's reported seeds.
    """
    if value not in VALUES:
        raise ValueError(f"value must be one of {VALUES}, got {value!r}")
    table_b, budget_b = (table, budget) if against is None else _against(against)
    if against is None:
        _check_table(table, data_set, budget, (a, b))
        if a == b:
            raise ValueError(f"a and b must be two arms, got {a!r} twice")
    else:
        _check_table(table, data_set, budget, (a,))
        _check_table(table_b, data_set, budget_b, (b,))
    grid, grid_b = table["grid"], table_b["grid"]
    if rates is None:
        rates = {a: best_rates(table, data_set, budget, value)[a],
                 b: best_rates(table_b, data_set, budget_b, value)[b]}
    else:
        if not isinstance(rates, dict) or set(rates) != {a, b}:
            raise ValueError(f"rates must map {a!r} and {b!r} to a rate of the grid, got "
                             f"{rates!r}")
        for arm, g in ((a, grid), (b, grid_b)):
            if rates[arm] not in _rates(g, arm):
                raise ValueError(f"rates: {rates[arm]!r} is not a rate of {arm!r} in the grid "
                                 f"{_rates(g, arm)}")
    seeds = _seeds(grid, data_set)
    if list(_seeds(grid_b, data_set)) != list(seeds):
        raise ValueError(f"against: the tables' seeds of {data_set!r} differ")
    va = _values(table, data_set, a, rates[a], seeds, budget, value=value)
    vb = _values(table_b, data_set, b, rates[b], seeds, budget_b, value=value)
    d = va - vb
    out = Comparison(a, b, data_set, budget, rates[a], rates[b], int(np.sum(d > 0)), len(d),
                     float(d.min()), float(d.max()), float(va.mean()), float(vb.mean()),
                     edge=[arm for arm, g in ((a, grid), (b, grid_b))
                           if rates[arm] in (min(_rates(g, arm)), max(_rates(g, arm)))],
                     differences=d.tolist(), value=value,
                     budget_b=None if against is None else budget_b)

    def nudged(t, arm):
        return bool(t["grid"]["nudge"]) and any(
            c["data_set"] == data_set and c["nudge"] == t["grid"]["nudge"] and
            (c["arm"], c["rate"]) == (arm, rates[arm]) for c in t["cells"])

    if nudged(table, a) and nudged(table_b, b):
        na = _values(table, data_set, a, rates[a], seeds, budget, grid["nudge"], value)
        nb = _values(table_b, data_set, b, rates[b], seeds, budget_b, grid_b["nudge"], value)
        # each arm nudged against the other unnudged and both nudged: the worst change
        moved = [na - vb, va - nb, na - nb]
        out.n_nudged = int(np.sum(moved[2] > 0))
        out.low_nudged, out.high_nudged = float(moved[2].min()), float(moved[2].max())
        with np.errstate(invalid="ignore"):
            out.spread = float(max(np.max(np.abs(x - d)) for x in moved))
    return out


def _against(against):
    if (not isinstance(against, tuple) or len(against) != 2
            or not isinstance(against[0], dict) or "cells" not in against[0]):
        raise TypeError("against must be a pair (table, budget), the table from run_grid or "
                        "read_cache")
    return against


def _decimals(spread):
    """Decimals a margin may be stated to: its half unit not below the nudge spread."""
    if spread is None or spread == 0:
        return 2
    if not math.isfinite(spread):
        return 0
    return max(0, min(2, math.floor(-math.log10(2 * spread))))


def _margins(c, low, high, places):
    fmt = f"{{:+.{places}f}}"
    if c.n == c.m:
        return f", by {fmt.format(low)} to {fmt.format(high)} nats"
    return f" ({c.a} - {c.b} from {fmt.format(low)} to {fmt.format(high)} nats)"


def _verb(c):
    return "ended above" if c.value == "end" else "had its best window above that of"


def _budgets(budget, budget_b):
    return f"{budget}" if budget_b is None else f"{budget} and {budget_b}"


def sentence(c):
    """A :class:`Comparison` in words: "a ended above b in n of m seeds, by low to high nats"
    (or, when not in all, the range of the differences), with the rates and the count and
    spread under the nudge."""
    places = _decimals(c.spread)
    text = (f"{c.a} {_verb(c)} {c.b} in {c.n} of {c.m} seeds{_margins(c, c.low, c.high, places)}"
            f" ({c.data_set}, {_budgets(c.budget, c.budget_b)} updates; rates {c.rate_a:g} and "
            f"{c.rate_b:g}")
    if c.edge:
        text += f"; {' and '.join(c.edge)} at an end of the grid"
    text += ")"
    if c.spread is not None:
        text += f"; one weight nudged: {c.n_nudged} of {c.m}, spread {c.spread:.1g} nats"
    return text


def assert_sentence(table, a, b, *, data_set, budget, n, m=None, by=None, decimals=None,
                    rates=None, label=None, value="end", against=None):
    """Assert "a ended above b in n of m seeds[, by by[0] to by[1] nats]" on the table.

    The count must be `n` (and `m` the seeds), also in the nudged runs; the margins
    `by`, stated to `decimals` places (default: as many as the nudge spread allows), must
    round to those of the table, and may not be stated more finely than the nudge spread
    (half a unit of the last stated place at least the spread).  `rates` (arm -> rate) states
    the comparison at fixed rates instead of each arm's best (see :func:`compare`); `value`
    reads the runs by their final or best window (:data:`VALUES`); `against` reads `b` from
    another table and budget (:func:`compare`).  Prints the verdict (with `label`) through
    :func:`rbm.checks.verdict` and returns the :class:`Comparison`.

    Raises
    ------
    AssertionError
        If the table says otherwise.
    ValueError
        For an unknown arm, data set or budget.
    """
    from rbm.checks import verdict

    c = compare(table, a, b, data_set=data_set, budget=budget, rates=rates, value=value,
                against=against)
    budgets = _budgets(budget, c.budget_b)
    where = f"{a} over {b}, {data_set}, {budgets} updates" + (
        "" if value == "end" else ", best windows")
    if m is not None and m != c.m:
        raise AssertionError(f"{where}: {c.m} seeds in the table, not {m}")
    if c.n != n:
        raise AssertionError(f"{where}: ahead in {c.n} of {c.m} seeds, not {n}")
    if c.n_nudged is not None and c.n_nudged != n:
        raise AssertionError(f"{where}: ahead in {n} of {c.m} seeds, but in {c.n_nudged} "
                             f"with one weight nudged by {table['grid']['nudge']:g}")
    if by is not None:
        allowed = _decimals(c.spread)
        decimals = allowed if decimals is None else decimals
        if decimals > allowed:
            raise AssertionError(f"{where}: margins stated to {decimals} decimals, but the "
                                 f"nudge spread is {c.spread:.2g} nats")
        found = (round(c.low, decimals), round(c.high, decimals))
        if tuple(round(x, decimals) for x in by) != found:
            raise AssertionError(f"{where}: by {found[0]} to {found[1]} nats, not "
                                 f"{by[0]} to {by[1]}")
    text = f"{a} {_verb(c)} {b} in {c.n} of {c.m} seeds"
    if by is not None:
        text += _margins(c, by[0], by[1], decimals)
    spread = "" if c.spread is None else f", 1e-12 nudge spread {c.spread:.1g} nats"
    how = (f"each arm at its best rate chosen on {len(table['grid']['validation_seeds'])} "
           f"other seeds: " if rates is None else "at the stated rates ")
    verdict(f"{text} ({data_set}, {budgets} updates, {how}{c.rate_a:g} and "
            f"{c.rate_b:g}{spread})", label)
    return c


@dataclass
class Fall:
    """How far the runs of one arm at one rate fell after their best window.

    Over the ``m`` reported seeds, each run's best window (:func:`best_window`) within
    `budget` and its final window (:func:`window_mean`): ``falls`` the differences best -
    final (nats, >= 0; what "keep the best model" gains over the last model), ``peaks`` the
    centre update of each best window, ``n`` the runs that fell by more than `threshold`
    and by more than the nudge spread.  ``spread``: the largest change of a fall when one
    starting weight is nudged, from the nudged runs at this rate (``spread_rate``) or, if
    there are none, the largest over this arm's nudged runs at other rates on this data set
    (``None`` without nudged runs).
    """

    arm: str
    rate: float
    data_set: str
    budget: int
    threshold: float
    n: int
    m: int
    falls: list
    peaks: list
    best: list
    end: list
    spread: float = None
    spread_rate: float = None

    @property
    def low(self):
        return min(self.falls)

    @property
    def high(self):
        return max(self.falls)


def _falls(table, cells, budget):
    grid = table["grid"]
    out = []
    for c in cells:
        best, first, last = best_window(table["checkpoints"], c["log_likelihood"], budget,
                                        points=grid["points"], window=grid["window"])
        end = window_mean(table["checkpoints"], c["log_likelihood"], budget,
                          points=grid["points"], window=grid["window"])
        out.append((best, (first + last) / 2, end, best - end if math.isfinite(end) else
                    math.inf))
    return out


def rise_and_fall(table, arm, rate, *, data_set, budget, threshold=0.1):
    """Did the runs of `arm` at `rate` fall after their peak?  A :class:`Fall` over the
    reported seeds: best window against final window within `budget` (a shorter budget is
    read from the same runs), counted when the fall exceeds `threshold` nats and the nudge
    spread."""
    _check_table(table, data_set, budget, (arm,))
    grid = table["grid"]
    if rate not in _rates(grid, arm):
        raise ValueError(f"rate {rate!r} is not a rate of {arm!r} in the grid "
                         f"{_rates(grid, arm)}")
    seeds = _seeds(grid, data_set)
    read = _falls(table, _cells(table, data_set, arm, rate, seeds), budget)
    falls = [r[3] for r in read]
    spread, spread_rate = None, None
    if grid["nudge"]:
        nudged = {}
        for c in table["cells"]:
            if (c["data_set"], c["arm"], c["nudge"]) == (data_set, arm, grid["nudge"]):
                nudged.setdefault(c["rate"], set()).add(c["seed"])
        usable = [r for r, s in nudged.items() if set(seeds) <= s]
        if usable:
            spreads = {}
            for r in usable:
                mine = falls if r == rate else [x[3] for x in _falls(
                    table, _cells(table, data_set, arm, r, seeds), budget)]
                moved = [x[3] for x in _falls(
                    table, _cells(table, data_set, arm, r, seeds, grid["nudge"]), budget)]
                with np.errstate(invalid="ignore"):
                    d = np.abs(np.array(moved) - np.array(mine))
                spreads[r] = float(np.nanmax(np.where(np.isnan(d), np.inf, d)))
            spread_rate = rate if rate in spreads else max(spreads, key=spreads.get)
            spread = spreads[spread_rate]
    bar = max(threshold, spread or 0.0)
    return Fall(arm, rate, data_set, budget, threshold, int(sum(f > bar for f in falls)),
                len(falls), falls, [r[1] for r in read], [r[0] for r in read],
                [r[2] for r in read], spread, spread_rate)


def _fmt(x, places):
    return "diverged" if not math.isfinite(x) else f"{x:.{places}f}"


def fall_sentence(f):
    """A :class:`Fall` in words: "On <data set>, <arm> at rate r fell after its best window by
    more than 0.1 nats in n of m seeds within B updates (...)"."""
    places = _decimals(f.spread)
    peaks = sorted(f.peaks)
    text = (f"On {f.data_set}, {f.arm} at rate {f.rate:g} fell after its best window by more "
            f"than {f.threshold:g} nats in {f.n} of {f.m} seeds within {f.budget} updates "
            f"(best minus final window {_fmt(f.low, places)} to {_fmt(f.high, places)} nats; "
            f"best windows centred at updates {peaks[0]:g} to {peaks[-1]:g}, median "
            f"{float(np.median(peaks)):g}")
    if f.spread is not None:
        at = "" if f.spread_rate == f.rate else f" at rate {f.spread_rate:g}"
        text += f"; 1e-12 nudge spread of the fall {f.spread:.1g} nats{at}"
    return text + ")"


def assert_falls(table, arm, rate, *, data_set, budget, n, m=None, threshold=0.1, label=None):
    """Assert that `n` (of `m`) runs of `arm` at `rate` fell after their best window by more
    than `threshold` nats and the nudge spread (:func:`rise_and_fall`); print the verdict.

    Raises
    ------
    AssertionError
        If the table says otherwise.
    """
    from rbm.checks import verdict

    f = rise_and_fall(table, arm, rate, data_set=data_set, budget=budget, threshold=threshold)
    where = f"{arm} at rate {rate}, {data_set}, {budget} updates"
    if m is not None and m != f.m:
        raise AssertionError(f"{where}: {f.m} seeds in the table, not {m}")
    if f.n != n:
        raise AssertionError(f"{where}: fell by more than {max(threshold, f.spread or 0):.2g} "
                             f"nats in {f.n} of {f.m} seeds, not {n}")
    verdict(fall_sentence(f), label)
    return f


def write_cache(table, path, description):
    """Write `table` (from :func:`run_grid`) with `description` as JSON to `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dict({"description": description}, **table), indent=None,
                               separators=(",", ":")) + "\n")
    print(f"wrote {path}")


def read_cache(path):
    """The table written by :func:`write_cache`."""
    return json.loads(Path(path).read_text())
