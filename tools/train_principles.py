"""Train one RBM per training principle on two data sets and write what chapters/around_the_partition_function reads.

Usage: python tools/train_principles.py [OUTPUT_DIR] [PART ...]     (behind `make principles`)

PART is ``comparison``, ``prices``, ``update-prices``, ``bars-seeds``, ``bars-seeds-high``,
``consistency``, ``consistency-extra`` or ``consistency-ml`` (the default: all eight, in that
order; the two prices add to the file of the first, ``bars-seeds-high`` to that of
``bars-seeds``, the last two to the file of ``consistency``).
(``bars`` and ``digits``, optionally followed by ``:`` and a list of methods, are
parts of ``comparison``, for several processes; ``merge`` then joins them.)

``comparison`` (``principles_comparison.json``): eight ways to train the same
starting model (ML with the exact gradient, CD-1, CD-10, PCD-1,
pseudo-likelihood, ratio matching, minimum probability flow, noise-contrastive
estimation with noise fitted to the whole training set) on 4x4 bars and
stripes (16 x 8) and on the binarised 8x8 digits (64 x 10, 300 digits held
out), each at four learning rates (0.03, 0.1, 0.3, 1.0; no momentum) and the
same batches and epochs, from the starting model and batches of the seed pair
(1, 2); on the digits each method again for the seed pairs (3, 4) and (5, 6) at its
best rate of the first pair.  PL, RM and MPF compute their gradients by rank-one
updates (:func:`rbm.principles.neighbour_gradient`) and are counted at 4 passes.
Along the way: the exact log-likelihood of the training and held-out rows, the
objective of PL, RM and MPF (on bars and stripes), and one measurement at the *budget*, the compute of CD-1's whole run (passes per
training row, :func:`passes_per_row`), reached by a branch of the run that
stops within half an update of it.  Also the wall-clock time per update
(machine-dependent) and the final parameters of the ML and NCE runs.

``prices`` (added to ``principles_comparison.json``): the CPU time of an update of
every method in CD-1 updates, on each data set at its batch size (:func:`measure_costs`;
machine-dependent).  The chapter's comparison at equal compute charges each update this
price; the curves, which are per update, do not depend on it.

``consistency`` (``principles_consistency.json``): the fits of PL and NCE to
samples of N = 500 and 8000 rows of a 4x2 model over eight seeds (N * KL), and
denoising score matching at N = 8000 and 32000.

Everything is seeded and single-threaded and uses only :mod:`rbm`, so another
machine gives the same numbers up to floating-point rounding (the tests
re-derive the first measured segment of some runs and compare), except the
times.  Roughly a quarter of an hour of one idle core for the comparison and as
much for the consistency (much longer on a loaded machine: split the comparison into
parts run in several processes, e.g. ``digits/1-2``, ``bars/1-2`` and
``digits:PL,RM@1.0/3-4,5-6`` ..., then ``merge``).

``update-prices`` (added to ``principles_comparison.json``): the prices the chapter charges,
of whole updates as the runs made them (a segment of :func:`rbm.training.train`, fused for CD
and PCD; :func:`measure_update_costs`), in three sessions (``price_sessions``; ``prices`` their
median, the gradient call's prices kept as ``gradient_prices``).

``bars-seeds`` (``principles_bas_seeds.json``): bars and stripes again for the seed pairs
(3, 4) to (9, 10), every method at every rate, for the comparison at equal compute over seed
pairs (``bars-seeds/3-4,5-6`` and ``bars-seeds/7-8,9-10`` in two processes, then
``bars-seeds-merge``).  About 40 CPU seconds a pair.  ``bars-seeds-high`` adds every method
at rate 3, and RM at 10 (:data:`BAS_HIGH_RATES`), on all five pairs, (1, 2) included: on bars
and stripes most methods chose 1.0, the top of :data:`LEARNING_RATES` (about a minute).

``consistency-ml`` adds maximum likelihood's N * KL on 16 more samples (seeds 18 to 33).

``consistency-extra`` adds maximum likelihood's N * KL on the same samples and the
parameter errors of SM, NCE and DSM (s = 0.3) on the Gaussian model for the seeds
1, 3, 4 and N = 500, 8000, 32000.

``nudged`` (``principles_nudged.json``, behind ``make principles-nudged``, not in the
default parts): every digits run of ``principles_comparison.json`` (each method at the four
rates for the seed pair (1, 2), at its best rate for (3, 4) and (5, 6): 48 runs) again in
each replica of :data:`NUDGED_READINGS`: one weight of the starting model nudged by
1e-12 or -1e-12, everything else the same (the first two: the weight from the centre pixel,
which the digits switch on and off, to the first hidden unit, :func:`nudged_weight`, by
each of :data:`NUDGES`; then three more weights from pixels the digits switch on and off,
to other hidden units); where a replica picks another best rate on (1, 2) (PCD-1: 0.3, not
0.1), that method at that rate on the other pairs too, nudged and not (``+0``).  The
digits runs amplify rounding (another processor's BLAS kernel, or a nudge, moves their
final values by up to two nats), so the chapter states about them only what holds on the
stored runs and on every nudged replica, with the range over them.  About 2 CPU minutes
of one core per replica (116 to 136 s measured for the last three, 242 s for the first two
together; the final models are not stored).  ``nudged-add`` keeps the replicas already in the file and runs only the missing
ones (``nudged-add/20-5+1e-12,27-3-1e-12``: those; by default all of
:data:`NUDGED_READINGS`), writing the file after each.
"""

import copy
import json
import re
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import rbm
from rbm import datasets, exact, principles, training
from rbm.layers import Binary, Gaussian

