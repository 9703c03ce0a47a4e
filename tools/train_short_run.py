"""Train the runs of chapters/short_run_chains.ipynb and write chapters/data/short_run.json.

Two data sets of 9 visible units (bars and stripes 3 x 3, and noisy prototypes), a 9 x 6 model
from the same small random start, trained by full-batch gradient ascent along

* ``rdm-K``: the exact expected short-run update (chains from the uniform distribution, K steps),
  for K in KS: what the estimator does on average, without its noise;
* ``klgrad-5``: the exact gradient of KL(q || p0 T^5), through the chain;
* ``ml``: the exact likelihood gradient;
* ``pcd``: persistent CD (100 chains, 1 step per update, seeded), through rbm.train;
* ``rdm-5-sampled``: the estimator itself (100 chains, seeded), through rbm.train;
* on the prototypes only (on bars and stripes every marginal is 1/2), ``rdm-K-marginals``
  for K in (1, 5): the chains start from the data's independent marginals, and the run's
  divergences are measured from that start;

and records along training KL(q || p0 T^k') for every k' in PROBE_KS and KL(q || p) at
equilibrium.

A second set of prototypes (``prototypes-5``: 5 prototypes, noise 0.1, data seed 7), the same
start and rate, for SECOND_STEPS updates of each of SECOND_METHODS (``second``); and bars and
stripes Rdm-1 at other learning rates (``rates``: rate -> run, with RATE_STEPS[rate] updates,
so that the learning time rate x updates is 3000 at each).

Then the exact fixed points on smaller models (``fixed``): on bars and stripes 2 x 2 and on noisy
prototypes of 6 units, a model with FIXED_HIDDEN hidden units is trained for FIXED_WARMUP exact
Rdm-k updates from a small random start, and from there rbm.short_run.fixed_point searches a zero
of the Rdm-k update and a zero of the gradient of KL(q || p0 T^k), for k in FIXED_KS, recording
the search's residual and the largest parameter after FIXED_STAGES Newton steps (again from
the starts of seeds FIXED_OTHER_SEEDS); and the warm start of seed 0 trained on (exact Rdm-k
updates at rate 1), recorded at FIXED_TRAINING updates.
Then the comparisons again at other settings (``robust``, :func:`robust_tasks`): ML against
Rdm-5 on the prototypes at rate 0.5 (twice the updates, the same learning time rate x updates),
at the starts of seeds 0-2 and on the second set, and at rate 1 at seeds 1-2; ML on bars and
stripes at rate 0.5; Rdm-5, Rdm-20, ML and klgrad-5 on bars and stripes at the starts of seeds
1-2; ML and Rdm-100 on bars and stripes at rate 1 with one starting weight nudged by 1e-12 (the
spread under rounding); the sampled Rdm-5 run at other sampling seeds; and Rdm-1, Rdm-5 on bars
and stripes with the relaxation time 1 / (1 - |lambda_2|) of the Gibbs chain recorded along
training.  ``python tools/train_short_run.py robust`` recomputes only that section into the
existing file (two processes; ``robust missing`` only the runs not yet in it).
Last a counter-case (``counter``, :func:`counter_runs`; ``python tools/train_short_run.py
counter`` recomputes only it, about ten seconds): Rdm-1 on data without pairwise structure,
the even-parity states of 9 units, from the starts of seeds 0 and 1.

About four minutes of one core for the first part and ten for ``robust``:
``python tools/train_short_run.py``.
"""

import json
import multiprocessing
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rbm import RBM, exact  # noqa: E402
from rbm.datasets import bars_and_stripes  # noqa: E402
from rbm.estimators import PCD  # noqa: E402
from rbm.short_run import (ShortRunCD, expected_update, fixed_point,  # noqa: E402
                           independent_marginals, kl_gradient, kl_to_k_step, noisy_prototypes)
from rbm.training import train  # noqa: E402
from rbm.transition import gibbs_transition_matrix  # noqa: E402

