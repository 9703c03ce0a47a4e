"""Tests of rbm.short_run: the short-run (Rdm-k) estimator and its exact theory."""

import itertools

import numpy as np
import pytest

from rbm import RBM, exact
from rbm.datasets import bars_and_stripes
from rbm.short_run import (ShortRunCD, expected_update, fixed_point, independent_marginals,
                           k_step_distribution, kl_gradient, kl_to_k_step, noisy_prototypes,
                           start_distribution, update_jacobian)
from rbm.training import train
from tool_scripts import assert_close, load_tool, read_cache


def brute_force_law(model, p0, k):
    """p0 T^k by explicit sums over v, h, v' with the conditionals written out per unit."""
    W, b, c = model.W, model.b, model.c
    nv, nh = W.shape
    V = [np.array(s, float) for s in itertools.product([0, 1], repeat=nv)]
    H = [np.array(s, float) for s in itertools.product([0, 1], repeat=nh)]

    def bern(x, field):
        p = 1.0 / (1.0 + np.exp(-field))
        return float(np.prod(np.where(x == 1, p, 1 - p)))

    T = np.zeros((len(V), len(V)))
    for i, v in enumerate(V):
        for h in H:
            ph = bern(h, c + v @ W)
            for j, w in enumerate(V):
                T[i, j] += ph * bern(w, b + W @ h)
    r = np.array(p0, float)
    for _ in range(k):
        r = np.array([sum(r[i] * T[i, j] for i in range(len(V))) for j in range(len(V))])
    return r, V


def brute_force_update(model, q, p0, k):
    r, V = brute_force_law(model, p0, k)
    W, c = model.W, model.c
    gW, gb, gc = np.zeros_like(W), np.zeros(W.shape[0]), np.zeros(W.shape[1])
    for i, v in enumerate(V):
        s = 1.0 / (1.0 + np.exp(-(c + v @ W)))
        d = q[i] - r[i]
        gW += d * np.outer(v, s)
        gb += d * v
        gc += d * s
    return np.concatenate([gW.ravel(), gb, gc])


@pytest.mark.parametrize("start", ["uniform", "marginals"])
@pytest.mark.parametrize("k", [1, 3, 7])
def test_expected_update_matches_brute_force(start, k):
    model = RBM.random(3, 2, scale=1.5, bias_scale=0.5, rng=k)
    data = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 1], [1, 0, 1]], float)
    q = exact.empirical_distribution(data)
    s = "uniform" if start == "uniform" else independent_marginals(data)
    p0 = start_distribution(s, 3)
    expected = brute_force_update(model, q, p0, k)
    got = expected_update(model, q, k, start=s).flat()
    assert np.abs(got - expected).max() < 1e-12
    law, _ = brute_force_law(model, p0, k)
    assert np.abs(k_step_distribution(model, k, start=s) - law).max() < 1e-12


def test_sequence_of_k_matches_single():
    model = RBM.random(4, 3, scale=1.0, rng=2)
    q = exact.empirical_distribution(bars_and_stripes(2))
    many = expected_update(model, q, [1, 4])
    assert (many[1] - expected_update(model, q, 4)).max_abs() < 1e-15
    kls = kl_to_k_step(q, model, [0, 2])
    assert abs(kls[1] - kl_to_k_step(q, model, 2)) < 1e-15


@pytest.mark.parametrize("start", ["uniform", "marginals"])
def test_monte_carlo_mean_matches_expected_update(start):
    """Mean of 400 seeded estimates of 50 chains each: every coordinate within 4.5 standard
    errors of the exact expectation (with 26 coordinates, a false alarm has probability about
    1e-4 under normality)."""
    model = RBM.random(4, 4, scale=1.0, bias_scale=0.5, rng=5)
    data = bars_and_stripes(2)
    q = exact.empirical_distribution(data)
    s = "uniform" if start == "uniform" else np.array([0.2, 0.5, 0.7, 0.9])
    est = ShortRunCD(k=3, start=s, n_chains=50)
    rng = np.random.default_rng(12)
    draws = np.array([est.gradient(model, data, rng=rng).flat() for _ in range(400)])
    mean, se = draws.mean(axis=0), draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    target = expected_update(model, q, 3, start=s).flat()
    z = np.abs(mean - target) / se
    assert z.max() < 4.5, z.max()
    # and the test has power: a wrong k is rejected
    wrong = expected_update(model, q, 1, start=s).flat()
    assert (np.abs(mean - wrong) / se).max() > 4.5


