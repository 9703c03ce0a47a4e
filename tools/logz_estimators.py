r"""Compare log Z estimators at equal numbers of Gibbs sweeps on the full-size digit models.

Usage: python tools/logz_estimators.py [OUTPUT_DIR] [--paths-only]   (behind `make logz`)

For the three PCD-1 models of chapters/digits_full_size (784 x 16, 20 and
25 hidden units; their exact log Z is stored in
chapters/data/digits_full_size.json), the base-rate base fitted to the
training digits, 100 chains and budgets of T = 100, 300 and 1000 Gibbs
sweeps per chain, five independent repeats of three kinds of annealing
chains (rbm.partition.sample_path):

* ``forward``: one sweep at each of K = T temperatures (AIS's own chains);
* ``forward-dwell``: ten sweeps at each of K = T / 10 temperatures;
* ``reverse``: one sweep at each of K = T temperatures, from 100 exact
  samples of the model down to the base (784 x 16 and 20 only: exact
  samples need one layer of at most 20 units).

From each run: the AIS estimate of its chains (forward or reverse AIS),
Bennett's acceptance ratio between neighbouring temperatures and
thermodynamic integration (trapezoid and Simpson), each with its reported
standard error and the seconds it took, and each chain's whole-path
log-weight (``log_weights``: the sum over the path of
:math:`\ell_{k+1} - \ell_k` forward, of :math:`\ell_k - \ell_{k+1}` in
reverse) with ``log_z_base``, from which the notebook computes Bennett's
acceptance ratio between the forward and the reverse paths (whole-path
BAR).  Writes ``logz_estimators.json``.

With ``--paths-only``: only the forward and reverse chains of 784 x 16 and
20 (what whole-path BAR needs), written to ``logz_estimators_paths.json``
(same seeds, so the same chains as the full run).

Seeded and single-threaded per process; two worker processes.  About
10-20 minutes on two cores, depending on their load.
"""

import json
import sys
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import rbm
from rbm import ais, datasets, exact, partition

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "chapters" / "data"
STEM = "logz_estimators"
DIGITS = ROOT / "chapters" / "data" / "digits_full_size"

MODELS = ("784x16 PCD-1", "784x20 PCD-1", "784x25 PCD-1")
SWEEPS = (100, 300, 1000)  # Gibbs sweeps per chain
N_CHAINS = 100
REPEATS = 5
DWELL = 10
PATHS = ("forward", "forward-dwell", "reverse")


def load():
    """The models (by name), their exact log Z and the base-rate biases of the training digits."""
    with open(f"{DIGITS}.json") as f:
        runs = json.load(f)["runs"]
    with np.load(f"{DIGITS}.npz") as npz:
        models = {name: rbm.RBM(*(npz[f"{name} {p}"] for p in "Wbc")) for name in MODELS}
    data, labels = datasets.mnist()
    train, _ = datasets.split_by_class(labels, 100, rng=0)
    return models, {n: runs[n]["log_z"][-1] for n in MODELS}, ais.base_rate_biases(data[train])


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def one_task(task):
    """Every budget (of ``budgets``, all of SWEEPS if the task does not name them) and kind of
    chain (of ``kinds``) for one model and repeat: task ``(name, repeat, kinds[, budgets])``."""
    name, repeat, kinds, budgets = (*task, SWEEPS)[:4]
    models, log_z, b_A = load()
    model = models[name]
    with threadpool_limits(1):
        v_exact = None
        if model.n_hidden <= 20:
            v_exact = exact.sample(model, N_CHAINS,
                                   rng=np.random.default_rng([model.n_hidden, repeat, 99]))
        records = []
        for sweeps in budgets:
            for kind in PATHS:
                if kind not in kinds or (kind == "reverse" and v_exact is None):
                    continue
                n_sweeps = DWELL if kind == "forward-dwell" else 1
                seed = [model.n_hidden, repeat, sweeps, PATHS.index(kind)]
                path, seconds = timed(
                    partition.sample_path, model, sweeps // n_sweeps,
                    n_chains=None if kind == "reverse" else N_CHAINS, n_sweeps=n_sweeps,
                    base_biases=b_A, v_init=v_exact if kind == "reverse" else None,
                    rng=np.random.default_rng(seed))
                record = {"model": name, "repeat": repeat, "sweeps": sweeps, "kind": kind,
                          "n_steps": len(path.betas) - 1, "n_sweeps": n_sweeps,
                          "total_sweeps": path.total_sweeps, "path_seconds": seconds,
                          "exact_log_z": log_z[name], "log_z_base": path.log_z_base,
                          "log_weights": partition.ais_from_path(path).log_weights.tolist(),
                          "estimates": {}}
                for label, fn in (("AIS", partition.ais_from_path),
                                  ("BAR", partition.bar_log_partition),
                                  ("TI", partition.ti_log_partition),
                                  ("TI-Simpson", lambda p: partition.ti_log_partition(
                                      p, rule="simpson"))):
                    est, extra = timed(fn, path)
                    record["estimates"][label] = {
                        "log_z": est.log_z, "std_error": est.std_error,
                        "error": est.log_z - log_z[name], "seconds": extra}
                records.append(record)
                print(f"{name} repeat {repeat}, T = {sweeps}, {kind}: " + ", ".join(
                    f"{k} {v['error']:+.2f}" for k, v in record["estimates"].items()),
                    flush=True)
    return records


def main(output=OUTPUT, paths_only=False):
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    models, kinds, stem = MODELS, PATHS, STEM
    if paths_only:
        models, kinds, stem = MODELS[:2], ("forward", "reverse"), f"{STEM}_paths"
    tasks = [(name, repeat, kinds) for name in models for repeat in range(REPEATS)]
    with Pool(2) as pool:
        results = [r for records in pool.map(one_task, tasks, chunksize=1) for r in records]
    settings = {"models": list(models), "sweeps": list(SWEEPS), "n_chains": N_CHAINS,
                "repeats": REPEATS, "dwell": DWELL, "paths": list(kinds),
                "base": "base-rate model of the 4000 training digits"}
    with open(output / f"{stem}.json", "w") as f:
        json.dump({"settings": settings, "runs": results}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--paths-only"]
    main(*args, paths_only="--paths-only" in sys.argv[1:])