KS = (1, 5, 20, 100)
PROBE_KS = (1, 5, 20, 100, 1000)
N_HIDDEN = 6
STEPS = 3000
TRACK = 50
LEARNING_RATE = 1.0
CHECK_STEPS = 200          # the test re-derives this many updates of one run
METHODS = tuple(f"rdm-{k}" for k in KS) + ("klgrad-5", "ml", "pcd", "rdm-5-sampled")
MARGINAL_METHODS = ("rdm-1-marginals", "rdm-5-marginals")
SECOND_METHODS = ("rdm-1", "rdm-5", "ml")
SECOND_STEPS = 12000
RATE_STEPS = {0.1: 3000, 0.5: 6000, 2.0: 1500, 4.0: 750}   # rate -> updates (bars, Rdm-1)
FIXED_KS = (1, 3, 10)
FIXED_HIDDEN = 3
FIXED_WARMUP = 500
FIXED_STAGES = (50, 100, 200)    # Newton steps at which the search is recorded (cumulative)
FIXED_TRAINING = (3000, 20000)   # updates (warm-up included) at which training is recorded
FIXED_OTHER_SEEDS = (1, 2)       # the searches again from other starts (no training)
COUNTER_SEEDS = (0, 1)           # the starts of the counter-case (``counter``)
OUT = ROOT / "chapters" / "data" / "short_run.json"


def dataset(name):
    """The data rows of a data set by name."""
    if name == "bars":
        return bars_and_stripes(3)
    if name == "prototypes":
        return noisy_prototypes(300, n_visible=9, n_prototypes=3, noise=0.1, rng=0)[0]
    if name == "prototypes-5":
        return noisy_prototypes(300, n_visible=9, n_prototypes=5, noise=0.1, rng=7)[0]
    if name == "parity":
        states = exact.all_states(9)
        return states[states.sum(axis=1) % 2 == 0]
    raise ValueError(f"unknown data set {name!r}")


def start_model(seed=0, nudge=0.0):
    """The small random start of `seed`; `nudge` is added to its first weight."""
    model = RBM.random(9, N_HIDDEN, scale=0.1, rng=seed)
    model.W[0, 0] += nudge
    return model


def relaxation_time(model):
    """1 / (1 - |lambda_2|) of the exact block Gibbs chain on the visible states."""
    moduli = np.sort(np.abs(np.linalg.eigvals(gibbs_transition_matrix(model))))
    return float(1.0 / (1.0 - moduli[-2]))


def measure(model, q, start="uniform"):
    """KL(q || p0 T^k') for k' in PROBE_KS, then KL(q || p)."""
    return [round(float(x), 12) for x in kl_to_k_step(q, model, PROBE_KS, start=start)] + [
        round(float(exact.kl_divergence(q, model)), 12)]


def run(name, method, steps=STEPS, learning_rate=LEARNING_RATE, seed=0, nudge=0.0,
        sampling_seed=1, track=TRACK, relax=False):
    """One run from the start of `seed` (first weight nudged by `nudge`); the sampled runs
    draw with `sampling_seed`; records every `track` updates (with `relax`, also the Gibbs
    chain's relaxation time); returns {"updates", "kl", "W", "b", "c"} (and "relaxation")."""
    data = dataset(name)
    q = exact.empirical_distribution(data)
    model = start_model(seed, nudge)
    start = independent_marginals(data) if method.endswith("-marginals") else "uniform"
    updates, kl = [0], [measure(model, q, start)]
    relaxation = [relaxation_time(model)] if relax else None
    if method in ("pcd", "rdm-5-sampled"):
        estimator = (PCD(n_chains=100, k=1) if method == "pcd"
                     else ShortRunCD(k=5, n_chains=100))
        rng = np.random.default_rng(sampling_seed)
        for done in range(track, steps + 1, track):
            train(model, data, estimator, learning_rate=learning_rate, epochs=track,
                  batch_size=len(data), rng=rng)
            updates.append(done)
            kl.append(measure(model, q))
    else:
        for t in range(1, steps + 1):
            if method == "ml":
                g = exact.gradient(model, data)
            elif method == "klgrad-5":
                g = -kl_gradient(model, q, 5)
            else:
                g = expected_update(model, q, int(method.split("-")[1]), start=start)
            model.W += learning_rate * g.W
            model.b += learning_rate * g.b
            model.c += learning_rate * g.c
            if t % track == 0:
                updates.append(t)
                kl.append(measure(model, q, start))
                if relax:
                    relaxation.append(relaxation_time(model))
    out = {"updates": updates, "kl": kl, "W": model.W.tolist(), "b": model.b.tolist(),
           "c": model.c.tolist()}
    if relax:
        out["relaxation"] = relaxation
    return out