OUTPUT = Path(__file__).resolve().parent.parent / "chapters" / "data"
STEM = "principles_comparison"
CONSISTENCY_STEM = "principles_consistency"
NUDGED_STEM = "principles_nudged"
NUDGES = (1e-12, -1e-12)   # added to one starting weight (nudged_weight) in the replicas
# every replica of ``nudged``: (visible, hidden) index of the weight, nudge; the first two are
# NUDGES at nudged_weight (tags "+1e-12", "-1e-12"), the others at pixels of the digits that
# are on in some training rows and off in others, each to another hidden unit
NUDGED_READINGS = (((36, 0), 1e-12), ((36, 0), -1e-12), ((20, 5), 1e-12),
                   ((27, 3), -1e-12), ((44, 7), 1e-12))

METHODS = ("ML", "CD-1", "CD-10", "PCD-1", "PL", "RM", "MPF", "NCE")
NOISE_RATIO = 4.0
LEARNING_RATES = (0.03, 0.1, 0.3, 1.0)
INIT_SCALE = 0.01
MODEL_SEED, TRAIN_SEED = 1, 2
SEED_PAIRS = ((1, 2), (3, 4), (5, 6))   # (starting model, batches and draws)
DATASETS = {
    # name: (n_hidden, batch_size, epochs, epochs between measurements)
    "bars and stripes 4x4": (8, 10, 1000, 10),
    "digits 8x8": (10, 100, 100, 1),
}
HELD_OUT_PER_CLASS = 30
BUDGET_METHOD = "CD-1"   # the budget: the compute of this method's whole run
OBJECTIVES = {"PL": principles.PseudoLikelihood, "RM": principles.RatioMatching,
              "MPF": principles.MinimumProbabilityFlow}
RANK_ONE_PASSES = 4
OBJECTIVE_DATASETS = ("bars and stripes 4x4",)   # where the objective is tracked too
KEEP_FINAL_MODEL = ("ML", "NCE")

# consistency: a 4x2 binary model, samples of N rows (seed s), NCE's noise seed s + 100
KL_SEEDS = tuple(range(10, 18))
KL_SIZES = (500, 8000)
DSM_RUNS = ((0.3, 8000, 1), (0.6, 8000, 1), (0.3, 32000, 1), (0.6, 32000, 1),
            (0.3, 8000, 3), (0.6, 8000, 3), (0.3, 8000, 4), (0.6, 8000, 4))


def load(name):
    """Training and held-out rows (bars and stripes: the 30 patterns are both)."""
    if name.startswith("bars"):
        data = datasets.bars_and_stripes(4)
        return data, data
    data, labels = datasets.digits()
    train, held_out = datasets.split_by_class(labels, HELD_OUT_PER_CLASS, rng=0)
    return data[train], data[held_out]


def estimator(method, batch_size, train):
    """A fresh estimator of `method`; PCD keeps one chain per row of a batch, NCE's noise
    is the base-rate model of the whole training set `train`."""
    if method == "NCE":
        noise = principles.fit_noise_layer(Binary(np.zeros(train.shape[1])), train)
        return principles.NoiseContrastive(noise, noise_ratio=NOISE_RATIO)
    return {"ML": lambda: rbm.ExactGradient(), "CD-1": lambda: rbm.CD(1),
            "CD-10": lambda: rbm.CD(10), "PCD-1": lambda: rbm.PCD(batch_size),
            "PL": principles.PseudoLikelihood, "RM": principles.RatioMatching,
            "MPF": principles.MinimumProbabilityFlow}[method]()


def passes_per_row(method, n_visible, n_hidden, batch_size):
    """Products of one state with W (a visible row with W, or a hidden row with W^T) per
    training row of an update: the unit of compute of the chapter.

    CD-k: one for the data's hidden means, two per Gibbs step; PCD-1 the same with one
    chain per row; NCE: the row and nu noise rows; ML: the data's hidden means plus the
    enumeration of the 2**n_hidden hidden states, shared by the batch.  PL, RM, MPF
    (:func:`rbm.principles.neighbour_differences`): the row's hidden input (one
    product), the hidden inputs of its n_visible one-bit neighbours by rank-one updates
    (n_visible * n_hidden multiply-adds: one pass), and the log-normaliser and mean of
    the hidden layer at each of those n_visible * n_hidden inputs (two elementwise
    functions over an array the size of W, counted one pass each): 4, whatever
    n_visible.  The statistics are not counted for any method.  A count, not a time:
    the elementwise functions cost more than a multiply-add, and the chapter prices
    the updates by their measured CPU time (:func:`measure_costs`).
    """
    return {"ML": 1 + 2 ** min(n_visible, n_hidden) / batch_size, "CD-1": 3, "CD-10": 21,
            "PCD-1": 3, "PL": RANK_ONE_PASSES, "RM": RANK_ONE_PASSES, "MPF": RANK_ONE_PASSES,
            "NCE": 1 + NOISE_RATIO}[method]


def measure_costs(repeats=15, updates=20, names=tuple(DATASETS)):
    """CPU time per update of every method relative to CD-1's, on each data set at its
    batch size: the *price* of an update, in CD-1 updates.

    CPU time of this process (:func:`time.process_time`, so time the machine gives to
    other processes is not counted), one BLAS thread, the methods interleaved (one round
    of `updates` updates of every method per repeat, from the same starting model and
    batch, after one untimed call), the ratio of the medians over `repeats`.
    Machine-dependent: the chapter reads one such measurement stored in the cache
    (``prices``, written by the part ``prices``), and this function repeats it.

    Returns
    -------
    dict
        ``{data set name: {method: price}}``, CD-1's price 1.
    """
    def timed_calls(name, train, model, batch_size, _):
        batch = train[:batch_size]
        ests = {m: (estimator(m, batch_size, train), np.random.default_rng(0)) for m in METHODS}

        def call(method):
            est, rng = ests[method]
            for _ in range(updates):
                est.gradient(model, batch, rng=rng)
        return call

    return _prices_per_data_set(names, repeats, timed_calls)


