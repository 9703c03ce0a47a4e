"""Compute the heavy parts of chapters/what_cd_optimises and write them to chapters/data.

Usage: python tools/what_cd_optimises.py [OUTPUT_DIR]     (behind `make cdopt`)

Writes ``what_cd_optimises.json`` with two parts, everything exact (no sampling) on
3x3 bars and stripes (14 patterns, 9 visible units):

``bounds``
    the grid of 20 models on which the chapter checks its bounds on the CD-k bias:
    ``RBM.random(9, n_hidden, scale=scale, bias_scale=0.5, rng=seed)`` for 2 and 4
    hidden units, weights of standard deviation 0.25 to 4 and seeds 0 and 1 (in that
    order, seed innermost).  Per model, for k = 1 to 20: the largest entry of
    ``|g_k - grad|`` (the bias of the expected CD-k update) and the total variation
    ``TV(q T^k, p)``; and, once per model, Dobrushin's coefficient of T, lambda_2,
    ``|q - p|_1``, ``sqrt(sum (q - p)^2 / p)`` and the largest flip energy
    (:func:`rbm.cd_theory.largest_flip_energy`).
``rate_band``
    three further runs of exact gradient ascent (learning rate 0.5, the data in one
    batch) from ``RBM.random(9, n_hidden, scale=0.1, rng=seed)``: 4 hidden units
    (seed 1) after 600 and 1200 updates, 2 hidden units (seed 0) after 1200, 6 hidden
    units (seed 3) after 600.  Per snapshot: ``|D_k + (g_k - grad)| / (|D_k|
    lambda_2^k)`` for k = 5, 10, ..., 30, as far as ``|D_k| > 1e-6 |g_k|``
    (:func:`over_lambda`).

Everything is deterministic, single-threaded and uses only :mod:`rbm`, so another
machine gives the same numbers up to floating-point rounding
(``tests/test_what_cd_optimises_cache.py`` re-derives some models and one snapshot and
compares).  A few seconds of one core.
"""

import sys
from pathlib import Path

import numpy as np

import rbm
from rbm import exact
from rbm.cd_theory import (dobrushin_coefficient, dropped_term, expected_update,
                           largest_flip_energy, second_eigenvalue)
from rbm.datasets import bars_and_stripes
from rbm.transition import cd_expected_gradient, gibbs_transition_matrix

from cache_parts import write_parts  # tools/, on sys.path when run as a script

OUTPUT = Path(__file__).resolve().parent.parent / "chapters" / "data"
STEM = "what_cd_optimises"

K_GRID = tuple(range(1, 21))
GRID_HIDDEN = (2, 4)
GRID_SCALES = (0.25, 0.5, 1.0, 2.0, 4.0)
GRID_SEEDS = (0, 1)
#: (hidden units, seed, the updates after which a snapshot is kept)
RATE_RUNS = ((4, 1, (600, 1200)), (2, 0, (1200,)), (6, 3, (600,)))
RATE_K = tuple(range(5, 31, 5))


def grid_model(n_hidden, scale, seed):
    """One model of the bounds grid."""
    return rbm.RBM.random(9, n_hidden, scale=scale, bias_scale=0.5, rng=seed)


def bounds_row(m, data):
    """What the chapter's bounds need of model `m` on `data` (see the module's docstring)."""
    q = exact.empirical_distribution(data)
    T_m = gibbs_transition_matrix(m)
    p_m = exact.visible_distribution(m)
    exact_grad = exact.gradient(m, data)
    bias = [(g - exact_grad).max_abs() for g in cd_expected_gradient(m, data, list(K_GRID))]
    r, tv = q, []
    for _ in K_GRID:
        r = r @ T_m
        tv.append(0.5 * np.abs(r - p_m).sum())
    return {"bias": [float(x) for x in bias], "tv": [float(x) for x in tv],
            "dobrushin": float(dobrushin_coefficient(m)),
            "lambda_2": float(second_eigenvalue(m)),
            "l1": float(np.abs(q - p_m).sum()),
            "chi": float(np.sqrt(((q - p_m) ** 2 / p_m).sum())),
            "flip_energy": float(largest_flip_energy(m))}


def bounds():
    data = bars_and_stripes(3)
    models = []
    for n_hidden in GRID_HIDDEN:
        for scale in GRID_SCALES:
            for seed in GRID_SEEDS:
                row = {"n_hidden": n_hidden, "scale": scale, "seed": seed}
                row.update(bounds_row(grid_model(n_hidden, scale, seed), data))
                models.append(row)
    return {"k": list(K_GRID), "models": models}


def over_lambda(m, q):
    """``|D_k + (g_k - grad)| / (|D_k| lambda_2^k)`` for k in RATE_K where |D_k| > 1e-6 |g_k|."""
    grad_m = expected_update(m, q, None).flat()
    lam = second_eigenvalue(m)
    ratios = []
    for k in RATE_K:
        D_k = dropped_term(m, q, k).flat()
        g_k = expected_update(m, q, k).flat()
        if np.linalg.norm(D_k) > 1e-6 * np.linalg.norm(g_k):
            ratios.append(float(np.linalg.norm(D_k + g_k - grad_m)
                                / np.linalg.norm(D_k) / lam ** k))
    return ratios


def ascent_snapshots(n_hidden, seed, stops, q):
    """Exact gradient ascent (rate 0.5) from small weights; the models after `stops` updates."""
    m = rbm.RBM.random(n_visible=9, n_hidden=n_hidden, scale=0.1, rng=seed)
    kept = {}
    for update in range(1, max(stops) + 1):
        step = 0.5 * expected_update(m, q, None)
        m = rbm.RBM(m.W + step.W, m.b + step.b, m.c + step.c)
        if update in stops:
            kept[update] = m
    return kept


def run_key(n_hidden, seed, update):
    """The key of a snapshot, e.g. ``"9 x 4, seed 1 | 600"``."""
    return f"9 x {n_hidden}, seed {seed} | {update}"


def rate_band():
    q = exact.empirical_distribution(bars_and_stripes(3))
    out = {}
    for n_hidden, seed, stops in RATE_RUNS:
        for update, m in ascent_snapshots(n_hidden, seed, stops, q).items():
            out[run_key(n_hidden, seed, update)] = over_lambda(m, q)
    return out


PARTS = {"bounds": bounds, "rate_band": rate_band}


def main(output=OUTPUT):
    write_parts(PARTS, Path(output) / f"{STEM}.json", __doc__.split("\n\n")[0])


if __name__ == "__main__":
    main(*sys.argv[1:2])