def robust_tasks():
    """The runs of the ``robust`` section, as (key, keyword arguments of :func:`run`)."""
    tasks = []
    for name, seeds in (("prototypes", (0, 1, 2)), ("prototypes-5", (0,))):
        for seed in seeds:
            for method in ("ml", "rdm-5"):
                tasks.append((f"{name}/{method}/rate-0.5/seed-{seed}",
                              dict(name=name, method=method, steps=6000, learning_rate=0.5,
                                   seed=seed)))
    for seed in (1, 2):
        for method in ("ml", "rdm-5"):
            tasks.append((f"prototypes/{method}/rate-1/seed-{seed}",
                          dict(name="prototypes", method=method, seed=seed)))
    tasks.append(("bars/ml/rate-0.5/seed-0",
                  dict(name="bars", method="ml", steps=6000, learning_rate=0.5)))
    for seed in (1, 2):
        for method in ("rdm-5", "rdm-20", "ml", "klgrad-5"):
            tasks.append((f"bars/{method}/rate-1/seed-{seed}",
                          dict(name="bars", method=method, seed=seed)))
    for i, nudge in enumerate(NUDGES):
        tasks.append((f"bars/ml/rate-1/seed-0/nudge-{i}",
                      dict(name="bars", method="ml", nudge=nudge)))
    for i, nudge in enumerate(NUDGES[:2]):
        tasks.append((f"bars/rdm-100/rate-1/seed-0/nudge-{i}",
                      dict(name="bars", method="rdm-100", nudge=nudge)))
    for name, seeds in (("bars", SAMPLING_SEEDS), ("prototypes", SAMPLING_SEEDS[:4])):
        for s in seeds:
            tasks.append((f"{name}/rdm-5-sampled/rate-1/seed-0/sampling-{s}",
                          dict(name=name, method="rdm-5-sampled", sampling_seed=s,
                               track=STEPS)))
    for i, nudge in enumerate(NUDGES[:2]):
        for method in ("ml", "rdm-5"):
            tasks.append((f"prototypes/{method}/rate-0.5/seed-0/nudge-{i}",
                          dict(name="prototypes", method=method, steps=6000, learning_rate=0.5,
                               nudge=nudge)))
    for k in (1, 5):
        tasks.append((f"bars/rdm-{k}/relaxation",
                      dict(name="bars", method=f"rdm-{k}", steps=1000, relax=True)))
    return tasks


NUDGES = (1e-12, -1e-12, 2e-12, -2e-12, 4e-12, -4e-12)   # added to the first starting weight
SAMPLING_SEEDS = (2, 3, 4, 5, 6, 7, 8, 9)                # seed 1 is the run in ``runs``


def _robust_task(task):
    from threadpoolctl import threadpool_limits
    key, kwargs = task
    with threadpool_limits(1):
        out = run(**kwargs)
    if "relaxation" not in out:
        del out["W"], out["b"], out["c"]
    print(key, out["kl"][-1][-1], flush=True)
    return key, out


def robust_runs(processes=2, done=None):
    """The ``robust`` section: {key: run} for every task of :func:`robust_tasks` (those in
    `done` are kept, not rerun)."""
    done = dict(done or {})
    todo = [task for task in robust_tasks() if task[0] not in done]
    with multiprocessing.Pool(processes) as pool:
        done.update(pool.map(_robust_task, todo, chunksize=1))
    return {key: done[key] for key, _ in robust_tasks()}


def small_dataset(name):
    """The data rows of the fixed-point data sets: 4 and 6 visible units."""
    if name == "bars":
        return bars_and_stripes(2)
    if name == "prototypes":
        return noisy_prototypes(200, n_visible=6, n_prototypes=2, noise=0.1, rng=0)[0]
    raise ValueError(f"unknown data set {name!r}")


def warm_start(name, k, seed=0):
    """FIXED_WARMUP exact Rdm-k updates at rate 1 from a small random start (`seed`)."""
    data = small_dataset(name)
    q = exact.empirical_distribution(data)
    model = RBM.random(data.shape[1], FIXED_HIDDEN, scale=0.1, rng=seed)
    for _ in range(FIXED_WARMUP):
        g = expected_update(model, q, k)
        model.W += g.W
        model.b += g.b
        model.c += g.c
    return model, q