def _prices_per_data_set(names, repeats, timed_calls):
    """:func:`_interleaved_prices` on each data set of `names`, one BLAS thread, of the calls
    ``timed_calls(name, train, starting model, batch_size, track_epochs)`` returns."""
    out = {}
    with threadpool_limits(1, user_api="blas"):
        for name in names:
            n_hidden, batch_size, _, track_epochs = DATASETS[name]
            train = load(name)[0]
            model = rbm.RBM.random(train.shape[1], n_hidden, scale=INIT_SCALE, rng=MODEL_SEED)
            out[name] = _interleaved_prices(
                timed_calls(name, train, model, batch_size, track_epochs), repeats)
    return out


def _interleaved_prices(call, repeats):
    """``{method: median CPU time of call(method) / CD-1's}``: one untimed call of each method,
    then `repeats` rounds in which every method takes its turn."""
    for method in METHODS:
        call(method)   # set-up
    times = {m: [] for m in METHODS}
    for _ in range(repeats):
        for method in METHODS:
            start = time.process_time()
            call(method)
            times[method].append(time.process_time() - start)
    base = np.median(times["CD-1"])
    return {m: float(np.median(t) / base) for m, t in times.items()}


def measure_update_costs(repeats=15, names=tuple(DATASETS), learning_rate=0.1):
    """CPU time of one *update as the runs made it* relative to CD-1's, on each data set: the
    price the chapter charges.

    What is timed is the call :func:`run` makes, one segment of training: ``track_epochs``
    epochs of :func:`rbm.training.train` over the whole training set at the data set's batch
    size (the fused stepper for CD and PCD, the estimator's ``gradient`` and the update for the
    others), divided by its number of updates; every method from the same starting model (a
    fresh copy each round) and its own generator, after one untimed segment.  CPU time of this
    process (:func:`time.process_time`), one BLAS thread, the methods interleaved (one segment
    of each per round), the ratio of the medians over `repeats` rounds: a benchmark-style ratio
    against CD-1 measured in the same run, never an absolute time.

    Returns
    -------
    dict
        ``{data set name: {method: price}}``, CD-1's price 1.
    """
    def timed_calls(name, train, start_model, batch_size, track_epochs):
        ests = {m: (estimator(m, batch_size, train), np.random.default_rng(0)) for m in METHODS}

        def segment(method):   # its time per update: the time of a segment, the same ratio
            est, rng = ests[method]
            training.train(start_model.copy(), train, est, learning_rate=learning_rate,
                           epochs=track_epochs, batch_size=batch_size, rng=rng)
        return segment

    return _prices_per_data_set(names, repeats, timed_calls)


def update_prices(output=OUTPUT, sessions=3, repeats=7):
    """Measure the prices of whole updates (:func:`measure_update_costs`) `sessions` times and
    store them in ``principles_comparison.json``: ``prices`` (the median over the sessions of
    each method's price, what the chapter charges), ``price_sessions`` (every session, for the
    spread the chapter states) and, kept for comparison, the earlier prices of a call of the
    estimator's ``gradient`` as ``gradient_prices``."""
    path = Path(output) / f"{STEM}.json"
    results = json.loads(path.read_text())
    if "gradient_prices" not in results:
        results["gradient_prices"] = results["prices"]
    runs = []
    for k in range(sessions):
        runs.append(measure_update_costs(repeats))
        print(f"session {k + 1}: " + "; ".join(
            f"{n}: " + ", ".join(f"{m} {v:.2f}" for m, v in p.items())
            for n, p in runs[-1].items()), flush=True)
    results["price_sessions"] = runs
    results["prices"] = {
        "how": f"process_time per update of one segment of training.train as run() calls it "
               f"(whole updates, fused for CD and PCD) / CD-1's, one BLAS thread, interleaved, "
               f"median of {repeats} rounds; the median over {sessions} sessions "
               f"(price_sessions); machine-dependent",
        **{n: {m: float(np.median([r[n][m] for r in runs])) for m in METHODS}
           for n in DATASETS}}
    path.write_text(json.dumps(results, indent=1) + "\n")


# bars and stripes at equal compute, over seed pairs (the part ``bars-seeds``): every method at
# every rate on more seed pairs; each pair's rates are chosen on the other pairs
BAS_SEEDS_STEM = "principles_bas_seeds"
BAS_REPORTED_PAIRS = ((1, 2), (3, 4), (5, 6), (7, 8), (9, 10))   # (1, 2): the comparison's
BAS_DIGITS = 8   # decimals stored: far below the spread a 1e-12 nudge gives these runs


def bars_seeds(output=OUTPUT, pairs=BAS_REPORTED_PAIRS[1:], stem=None):
    """Every method at every rate of :data:`LEARNING_RATES` on bars and stripes for each seed
    pair of `pairs`; write ``principles_bas_seeds.json`` (or `stem`.json, after each pair):
    ``runs[key]`` holds the training log-likelihood (= held-out: the patterns are both) at
    every measurement, to :data:`BAS_DIGITS` decimals, ``epochs`` the measurements' epochs
    (shared by every run), and ``settings`` the pairs.  Each run is :func:`run`, as in the
    comparison, whose file holds the pair (1, 2) (not repeated here)."""
    name = [n for n in DATASETS if n.startswith("bars")][0]
    results = {"settings": {"data_set": name, "methods": METHODS, "learning_rates": LEARNING_RATES,
                            "reported_pairs": BAS_REPORTED_PAIRS, "decimals": BAS_DIGITS},
               "epochs": None, "runs": {}}
    path = Path(output, f"{stem or BAS_SEEDS_STEM}.json")
    with threadpool_limits(1, user_api="blas"):
        for seeds in pairs:
            for method in METHODS:
                for rate in LEARNING_RATES:
                    curve = run(name, method, rate, seeds=tuple(seeds))
                    if results["epochs"] is None:
                        results["epochs"] = curve["epochs"]
                    entry = {"train": [round(x, BAS_DIGITS) for x in curve["train"]]}
                    if "diverged" in curve:
                        entry["diverged"] = curve["diverged"]
                    results["runs"][key(name, method, rate, seeds)] = entry
            print(f"{name} {seeds}: done", flush=True)
            path.write_text(json.dumps(results, indent=1) + "\n")