def test_sampled_hidden_statistics_same_mean():
    model = RBM.random(3, 2, scale=1.0, rng=1)
    data = np.array([[1, 0, 1], [0, 1, 1]], float)
    est = ShortRunCD(k=2, n_chains=200, use_probabilities=False)
    rng = np.random.default_rng(3)
    draws = np.array([est.gradient(model, data, rng=rng).flat() for _ in range(300)])
    target = expected_update(model, exact.empirical_distribution(data), 2).flat()
    se = draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    assert (np.abs(draws.mean(axis=0) - target) / se).max() < 4.5


@pytest.mark.parametrize("start", ["uniform", "marginals"])
@pytest.mark.parametrize("k", [1, 4])
def test_kl_gradient_matches_finite_differences(start, k):
    """Five-point differences, h = 1e-3: truncation O(h^4) and rounding about 1e-11 each,
    against a tolerance of 1e-7 relative."""
    model = RBM.random(4, 3, scale=1.0, bias_scale=0.5, rng=k)
    data = bars_and_stripes(2)
    q = exact.empirical_distribution(data)
    s = "uniform" if start == "uniform" else np.clip(independent_marginals(data) + 0.1, 0, 1)
    g = kl_gradient(model, q, k, start=s).flat()
    theta = np.concatenate([model.W.ravel(), model.b, model.c])
    h = 1e-3

    def f(t):
        m = RBM(t[:12].reshape(4, 3).copy(), b=t[12:16].copy(), c=t[16:].copy())
        return kl_to_k_step(q, m, k, start=s)

    fd = np.array([(8 * (f(theta + h * e) - f(theta - h * e))
                    - (f(theta + 2 * h * e) - f(theta - 2 * h * e))) / (12 * h)
                   for e in np.eye(theta.size)])
    assert np.linalg.norm(fd - g) <= 1e-7 * np.linalg.norm(g)
    # the Rdm-k update is not this gradient
    u = expected_update(model, q, k, start=s).flat()
    assert np.linalg.norm(u + g) > 1e-3 * np.linalg.norm(g)


def test_update_jacobian_matches_finite_differences_and_is_not_symmetric():
    model = RBM.random(3, 2, scale=1.0, bias_scale=0.5, rng=4)
    q = exact.empirical_distribution(np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]], float))
    J = update_jacobian(model, q, 3)
    theta = np.concatenate([model.W.ravel(), model.b, model.c])
    h = 1e-6

    def g(t):
        m = RBM(t[:6].reshape(3, 2).copy(), b=t[6:9].copy(), c=t[9:].copy())
        return expected_update(m, q, 3).flat()

    fd = np.stack([(g(theta + h * e) - g(theta - h * e)) / (2 * h) for e in np.eye(11)], axis=1)
    assert np.abs(fd - J).max() < 1e-8
    assert np.abs(J - J.T).max() > 1e-4


def test_large_k_is_maximum_likelihood():
    model = RBM.random(4, 2, scale=0.5, rng=0)
    data = bars_and_stripes(2)
    q = exact.empirical_distribution(data)
    assert (expected_update(model, q, 300) - exact.gradient(model, data)).max_abs() < 1e-12
    assert abs(kl_to_k_step(q, model, 300) - exact.kl_divergence(q, model)) < 1e-12


def test_train_accepts_the_estimator():
    data = bars_and_stripes(2)
    model = RBM.random(4, 4, scale=0.1, rng=0)
    q = exact.empirical_distribution(data)
    before = kl_to_k_step(q, model, 5)
    train(model, data, ShortRunCD(k=5, n_chains=100), learning_rate=1.0, epochs=300,
          batch_size=6, rng=0)
    assert kl_to_k_step(q, model, 5) < before - 0.3


@pytest.mark.parametrize("bad, error", [
    (dict(k=0), ValueError), (dict(k=1.5), TypeError), (dict(start="data"), ValueError),
    (dict(start=[0.5, 2.0]), ValueError), (dict(n_chains=0), ValueError),
    (dict(use_probabilities=1), TypeError)])
def test_bad_arguments_name_themselves(bad, error):
    name = next(iter(bad))
    with pytest.raises(error, match=name):
        ShortRunCD(**bad)


def test_uniform_start_is_fixed_or_refused():
    """p0 must not move with the model: on a discrete layer the uniform start is the same
    whatever the biases; a Gaussian layer, whose states "with zero input" follow its own b and
    sigma (means 5 and -3 below, before this was refused), has no uniform start."""
    from rbm.layers import Binary, Gaussian
    est = ShortRunCD(k=1)
    far = RBM.random(Binary(np.array([6.0, -6.0, 0.0])), Binary(np.zeros(2)), rng=0)
    near = RBM.random(3, 2, rng=0)
    a = est.initial_states(far, 4000, rng=3)
    assert np.array_equal(a, est.initial_states(near, 4000, rng=3))
    assert np.abs(a.mean(axis=0) - 0.5).max() < 0.05
    gaussian = RBM.random(Gaussian(np.array([5.0, -3.0, 0.0])), Binary(np.zeros(2)), rng=0)
    with pytest.raises(ValueError, match="discrete"):
        est.initial_states(gaussian, 10, rng=0)
    with pytest.raises(ValueError, match="discrete"):
        est.gradient(gaussian, np.zeros((2, 3)), rng=0)