def fixed_points(name, k, stages=FIXED_STAGES, seed=0, training=True):
    """Both searches from the warm start: {objective: {"stages": [...], "W", "b", "c"}}, and
    with `training` the warm start trained on to each of FIXED_TRAINING updates."""
    start, q = warm_start(name, k, seed)
    out = {}
    for objective in ("update", "kl"):
        point, done, stages_out = start, 0, []
        for stage in stages:
            if done < stage:
                point, info = fixed_point(point, q, k, objective=objective,
                                          max_iter=stage - done)
                done += info["iterations"]
            theta = np.concatenate([point.W.ravel(), point.b, point.c])
            stages_out.append({"steps": done, "residual": info["residual"],
                               "converged": info["converged"],
                               "largest_parameter": float(np.abs(theta).max())})
            if info["converged"] or info["iterations"] == 0:
                break
        out[objective] = {"stages": stages_out, "W": point.W.tolist(), "b": point.b.tolist(),
                          "c": point.c.tolist()}
    if not training:
        return out
    model, done, out["training"] = start.copy(), FIXED_WARMUP, []
    for target in FIXED_TRAINING:
        for _ in range(target - done):
            g = expected_update(model, q, k)
            model.W += g.W
            model.b += g.b
            model.c += g.c
        done = target
        theta = np.concatenate([model.W.ravel(), model.b, model.c])
        out["training"].append({"updates": done, "residual": expected_update(model, q, k).max_abs(),
                                "largest_parameter": float(np.abs(theta).max()),
                                "kl_k": float(kl_to_k_step(q, model, k)),
                                "kl_equilibrium": float(exact.kl_divergence(q, model))})
    return out


def extra_runs():
    """The second prototype set (``second``) and the other learning rates (``rates``)."""
    second = {method: run("prototypes-5", method, steps=SECOND_STEPS)
              for method in SECOND_METHODS}
    rates = {str(rate): run("bars", "rdm-1", steps=steps, learning_rate=rate)
             for rate, steps in RATE_STEPS.items()}
    return {"second": {"prototypes-5": second}, "rates": rates}


def counter_runs():
    """The counter-case (``counter``): Rdm-1 on the 256 even-parity states of 9 units, whose
    marginals are 1/2 and whose pairs are uncorrelated, from the starts of COUNTER_SEEDS
    (``{"parity": {str(seed): run}}``)."""
    return {"parity": {str(seed): run("parity", "rdm-1", seed=seed) for seed in COUNTER_SEEDS}}


def main():
    out = {"settings": {"ks": KS, "probe_ks": PROBE_KS, "n_hidden": N_HIDDEN, "steps": STEPS,
                        "track": TRACK, "learning_rate": LEARNING_RATE,
                        "methods": METHODS, "marginal_methods": MARGINAL_METHODS,
                        "start": "uniform"},
           "runs": {}}
    for name in ("bars", "prototypes"):
        out["runs"][name] = {}
        for method in METHODS + (MARGINAL_METHODS if name == "prototypes" else ()):
            out["runs"][name][method] = run(name, method)
            print(name, method, out["runs"][name][method]["kl"][-1], flush=True)
    out["settings"].update({"fixed_ks": FIXED_KS, "fixed_hidden": FIXED_HIDDEN,
                            "fixed_warmup": FIXED_WARMUP, "fixed_stages": FIXED_STAGES,
                            "fixed_training": FIXED_TRAINING,
                            "fixed_other_seeds": FIXED_OTHER_SEEDS})
    out["fixed"] = {name: {str(k): fixed_points(name, k) for k in FIXED_KS}
                    for name in ("bars", "prototypes")}
    out["fixed_other_seeds"] = {
        name: {str(seed): {str(k): fixed_points(name, k, seed=seed, training=False)
                           for k in FIXED_KS} for seed in FIXED_OTHER_SEEDS}
        for name in ("bars", "prototypes")}
    out["settings"].update({"second_methods": SECOND_METHODS, "second_steps": SECOND_STEPS,
                            "rate_steps": {str(r): n for r, n in RATE_STEPS.items()}})
    out.update(extra_runs())
    out["robust"] = robust_runs()
    out["counter"] = counter_runs()
    OUT.write_text(json.dumps(out))


def main_counter():
    """Recompute only the ``counter`` section into the existing file."""
    out = json.loads(OUT.read_text())
    out["counter"] = counter_runs()
    OUT.write_text(json.dumps(out))


def main_robust():
    """Recompute only the ``robust`` section into the existing file."""
    out = json.loads(OUT.read_text())
    for rate, steps in RATE_STEPS.items():
        if str(rate) not in out["rates"]:
            out["rates"][str(rate)] = run("bars", "rdm-1", steps=steps, learning_rate=rate)
    out["settings"]["rate_steps"] = {str(r): n for r, n in RATE_STEPS.items()}
    out["robust"] = robust_runs(done=out.get("robust") if "missing" in sys.argv else None)
    OUT.write_text(json.dumps(out))


if __name__ == "__main__":
    if sys.argv[1:2] == ["robust"]:
        main_robust()
    elif sys.argv[1:2] == ["counter"]:
        main_counter()
    else:
        main()