def bars_seeds_merge(output=OUTPUT):
    """Join the files of several ``bars-seeds/...`` processes into ``principles_bas_seeds.json``
    (runs in the order of the pairs)."""
    parts = sorted(Path(output).glob(f"{BAS_SEEDS_STEM}.*.json"))
    results = json.loads(parts[0].read_text())
    for part in parts[1:]:
        results["runs"].update(json.loads(part.read_text())["runs"])
    name = results["settings"]["data_set"]
    order = [key(name, m, r, s) for s in BAS_REPORTED_PAIRS for m in METHODS
             for r in LEARNING_RATES]
    results["runs"] = {k: results["runs"][k] for k in order if k in results["runs"]}
    Path(output, f"{BAS_SEEDS_STEM}.json").write_text(json.dumps(results, indent=1) + "\n")
    for part in parts:
        part.unlink()


# On bars and stripes most methods chose the top rate of LEARNING_RATES, 1.0, on every pair:
# the part ``bars-seeds-high`` extends the grid there, one step of the same factor of about 3
# at a time, until no method chooses its top rate (rate -> the methods run at it; RM chose 3)
BAS_HIGH_RATES = {3.0: METHODS, 10.0: ("RM",)}


def bas_rates(method):
    """The rates of `method` in the bars-and-stripes grid over seed pairs:
    :data:`LEARNING_RATES`, then those of :data:`BAS_HIGH_RATES` it is run at."""
    return LEARNING_RATES + tuple(r for r, methods in BAS_HIGH_RATES.items()
                                  if method in methods)


def bars_seeds_high(output=OUTPUT, pairs=BAS_REPORTED_PAIRS, rates=BAS_HIGH_RATES):
    """Each method at each rate of `rates` (rate -> methods) on bars and stripes for each seed
    pair of `pairs` (the pair (1, 2) of the comparison too), added to
    ``principles_bas_seeds.json`` as :func:`bars_seeds` stores its runs
    (``settings["high_rates"]``: `rates`); a run already in the file is kept.  About 1.5 CPU
    seconds a run."""
    path = Path(output, f"{BAS_SEEDS_STEM}.json")
    results = json.loads(path.read_text())
    name = results["settings"]["data_set"]
    results["settings"]["high_rates"] = {str(r): list(ms) for r, ms in rates.items()}
    with threadpool_limits(1, user_api="blas"):
        for seeds in pairs:
            for rate, methods in rates.items():
                for method in methods:
                    k = key(name, method, rate, seeds)
                    if k in results["runs"]:
                        continue
                    curve = run(name, method, rate, seeds=tuple(seeds))
                    entry = {"train": [round(x, BAS_DIGITS) for x in curve["train"]]}
                    if "diverged" in curve:
                        entry["diverged"] = curve["diverged"]
                    results["runs"][k] = entry
            print(f"{name} {seeds} at {list(rates)}: done", flush=True)
            path.write_text(json.dumps(results, indent=1) + "\n")


def prices(output=OUTPUT, repeats=15, updates=20):
    """Measure the prices (:func:`measure_costs`) and store them in ``principles_comparison.json``
    under ``prices`` (the runs are left as they are: their curves are per update)."""
    path = Path(output) / f"{STEM}.json"
    results = json.loads(path.read_text())
    results["prices"] = {
        "how": f"process_time per update / CD-1's, one BLAS thread, interleaved, "
               f"median of {repeats} repeats of {updates} updates, machine-dependent",
        **measure_costs(repeats, updates)}
    path.write_text(json.dumps(results, indent=1) + "\n")


def budget(name):
    """Passes per training row of the budget method's whole run on data set `name`."""
    n_hidden, batch_size, epochs, _ = DATASETS[name]
    n_visible = load(name)[0].shape[1]
    return passes_per_row(BUDGET_METHOD, n_visible, n_hidden, batch_size) * epochs


def budget_point(name, method):
    """Where a run of `method` reaches the budget: (whole epochs, extra full batches).

    The extra batches are the number of whole updates of the next epoch closest to
    the budget's fraction of an epoch.
    """
    n_hidden, batch_size, _, _ = DATASETS[name]
    train = load(name)[0]
    n, n_visible = train.shape
    epochs = budget(name) / passes_per_row(method, n_visible, n_hidden, batch_size)
    whole = int(np.floor(epochs + 1e-9))
    extra = int(round((epochs - whole) * n / batch_size))
    if extra * batch_size >= n:
        whole, extra = whole + 1, 0
    return whole, extra


def _measure(curve, model, train, held_out, method):
    curve["train"].append(exact.log_likelihood(model, train))
    curve["held_out"].append(exact.log_likelihood(model, held_out))
    if "objective" in curve:
        curve["objective"].append(OBJECTIVES[method]().value(model, train))