def test_exact_functions_validate():
    model = RBM.random(3, 2, rng=0)
    with pytest.raises(ValueError, match="q"):
        expected_update(model, np.ones(5) / 5, 1)
    with pytest.raises(ValueError, match="start"):
        k_step_distribution(model, 1, start=[0.5, 0.5])
    with pytest.raises(ValueError, match="k"):
        kl_to_k_step(np.ones(8) / 8, model, -1)
    with pytest.raises(ValueError, match="n_hidden"):
        expected_update(RBM.random(3, 13, rng=0), np.ones(8) / 8, 1)
    with pytest.raises(ValueError, match="start"):
        ShortRunCD(start=[0.5, 0.5]).gradient(model, [[1, 0, 1]], rng=0)
    with pytest.raises(ValueError, match="noise"):
        noisy_prototypes(noise=0.7)
    with pytest.raises(ValueError, match="data"):
        independent_marginals([[0, 2]])


# The cache's divergences are stored rounded to 12 decimals. Measured spread of the re-derived
# KLs from the cache (OpenBLAS SkylakeX, Haswell, and Sandybridge with NumPy's SIMD dispatch at
# its baseline; November 2026): 1e-12 (the storage rounding) for the bars runs, sampled ones
# included, and under a 1e-12 nudge of one starting weight no more than 5e-12 even after the
# whole 3000 updates (the sampled bars runs are not chaotic at rate 1): atol 1e-9, a factor 200.
ATOL = 1e-9
# The second prototype set moves more: Rdm-5 by 1.4e-8 (Sandybridge + baseline; 4.8e-10
# SkylakeX), so atol 1e-6 (a factor 70); the ML run (its gradient an enumeration, compiled when
# numba is installed) by 6.1e-7 (Sandybridge + baseline; 7.6e-8 SkylakeX; 4.1e-7 with numba),
# so atol 1e-4 (a factor 160). A 1e-12 nudge of one starting weight moves them by 6.3e-8 and
# 1.0e-7 after these 200 updates: a response in proportion, not chaos.
PROTOTYPES5_ATOL = 1e-6
ML_ATOL = 1e-4


def test_cache_rederives_one_run():
    """The cache of tools/train_short_run.py (committed): one short run re-derived from scratch."""
    tool = load_tool("train_short_run")
    stored = read_cache("short_run")
    run = stored["runs"]["bars"]["rdm-1"]
    fresh = tool.run("bars", "rdm-1", steps=tool.CHECK_STEPS)
    n = len(fresh["kl"])
    assert_close(fresh["kl"], np.array(run["kl"])[:n], "kl", atol=ATOL)


@pytest.mark.parametrize("method", ["pcd", "rdm-5-sampled"])
def test_cache_rederives_a_sampled_run(method):
    """The runs that draw (PCD, and the short-run estimator itself, 100 chains each): their
    first updates re-derived."""
    tool = load_tool("train_short_run")
    run = read_cache("short_run")["runs"]["bars"][method]
    fresh = tool.run("bars", method, steps=tool.CHECK_STEPS)
    n = len(fresh["kl"])
    assert_close(fresh["kl"], np.array(run["kl"])[:n], "kl", atol=ATOL)


@pytest.mark.parametrize("where, name, method, rate, atol", [
    (("second", "prototypes-5", "rdm-5"), "prototypes-5", "rdm-5", 1.0, PROTOTYPES5_ATOL),
    (("second", "prototypes-5", "ml"), "prototypes-5", "ml", 1.0, ML_ATOL),
    (("rates", "0.1"), "bars", "rdm-1", 0.1, ATOL),
    # the counter-case: a 1e-12 nudge of one starting weight moved none of its first 200
    # updates' divergences at the 12 decimals stored (November 2026)
    (("counter", "parity", "0"), "parity", "rdm-1", 1.0, ATOL)])
def test_cache_rederives_second_set_and_rates(where, name, method, rate, atol):
    """The second prototype set, the other learning rates and the counter-case: their first
    updates re-derived."""
    tool = load_tool("train_short_run")
    run = read_cache("short_run")
    for key in where:
        run = run[key]
    fresh = tool.run(name, method, steps=tool.CHECK_STEPS, learning_rate=rate)
    n = len(fresh["kl"])
    assert_close(fresh["kl"], np.array(run["kl"])[:n], "kl", atol=atol)