def _at_budget(name, model, est, rng, train, held_out, whole, extra, learning_rate):
    """Measure a copy of the run after `extra` more full batches (a branch; the run goes on)."""
    n_hidden, batch_size, _, _ = DATASETS[name]
    model, est, rng = model.copy(), copy.deepcopy(est), copy.deepcopy(rng)
    if extra:
        rows = train[rng.permutation(train.shape[0])[:extra * batch_size]]
        training.train(model, rows, est, learning_rate=learning_rate, epochs=1,
                       batch_size=batch_size, rng=rng)
    n = train.shape[0]
    return {"epochs": whole + extra * batch_size / n,
            "train": exact.log_likelihood(model, train),
            "held_out": exact.log_likelihood(model, held_out)}


def nudged_weight(n_visible):
    """(visible, hidden) index of the weight the nudged replicas change: from the centre
    pixel of a square image (row 4, column 4 of the 8x8 digits: visible unit 36, on in
    some digits and off in others; a corner pixel is never on) to the first hidden unit."""
    side = int(np.sqrt(n_visible))
    return ((side // 2) * side + side // 2 if side * side == n_visible else n_visible // 2), 0


def key(name, method, rate, seeds=(MODEL_SEED, TRAIN_SEED)):
    """The cache's name of one run."""
    return f"{name} | {method} | {rate} | {seeds[0]},{seeds[1]}"


def run(name, method, learning_rate, segments=None, seeds=(MODEL_SEED, TRAIN_SEED),
        nudge=0.0, weight=None):
    """Train one model; return its curve: epochs, exact train and held-out log-likelihood.

    `nudge` is added to one weight of the starting model, `weight` ((visible, hidden)
    index; by default :func:`nudged_weight`).

    Training runs in segments of ``track_epochs`` epochs, one call of
    :func:`rbm.training.train` each with the same generator and estimator (so the
    shuffles, draws, chains and NCE's ``log_z`` carry over), measured after each; the
    segment that holds the budget (:func:`budget_point`) is split there, and a copy of
    the run is measured at the budget.
    """
    n_hidden, batch_size, epochs, track_epochs = DATASETS[name]
    train, held_out = load(name)
    model = rbm.RBM.random(train.shape[1], n_hidden, scale=INIT_SCALE, rng=seeds[0])
    if nudge:
        model.W[tuple(weight) if weight is not None
                else nudged_weight(train.shape[1])] += nudge
    est = estimator(method, batch_size, train)
    rng = np.random.default_rng(seeds[1])
    whole, extra = budget_point(name, method)
    curve = {"epochs": [0], "train": [], "held_out": []}
    if method in OBJECTIVES and name in OBJECTIVE_DATASETS:
        curve["objective"] = []
    _measure(curve, model, train, held_out, method)
    seconds, updates = 0.0, 0
    updates_per_epoch = -(-train.shape[0] // batch_size)
    done = 0
    try:
        for _ in range(segments or epochs // track_epochs):
            stops = [done + track_epochs]
            if done <= whole < done + track_epochs:
                stops.insert(0, whole)
            for stop in stops:
                if whole == done and "budget" not in curve:
                    curve["budget"] = _at_budget(name, model, est, rng, train, held_out,
                                                 whole, extra, learning_rate)
                if stop > done:
                    start = time.perf_counter()
                    training.train(model, train, est, learning_rate=learning_rate,
                                   epochs=stop - done, batch_size=batch_size, rng=rng)
                    seconds += time.perf_counter() - start
                    updates += (stop - done) * updates_per_epoch
                    done = stop
            curve["epochs"].append(done)
            _measure(curve, model, train, held_out, method)
        if whole == done and "budget" not in curve:
            curve["budget"] = _at_budget(name, model, est, rng, train, held_out,
                                         whole, extra, learning_rate)
    except ValueError as err:  # diverged: the curve ends here
        curve["diverged"] = str(err)
    curve["seconds_per_update"] = seconds / max(updates, 1)
    if method == "NCE":
        curve["nce_log_z"] = est.log_z
        curve["exact_log_z"] = exact.log_partition(model)
    if method in KEEP_FINAL_MODEL and "diverged" not in curve:
        curve["final_model"] = {"W": model.W.tolist(), "b": model.b.tolist(),
                                "c": model.c.tolist()}
    return curve


def comparison(output=OUTPUT, names=tuple(DATASETS), stem=STEM, methods=METHODS,
               rates=LEARNING_RATES, seed_pairs=SEED_PAIRS[:1], extra_seeds=True):
    """Train every run of `methods`, `rates` and `seed_pairs` on the data sets `names`;
    write ``stem.json``.  With `extra_seeds` (the default, what the chapter reads), then
    on the digits every method again for the other seed pairs of :data:`SEED_PAIRS`, at
    the rate with the best final training log-likelihood on the first pair."""
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    results = {"settings": {"methods": METHODS, "noise_ratio": NOISE_RATIO,
                            "learning_rates": LEARNING_RATES,
                            "init_scale": INIT_SCALE, "seed_pairs": SEED_PAIRS,
                            "datasets": DATASETS, "rank_one_passes": RANK_ONE_PASSES,
                            "held_out_per_class": HELD_OUT_PER_CLASS,
                            "budget_method": BUDGET_METHOD,
                            "budget": {name: budget(name) for name in DATASETS}},
               "runs": {}}
    with threadpool_limits(1, user_api="blas"):
        for name in names:
            n_hidden, batch_size, _, _ = DATASETS[name]
            n_visible = load(name)[0].shape[1]
            for seeds in seed_pairs:
                for method in methods:
                    for rate in rates:
                        curve = run(name, method, rate, seeds=seeds)
                        curve["passes_per_row"] = passes_per_row(method, n_visible, n_hidden,
                                                                 batch_size)
                        results["runs"][key(name, method, rate, seeds)] = curve
                        print(f"{key(name, method, rate, seeds)}: train "
                              f"{curve['train'][-1]:.3f}, held out "
                              f"{curve['held_out'][-1]:.3f}", flush=True)
            if not (extra_seeds and name.startswith("digits")):
                continue
            for method in methods:
                first = {r: results["runs"][key(name, method, r, seed_pairs[0])]
                         for r in rates}
                rate = max(first, key=lambda r: -np.inf if "diverged" in first[r]
                           else first[r]["train"][-1])
                for seeds in SEED_PAIRS[1:]:
                    curve = run(name, method, rate, seeds=seeds)
                    curve["passes_per_row"] = passes_per_row(method, n_visible, n_hidden,
                                                             batch_size)
                    results["runs"][key(name, method, rate, seeds)] = curve
                    print(f"{key(name, method, rate, seeds)}: held out "
                          f"{curve['held_out'][-1]:.3f}", flush=True)
    (output / f"{stem}.json").write_text(json.dumps(results, indent=1) + "\n")


def merge(output=OUTPUT):
    """Join the files of the parts (``bars``, ``digits``...) into ``principles_comparison.json``
    (the runs in a fixed order; the seed pairs beyond the first may hold only some rates)."""
    output = Path(output)
    parts = sorted(output.glob(f"{STEM}.*.json"))
    results = json.loads(parts[0].read_text())
    for part in parts[1:]:
        results["runs"].update(json.loads(part.read_text())["runs"])
    order = [key(name, method, rate, seeds) for name in DATASETS for seeds in SEED_PAIRS
             for method in METHODS for rate in LEARNING_RATES]
    runs = {k: results["runs"][k] for k in order if k in results["runs"]}
    results["runs"] = runs
    (output / f"{STEM}.json").write_text(json.dumps(results, indent=1) + "\n")
    for part in parts:
        part.unlink()


def nudged_curve(k, nudge, weight=None):
    """The curve of run `k` (a key of the comparison) with the nudge `nudge` at `weight`
    (by default :func:`nudged_weight`)."""
    name, method, rate, seeds = [x.strip() for x in k.split("|")]
    n_hidden, batch_size, _, _ = DATASETS[name]
    curve = run(name, method, float(rate), seeds=tuple(int(s) for s in seeds.split(",")),
                nudge=nudge, weight=weight)
    curve.pop("final_model", None)
    curve["passes_per_row"] = passes_per_row(method, load(name)[0].shape[1], n_hidden,
                                             batch_size)
    return curve


def nudged_keys(name, stored, runs):
    """The runs of a replica besides the stored comparison's: on the other seed pairs, each
    method at the rate best on the first pair in the replica `runs` (final training
    log-likelihood), where that differs from the stored comparison's choice."""
    out = []
    for method in METHODS:
        first = {r: runs[key(name, method, r)] for r in LEARNING_RATES}
        rate = max(first, key=lambda r: -np.inf if "diverged" in first[r]
                   else first[r]["train"][-1])
        out += [key(name, method, rate, s) for s in SEED_PAIRS[1:]
                if key(name, method, rate, s) not in stored]
    return out


def reading_tag(weight, nudge, n_visible):
    """The name of a replica in ``principles_nudged.json``: ``"+1e-12"`` for a nudge at
    :func:`nudged_weight`, ``"W[20,5] +1e-12"`` for one at another weight."""
    tag = f"{nudge:+g}"
    return tag if tuple(weight) == nudged_weight(n_visible) else f"W[{weight[0]},{weight[1]}] {tag}"


def parse_readings(text):
    """``36-0+1e-12,20-5-1e-12`` -> (((36, 0), 1e-12), ((20, 5), -1e-12))."""
    out = []
    for item in text.split(","):
        i, j, nudge = re.fullmatch(r"(\d+)-(\d+)([+-].+)", item).groups()
        out.append(((int(i), int(j)), float(nudge)))
    return tuple(out)


def nudged(output=OUTPUT, readings=NUDGED_READINGS, keep=False):
    """Every digits run of ``principles_comparison.json`` again in each replica of
    `readings` (a weight of the starting model and the nudge added to it), and, where the
    nudged runs of the first seed pair choose another best rate for a method, that method
    at that rate on the other seed pairs too; write ``principles_nudged.json``:
    ``runs[tag][key]`` is the curve of run `key` in the replica `tag`
    (:func:`reading_tag`; as in the comparison, without the final models), and
    ``settings["readings"][tag]`` its weight, nudge and CPU seconds; ``runs["+0"]``
    holds those extra runs without the nudge.  With `keep`, the replicas (and ``+0``
    runs) already in the file are kept and only the missing ones run (the file is
    written after each replica); without, everything is run again (after ``make
    principles``)."""
    output = Path(output)
    path = output / f"{NUDGED_STEM}.json"
    stored = [k for k in json.loads((output / f"{STEM}.json").read_text())["runs"]
              if k.startswith("digits")]
    name = stored[0].split(" | ")[0]
    train = load(name)[0]
    n_visible = train.shape[1]
    for weight, _ in readings:   # a pixel the data switch on and off
        assert 0 < train[:, weight[0]].mean() < 1 and weight[1] < DATASETS[name][0], weight
    results = {"settings": {"nudges": NUDGES, "weight": nudged_weight(n_visible),
                            "of": f"{STEM}.json",
                            "runs": "every digits run there, and on the seed pairs (3, 4) "
                                    "and (5, 6) each method at the replica's best rate; "
                                    "+0: those extra runs without the nudge"},
               "runs": {}}
    if keep and path.exists():
        results = json.loads(path.read_text())
    plain = results["runs"].pop("+0", {})
    known = results["settings"].setdefault("readings", {})
    for t in results["runs"]:   # the first file's two replicas
        if t not in known and t in (f"{n:+g}" for n in NUDGES):
            known[t] = {"weight": list(nudged_weight(n_visible)), "nudge": float(t)}
    results["settings"]["readings"] = known
    with threadpool_limits(1, user_api="blas"):
        for weight, nudge in readings:
            tag = reading_tag(weight, nudge, n_visible)
            if tag in results["runs"]:
                continue
            start = time.process_time()
            runs = results["runs"][tag] = {}
            for k in stored + ["more"]:
                for k in (nudged_keys(name, stored, runs) if k == "more" else [k]):
                    runs[k] = nudged_curve(k, nudge, weight)
                    print(f"{tag} {k}: held out {runs[k]['held_out'][-1]:.3f} "
                          f"({time.process_time() - start:.0f} CPU s so far)", flush=True)
            extra = sorted(set(runs) - set(stored) - set(plain))
            plain.update({k: nudged_curve(k, 0.0) for k in extra})
            known[tag] = {"weight": list(weight), "nudge": nudge,
                          "cpu_seconds": time.process_time() - start}
            results["runs"]["+0"] = plain
            path.write_text(json.dumps(results, indent=1) + "\n")
            results["runs"].pop("+0")
    results["runs"]["+0"] = plain
    path.write_text(json.dumps(results, indent=1) + "\n")


def kl_truth():
    """The 4x2 model the chapter's consistency section samples from."""
    return rbm.RBM.random(4, 2, scale=1.0, bias_scale=0.5, rng=0)


def gaussian_truth():
    """The Gaussian-Bernoulli model of the chapter's score-matching section."""
    return rbm.RBM([[3.0, -1.0], [0.5, 2.5]], Gaussian([-1.0, -1.0], sigma=[1.0, 0.7]),
                   Binary([0.3, -0.5]))


def consistency(output=OUTPUT):
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    makers = {"PL": principles.PseudoLikelihood, "NCE": principles.NoiseContrastive}
    results = {"settings": {"kl_seeds": KL_SEEDS, "kl_sizes": KL_SIZES,
                            "noise_seed_offset": 100, "dsm_n_corruptions": 4},
               "n_kl": {}, "converged": {}, "dsm_error": {}}
    truth = kl_truth()
    p_true = exact.visible_distribution(truth)
    with threadpool_limits(1, user_api="blas"):
        for name, make in makers.items():
            for n in KL_SIZES:
                values, converged = [], []
                for seed in KL_SEEDS:
                    fitted, result = principles.fit(truth, exact.sample(truth, n, rng=seed),
                                                    make(), rng=seed + 100)
                    values.append(n * exact.kl_divergence(p_true, fitted))
                    converged.append(bool(result.success))
                results["n_kl"][f"{name} | {n}"] = values
                results["converged"][f"{name} | {n}"] = converged
                print(name, n, values, flush=True)
        g_truth = gaussian_truth()
        flat = lambda m: np.concatenate([a.ravel() for a in m.parameters().values()])
        for s, n, seed in DSM_RUNS:
            fitted, result = principles.fit(
                g_truth, exact.sample(g_truth, n, rng=seed),
                principles.DenoisingScoreMatching(s, n_corruptions=4), rng=seed + 1)
            error = float(np.linalg.norm(flat(fitted) - flat(g_truth)))
            results["dsm_error"][f"{s} | {n} | {seed}"] = error
            results["converged"][f"DSM | {s} | {n} | {seed}"] = bool(result.success)
            print("DSM", s, n, seed, error, result.success, flush=True)
    (output / f"{CONSISTENCY_STEM}.json").write_text(json.dumps(results, indent=1) + "\n")


GAUSS_SEEDS = (1, 3, 4)
GAUSS_SIZES = (500, 8000, 32000)
GAUSS_METHODS = ("SM", "NCE", "DSM s=0.3")


def fit_ml(model, data, max_iter=1000, gtol=1e-9):
    """Maximum likelihood by L-BFGS (full batch, the exact gradient), from `model`."""
    from scipy.optimize import minimize

    work = model.copy()
    rows, counts = np.unique(np.asarray(data, dtype=float), axis=0, return_counts=True)
    weights = counts / counts.sum()
    shapes = [(k, p.shape) for k, p in work.parameters().items()]

    def set_flat(theta):
        start = 0
        for k, shape in shapes:
            size = int(np.prod(shape))
            work.parameters()[k][...] = theta[start:start + size].reshape(shape)
            start += size

    def objective(theta):
        set_flat(theta)
        ll = float(weights @ exact.log_prob(work, rows))
        g = rbm.ExactGradient().gradient(work, np.repeat(rows, counts, axis=0), rng=0)
        return -ll, -g.flat()

    start = np.concatenate([p.ravel() for p in work.parameters().values()])
    result = minimize(objective, start, jac=True, method="L-BFGS-B",
                      options={"maxiter": max_iter, "gtol": gtol, "ftol": 1e-15})
    set_flat(result.x)
    return work, result


def consistency_extra(output=OUTPUT):
    """Add to ``principles_consistency.json``: maximum likelihood's N * KL on the samples
    of the 4x2 model, and the parameter error of SM, NCE and DSM (s = 0.3) on the
    Gaussian model over the seeds :data:`GAUSS_SEEDS` and sizes :data:`GAUSS_SIZES`."""
    path = Path(output) / f"{CONSISTENCY_STEM}.json"
    results = json.loads(path.read_text())
    truth = kl_truth()
    p_true = exact.visible_distribution(truth)
    g_truth = gaussian_truth()
    flat = lambda m: np.concatenate([a.ravel() for a in m.parameters().values()])
    makers = {"SM": principles.ScoreMatching, "NCE": principles.NoiseContrastive,
              "DSM s=0.3": lambda: principles.DenoisingScoreMatching(0.3, n_corruptions=4)}
    results["settings"].update(gauss_seeds=GAUSS_SEEDS, gauss_sizes=GAUSS_SIZES,
                               gauss_noise_seed_offset=1)
    results["gauss_error"] = {}
    with threadpool_limits(1, user_api="blas"):
        for n in KL_SIZES:
            values, converged = [], []
            for seed in KL_SEEDS:
                fitted, result = fit_ml(truth, exact.sample(truth, n, rng=seed))
                values.append(n * exact.kl_divergence(p_true, fitted))
                converged.append(bool(np.abs(result.jac).max() < 1e-6))
            results["n_kl"][f"ML | {n}"] = values
            results["converged"][f"ML | {n}"] = converged
            print("ML", n, values, flush=True)
        for name, make in makers.items():
            for n in GAUSS_SIZES:
                for seed in GAUSS_SEEDS:
                    fitted, result = principles.fit(g_truth, exact.sample(g_truth, n, rng=seed),
                                                    make(), rng=seed + 1)
                    error = float(np.linalg.norm(flat(fitted) - flat(g_truth)))
                    results["gauss_error"][f"{name} | {n} | {seed}"] = error
                    results["converged"][f"{name} | {n} | {seed}"] = bool(
                        np.abs(result.jac).max() < 1e-5)
                    print(name, n, seed, error, flush=True)
    path.write_text(json.dumps(results, indent=1) + "\n")


ML_KL_SEEDS = tuple(range(10, 34))   # KL_SEEDS and 16 more samples, for ML's mean N * KL


def consistency_ml(output=OUTPUT, seeds=ML_KL_SEEDS):
    """Add to ``principles_consistency.json`` maximum likelihood's N * KL at both sizes of
    :data:`KL_SIZES` over the samples of `seeds` (``ml_n_kl``: ``{str(N): [one per seed]}``,
    ``ml_converged`` likewise: whether L-BFGS's gradient ended below 1e-6; the seeds as
    ``settings["ml_kl_seeds"]``): enough samples to test where its mean lies against the
    limit d/2.  The samples of :data:`KL_SEEDS` are copied from ``n_kl["ML | N"]`` (the same
    fits), the others fitted.  The file is written after each size, and a size already in
    ``ml_n_kl`` for these seeds is kept."""
    path = Path(output) / f"{CONSISTENCY_STEM}.json"
    results = json.loads(path.read_text())
    if results["settings"].get("ml_kl_seeds") != list(seeds):
        results["ml_n_kl"], results["ml_converged"] = {}, {}
    results["settings"]["ml_kl_seeds"] = list(seeds)
    truth = kl_truth()
    p_true = exact.visible_distribution(truth)
    with threadpool_limits(1, user_api="blas"):
        for n in KL_SIZES:
            if str(n) in results["ml_n_kl"]:
                continue
            values, converged = [], []
            for seed in seeds:
                if seed in KL_SEEDS:
                    values.append(results["n_kl"][f"ML | {n}"][KL_SEEDS.index(seed)])
                    converged.append(results["converged"][f"ML | {n}"][KL_SEEDS.index(seed)])
                    continue
                fitted, result = fit_ml(truth, exact.sample(truth, n, rng=seed))
                values.append(n * exact.kl_divergence(p_true, fitted))
                converged.append(bool(np.abs(result.jac).max() < 1e-6))
            results["ml_n_kl"][str(n)] = values
            results["ml_converged"][str(n)] = converged
            print("ML", n, values, converged, flush=True)
            path.write_text(json.dumps(results, indent=1) + "\n")


def main(output=OUTPUT, *parts):
    """Run `parts`: ``comparison``, ``consistency``, ``nudged``, ``merge``, or ``bars`` or
    ``digits``
    (half of the comparison) optionally followed by ``:`` and a comma-separated list of
    methods, by ``@`` and one of rates and by ``/`` and one of seed pairs (``3-4,5-6``),
    for several processes whose files ``merge`` then joins."""
    for part in parts or ("comparison", "prices", "update-prices", "bars-seeds",
                          "bars-seeds-high", "consistency", "consistency-extra",
                          "consistency-ml"):
        part, _, seeds = part.partition("/")
        half, _, methods = part.partition(":")
        methods, _, rates = methods.partition("@")
        if part == "bars-seeds" and seeds:
            pairs = tuple(tuple(map(int, p.split("-"))) for p in seeds.split(","))
            bars_seeds(output, pairs, f"{BAS_SEEDS_STEM}.{'_'.join(map(str, pairs[0]))}")
        elif half in ("bars", "digits"):
            name = [n for n in DATASETS if n.startswith(half)][0]
            methods = tuple(methods.split(",")) if methods else METHODS
            rates = tuple(map(float, rates.split(","))) if rates else LEARNING_RATES
            pairs = (tuple(tuple(map(int, p.split("-"))) for p in seeds.split(","))
                     if seeds else SEED_PAIRS)
            comparison(output, (name,), f"{STEM}.{half}.{'-'.join(methods)}.{rates}.{pairs}",
                       methods, rates, pairs, extra_seeds=False)
        else:
            {"comparison": comparison, "consistency": consistency, "merge": merge,
             "prices": prices, "nudged": nudged, "update-prices": update_prices,
             "bars-seeds": bars_seeds, "consistency-ml": consistency_ml,
             "bars-seeds-merge": bars_seeds_merge, "bars-seeds-high": bars_seeds_high,
             "nudged-add": lambda out: nudged(
                 out, parse_readings(seeds) if seeds else NUDGED_READINGS, keep=True),
             "consistency-extra": consistency_extra}[part](output)


if __name__ == "__main__":
    main(*sys.argv[1:])