def test_cache_holds_the_counter_case_at_every_seed():
    tool = load_tool("train_short_run")
    counter = read_cache("short_run")["counter"]["parity"]
    assert sorted(counter) == sorted(str(s) for s in tool.COUNTER_SEEDS)
    assert all(run["updates"][-1] == tool.STEPS for run in counter.values())


def test_cache_has_every_robust_run():
    """The ``robust`` section holds one run per task of tools/train_short_run.py."""
    tool = load_tool("train_short_run")
    stored = read_cache("short_run")["robust"]
    assert sorted(stored) == sorted(key for key, _ in tool.robust_tasks())


@pytest.mark.parametrize("key, atol", [
    ("bars/ml/rate-1/seed-0/nudge-0", ML_ATOL),
    ("prototypes/rdm-5/rate-0.5/seed-1", PROTOTYPES5_ATOL)])
def test_cache_rederives_robust_runs(key, atol):
    """Two runs of the ``robust`` section (a nudged start, another seed and rate): their first
    updates re-derived."""
    tool = load_tool("train_short_run")
    kwargs = dict(tool.robust_tasks())[key]
    run = read_cache("short_run")["robust"][key]
    fresh = tool.run(**dict(kwargs, steps=tool.CHECK_STEPS))
    n = len(fresh["kl"])
    assert_close(fresh["kl"], np.array(run["kl"])[:n], "kl", atol=atol)


def _prototypes_warm_start(k):
    data = noisy_prototypes(200, n_visible=6, n_prototypes=2, noise=0.1, rng=0)[0]
    q = exact.empirical_distribution(data)
    model = RBM.random(6, 3, scale=0.1, rng=0)
    for _ in range(500):
        g = expected_update(model, q, k)
        model.W += g.W
        model.b += g.b
        model.c += g.c
    return model, q


def test_fixed_point_residual_and_the_two_objectives_differ():
    start, q = _prototypes_warm_start(3)
    point, info = fixed_point(start, q, 3)
    assert info["converged"] and info["residual"] <= 1e-10
    assert expected_update(point, q, 3).max_abs() < 1e-10
    assert info["history"][0] > 1e-6          # the start was not already a zero
    kl_point, kl_info = fixed_point(start, q, 3, objective="kl")
    assert kl_info["converged"] and kl_gradient(kl_point, q, 3).max_abs() < 1e-10
    # another field has another zero: the update does not vanish at the divergence's
    # stationary point, nor the update at another k
    assert expected_update(kl_point, q, 3).max_abs() > 1e-6
    assert expected_update(point, q, 10).max_abs() > 1e-6
    theta = np.concatenate([point.W.ravel(), point.b, point.c])
    kl_theta = np.concatenate([kl_point.W.ravel(), kl_point.b, kl_point.c])
    assert np.linalg.norm(theta - kl_theta) > 1e-3
    # the start is left alone
    assert not np.array_equal(start.W, point.W)


def test_fixed_point_validates():
    model = RBM.random(2, 1, rng=0)
    q = np.full(4, 0.25)
    with pytest.raises(ValueError, match="objective"):
        fixed_point(model, q, 1, objective="likelihood")
    with pytest.raises(ValueError, match="tol"):
        fixed_point(model, q, 1, tol=0)
    with pytest.raises(ValueError, match="max_iter"):
        fixed_point(model, q, 1, max_iter=0)
    with pytest.raises(ValueError, match="k"):
        fixed_point(model, q, 0)
    with pytest.raises(ValueError, match="q"):
        fixed_point(model, np.ones(3) / 3, 1)


def test_cache_rederives_one_fixed_point():
    """The cache's fixed points on the prototypes at k = 3, searched again from scratch."""
    tool = load_tool("train_short_run")
    stored = read_cache("short_run")["fixed"]["prototypes"]["3"]
    fresh = tool.fixed_points("prototypes", 3)
    for objective in ("update", "kl"):
        assert fresh[objective]["stages"][-1]["converged"]
        # measured spread 1.3e-12 (Sandybridge + baseline, SkylakeX): a factor 7000
        assert_close(fresh[objective]["W"], stored[objective]["W"], "W", atol=1e-8)
        assert_close(fresh[objective]["c"], stored[objective]["c"], "c", atol=1e-8)
    # and one search from another start, on bars and stripes: no zero found there, the
    # parameters growing (an unconverged search on a flat residual amplifies rounding, so
    # only what the chapter states is compared)
    other = read_cache("short_run")["fixed_other_seeds"]["bars"]["1"]["1"]["update"]["stages"]
    again = tool.fixed_points("bars", 1, seed=1, training=False)["update"]["stages"]
    for stages in (other, again):
        assert not any(s["converged"] for s in stages)
        assert all(b["largest_parameter"] > a["largest_parameter"] and b["residual"] < a["residual"]
                   for a, b in zip(stages, stages[1:]))
