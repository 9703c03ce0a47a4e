"""Stacks of RBMs (rbm.deep) against brute force: every joint state of every layer summed.

The models are drawn here with seeds and sizes the module was not written against; the
reference sums share no code with rbm.deep (plain loops over itertools.product).
"""

import itertools
import threading
import time
import _thread

import numpy as np
import pytest
from scipy.stats import chisquare, norm
from threadpoolctl import threadpool_limits

from rbm import RBM, exact
from rbm import deep
from rbm.datasets import bars_and_stripes
from rbm.deep import DBM, DBN
from rbm.layers import Spin


def bits(n):
    return np.array(list(itertools.product([0.0, 1.0], repeat=n)))


def log_sigmoid_bernoulli(x, a):
    """log prod_i p(x_i | field a_i) for {0,1} units."""
    return float(np.sum(x * a - np.logaddexp(0.0, a)))


def brute_dbn(rbms):
    """log p(v, h1, ..., hL) over every joint state, as a list of (states, log p)."""
    sizes = [m.n_visible for m in rbms] + [rbms[-1].n_hidden]
    top = rbms[-1]
    X, Y = bits(top.n_visible), bits(top.n_hidden)
    log_top = np.array([[top.b @ x + top.c @ y + x @ top.W @ y for y in Y] for x in X])
    log_top -= np.log(np.exp(log_top).sum())
    out = []
    for layers in itertools.product(*[bits(n) for n in sizes]):
        i, j = int(exact.state_index(layers[-2])), int(exact.state_index(layers[-1]))
        lp = log_top[i, j]
        for k, m in enumerate(rbms[:-1]):
            lp += log_sigmoid_bernoulli(layers[k], m.b + m.W @ layers[k + 1])
        out.append((layers, lp))
    return out, sizes


def brute_dbn_values(rbms, v):
    joint, sizes = brute_dbn(rbms)
    logs, means = [], []
    for row in v:
        terms = [(lp, layers[1]) for layers, lp in joint if np.array_equal(layers[0], row)]
        lps = np.array([t[0] for t in terms])
        m = lps.max()
        p = np.exp(lps - m)
        logs.append(m + np.log(p.sum()))
        means.append(sum(pi * t[1] for pi, t in zip(p, terms)) / p.sum())
    return np.array(logs), np.array(means)


def brute_dbm(dbm):
    states = list(itertools.product(*[bits(n) for n in dbm.sizes]))
    # -E = sum_k b_k.x_k + sum_k x_k W_k x_(k+1), written out for {0,1} layers
    neg_e = np.array([sum(lay.bias @ x for lay, x in zip(dbm.layers, layers))
                      + sum(layers[k] @ W @ layers[k + 1] for k, W in enumerate(dbm.weights))
                      for layers in states])
    return states, neg_e


@pytest.fixture(scope="module")
def dbn():
    rng = np.random.default_rng(4711)
    first = RBM(rng.normal(0, 1.3, (3, 2)), rng.normal(0, 0.7, 3), rng.normal(0, 0.7, 2))
    second = RBM(rng.normal(0, 1.3, (2, 3)), rng.normal(0, 0.7, 2), rng.normal(0, 0.7, 3))
    return DBN([first, second])


@pytest.fixture(scope="module")
def deep_dbn():
    rng = np.random.default_rng(2718)
    rbms = [RBM(rng.normal(0, 1.1, (a, b)), rng.normal(0, 0.5, a), rng.normal(0, 0.5, b))
            for a, b in [(3, 2), (2, 3), (3, 2)]]
    return DBN(rbms)


V3 = bits(3)


def test_dbn_log_prob_and_posterior_match_the_sum_over_every_joint_state(dbn):
    logs, means = brute_dbn_values(dbn.rbms, V3)
    np.testing.assert_allclose(deep.log_prob(dbn, V3), logs, rtol=0, atol=1e-12)
    np.testing.assert_allclose(deep.posterior_means(dbn, V3), means, rtol=0, atol=1e-12)
    assert deep.log_partition(dbn) == pytest.approx(exact.log_partition(dbn.top), abs=1e-12)


def test_a_three_rbm_dbn_matches_the_sum_over_every_joint_state(deep_dbn):
    logs, means = brute_dbn_values(deep_dbn.rbms, V3)
    np.testing.assert_allclose(deep.log_prob(deep_dbn, V3), logs, rtol=0, atol=1e-12)
    np.testing.assert_allclose(deep.posterior_means(deep_dbn, V3), means, rtol=0, atol=1e-12)


def test_greedy_bound_is_log_p_minus_the_kl_of_the_first_rbm_posterior(dbn):
    logs, _ = brute_dbn_values(dbn.rbms, V3)
    joint, _ = brute_dbn(dbn.rbms)
    first = dbn.rbms[0]
    for row, log_p, bound in zip(V3, logs, deep.greedy_bound(dbn, V3)):
        kl = 0.0
        for h in bits(2):
            log_vh = np.log(sum(np.exp(lp) for layers, lp in joint
                                if np.array_equal(layers[0], row)
                                and np.array_equal(layers[1], h)))
            log_q = log_sigmoid_bernoulli(h, first.c + row @ first.W)
            kl += np.exp(log_q) * (log_q - (log_vh - log_p))
        assert bound == pytest.approx(log_p - kl, abs=1e-12)
        assert kl > 1e-6  # a bound that is not tight here: the check can fail


def test_with_the_transpose_on_top_the_dbn_is_the_first_rbm_and_the_bound_is_tight():
    first = RBM.random(5, 4, scale=1.5, bias_scale=0.5, rng=99)
    dbn = DBN([first, first.transpose()])
    V = bits(5)
    np.testing.assert_allclose(deep.log_prob(dbn, V), exact.log_prob(first, V), atol=1e-12)
    np.testing.assert_allclose(deep.greedy_bound(dbn, V), exact.log_prob(first, V), atol=1e-12)
    np.testing.assert_allclose(deep.posterior_means(dbn, V), first.mean_h_given_v(V),
                               atol=1e-12)


@pytest.mark.parametrize("sizes,seed", [((3, 2, 2), 5), ((2, 2, 3, 2), 6)])
def test_dbm_log_z_log_prob_and_posterior_match_brute_force(sizes, seed):
    dbm = DBM.random(sizes, scale=1.2, bias_scale=0.6, rng=seed)
    states, neg_e = brute_dbm(dbm)
    log_z = np.log(np.exp(neg_e).sum())
    assert deep.log_partition(dbm) == pytest.approx(log_z, abs=1e-12)
    V = bits(sizes[0])
    want_lp, want_mean = [], []
    for row in V:
        sel = [i for i, s in enumerate(states) if np.array_equal(s[0], row)]
        p = np.exp(neg_e[sel])
        want_lp.append(np.log(p.sum()) - log_z)
        want_mean.append(sum(pi * states[i][1] for pi, i in zip(p, sel)) / p.sum())
    np.testing.assert_allclose(deep.log_prob(dbm, V), want_lp, atol=1e-12)
    np.testing.assert_allclose(deep.posterior_means(dbm, V), want_mean, atol=1e-12)


def test_mean_field_bound_is_log_p_minus_kl_and_mean_field_is_a_fixed_point():
    dbm = DBM.random((3, 2, 3), scale=1.0, bias_scale=0.5, rng=31)
    states, neg_e = brute_dbm(dbm)
    V = bits(3)
    J = deep.mean_field(dbm, V, n_steps=500, tol=0.0)
    mu = [V] + [dbm.layers[k].mean_statistic(J[k - 1]) for k in (1, 2)]
    np.testing.assert_allclose(J[0], V @ dbm.weights[0] + mu[2] @ dbm.weights[1].T, atol=1e-12)
    # any factorial Q: bound = log p(v) - KL(Q || p(h | v)), summed over every (h1, h2)
    rng = np.random.default_rng(8)
    for inputs in (J, [rng.normal(size=(8, 2)), rng.normal(size=(8, 3))]):
        bound = deep.mean_field_bound(dbm, V, inputs)
        q1, q2 = (1 / (1 + np.exp(-(lay.bias + x))) for lay, x in zip(dbm.layers[1:], inputs))
        log_p = deep.log_prob(dbm, V)
        for n, row in enumerate(V):
            sel = [i for i, s in enumerate(states) if np.array_equal(s[0], row)]
            log_post = neg_e[sel] - np.log(np.exp(neg_e[sel]).sum())
            kl = 0.0
            for i, lp in zip(sel, log_post):
                h1, h2 = states[i][1], states[i][2]
                lq = np.sum(np.log(np.where(h1 == 1, q1[n], 1 - q1[n]))) + np.sum(
                    np.log(np.where(h2 == 1, q2[n], 1 - q2[n])))
                kl += np.exp(lq) * (lq - lp)
            assert bound[n] == pytest.approx(log_p[n] - kl, abs=1e-11)


def test_ancestral_samples_of_a_dbn_follow_its_exact_p_v(deep_dbn):
    """Chi-square goodness of fit at level 1e-3, 20000 draws, seed 12."""
    x = deep.sample(deep_dbn, 20000, rng=12)
    counts = np.bincount(exact.state_index(x), minlength=8)
    expected = np.exp(deep.log_prob(deep_dbn, V3)) * 20000
    assert chisquare(counts, expected).pvalue > 1e-3
    wrong = np.exp(exact.log_prob(deep_dbn.rbms[0], V3)) * 20000  # the first RBM alone
    assert chisquare(counts, wrong).pvalue < 1e-3


def test_block_gibbs_samples_of_a_dbm_follow_its_exact_p_v():
    """Chi-square at level 1e-3: 4000 independent chains of 40 sweeps, seed 13."""
    dbm = DBM.random((3, 2, 2), scale=1.0, bias_scale=0.5, rng=21)
    x = deep.sample(dbm, 4000, n_steps=40, rng=13)
    counts = np.bincount(exact.state_index(x), minlength=8)
    expected = np.exp(deep.log_prob(dbm, V3)) * 4000
    assert chisquare(counts, expected).pvalue > 1e-3
    assert chisquare(counts, np.full(8, 500.0)).pvalue < 1e-3  # it is not uniform


def test_spin_layers_run_through_the_layer_interface():
    rng = np.random.default_rng(3)
    dbm = DBM([rng.normal(size=(2, 2)), rng.normal(size=(2, 2))],
              [Spin(rng.normal(size=2)), Spin(rng.normal(size=2)), Spin(rng.normal(size=2))])
    spins = np.array(list(itertools.product([-1.0, 1.0], repeat=2)))
    neg_e = np.array([-dbm.energy([a[None], b[None], c[None]])[0]
                      for a in spins for b in spins for c in spins])
    assert deep.log_partition(dbm) == pytest.approx(np.log(np.exp(neg_e).sum()), abs=1e-12)


def test_aggregated_posterior_and_exact_fit_raise_the_greedy_bound():
    data = bars_and_stripes(2)
    first = deep.fit_exact(RBM.random(4, 3, scale=0.1, rng=1), data,
                                       learning_rate=0.5, n_steps=1000)
    H, w = deep.aggregated_posterior(first, data)
    assert w.sum() == pytest.approx(1.0, abs=1e-12) and H.shape == (8, 3)
    assert w @ H == pytest.approx(first.mean_h_given_v(data).mean(axis=0), abs=1e-12)
    second = deep.fit_exact(first.transpose(), H, w, learning_rate=0.1, n_steps=100)
    before = deep.greedy_bound(DBN([first, first.transpose()]), data).mean()
    after = deep.greedy_bound(DBN([first, second]), data).mean()
    assert before == pytest.approx(exact.log_likelihood(first, data), abs=1e-12)
    assert after > before + 1e-3


def test_results_are_the_same_bits_on_one_or_two_blas_threads():
    dbm = DBM.random((6, 5, 4, 3), scale=0.5, rng=4)
    V = bits(6)
    with threadpool_limits(limits=1):
        one = deep.log_prob(dbm, V), deep.mean_field_bound(dbm, V)
    with threadpool_limits(limits=2):
        two = deep.log_prob(dbm, V), deep.mean_field_bound(dbm, V)
    assert all(np.array_equal(a, b) for a, b in zip(one, two))


def test_bad_input_is_refused_by_name():
    first = RBM.random(3, 2, rng=0)
    with pytest.raises(TypeError, match="rbms"):
        DBN(first)
    with pytest.raises(ValueError, match="at least two"):
        DBN([first])
    with pytest.raises(ValueError, match=r"rbms\[0\].hidden"):
        DBN([first, RBM.random(3, 2, rng=0)])
    with pytest.raises(ValueError, match="weights"):
        DBM([np.zeros((2, 2))], [np.zeros(2), np.zeros(2)])
    with pytest.raises(ValueError, match=r"weights\[1\]"):
        DBM([np.zeros((2, 2)), np.zeros((3, 2))], [np.zeros(2)] * 3)
    with pytest.raises(TypeError, match="model"):
        deep.log_prob(first, [0, 1, 0])
    with pytest.raises(ValueError, match="v must"):
        deep.log_prob(DBN([first, first.transpose()]), [0, 1])
    with pytest.raises(ValueError, match=r"2\*\*20.*annealed importance sampling"):
        deep.log_prob(DBN([RBM.random(3, 21, rng=0), RBM.random(21, 2, rng=0)]), [0, 1, 0])
    with pytest.raises(ValueError, match=r"2\*\*20"):
        deep.log_partition(DBM.random((2, 11, 3, 10), rng=0))
    with pytest.raises(ValueError, match=r"together\) needs an enumeration of 2\*\*22"):
        deep.log_prob(DBN([RBM.random(2, 11, rng=0), RBM.random(11, 11, rng=0),
                           RBM.random(11, 2, rng=0)]), [0, 1])
    with pytest.raises(ValueError, match="weights"):
        deep.fit_exact(first, [[0, 1, 0]], [0.5], learning_rate=0.1, n_steps=1)


def test_ctrl_c_stops_an_enumeration_within_a_second():
    dbn = DBN([RBM.random(4, 20, rng=0), RBM.random(20, 20, rng=1)])
    V = bits(4)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        for _ in range(100):
            deep.greedy_bound(dbn, V)
    assert time.monotonic() - start < 1.5


@pytest.mark.parametrize("sizes,seed", [((3, 2, 2), 71), ((2, 2, 2, 2), 72)])
def test_dbm_statistics_match_every_joint_state_and_the_gradient_finite_differences(sizes,
                                                                                     seed):
    dbm = DBM.random(sizes, scale=1.0, bias_scale=0.5, rng=seed)
    states, neg_e = brute_dbm(dbm)
    data = bits(sizes[0])[[0, 3, 1, 1]]
    p = np.exp(neg_e - np.log(np.exp(neg_e).sum()))
    model_w = [sum(pi * np.outer(s[k], s[k + 1]) for pi, s in zip(p, states))
               for k in range(len(sizes) - 1)]
    data_w = [np.zeros_like(W) for W in model_w]
    for v in data:
        sel = [i for i, s in enumerate(states) if np.array_equal(s[0], v)]
        q = p[sel] / p[sel].sum()
        for k in range(len(sizes) - 1):
            data_w[k] += sum(qi * np.outer(states[i][k], states[i][k + 1])
                             for qi, i in zip(q, sel)) / len(data)
    got_model, got_data = deep.statistics(dbm), deep.statistics(dbm, data)
    for k in range(len(sizes) - 1):
        np.testing.assert_allclose(got_model["weights"][k], model_w[k], atol=1e-12)
        np.testing.assert_allclose(got_data["weights"][k], data_w[k], atol=1e-12)
    grad, eps = deep.gradient(dbm, data), 1e-5
    for k, W in enumerate(dbm.weights):
        up, down = dbm.copy(), dbm.copy()
        up.weights[k][0, 1] += eps
        down.weights[k][0, 1] -= eps
        fd = (deep.log_likelihood(up, data) - deep.log_likelihood(down, data)) / (2 * eps)
        assert grad["weights"][k][0, 1] == pytest.approx(fd, abs=1e-8)
    up, down = dbm.copy(), dbm.copy()
    up.layers[1].bias[0] += eps
    down.layers[1].bias[0] -= eps
    fd = (deep.log_likelihood(up, data) - deep.log_likelihood(down, data)) / (2 * eps)
    assert grad["biases"][1][0] == pytest.approx(fd, abs=1e-8)


def test_mean_field_statistics_differ_from_the_exact_data_term():
    dbm = DBM.random((3, 2, 2), scale=1.5, bias_scale=0.5, rng=73)
    data = bits(3)
    mf, ex = deep.mean_field_statistics(dbm, data), deep.statistics(dbm, data)
    np.testing.assert_allclose(mf["weights"][0], ex["weights"][0], atol=0.5)
    assert np.abs(mf["weights"][1] - ex["weights"][1]).max() > 1e-3  # a biased data term
    assert np.array_equal(mf["biases"][0], ex["biases"][0])


# -- a DBM trained as Salakhutdinov & Hinton (2009) ------------------------------------

def test_pretraining_composes_the_doubled_rbms_and_their_conditionals():
    """The first RBM's doubled-input conditional is the two-copy RBM's p(h1 | v, v), and the
    DBM takes both weight matrices and the mean of h1's two biases."""
    data = bars_and_stripes(2)
    dbm = deep.pretrain_dbm(data, (3, 2), learning_rate=0.2, n_steps=50, rng=7)
    assert dbm.sizes == (4, 3, 2)
    # the same ascent again through its parts: the doubled first RBM trained alone
    rng = np.random.default_rng(7)
    start = RBM.random(4, 3, scale=0.01, rng=rng)
    twice = RBM(np.vstack([start.W, start.W]), np.concatenate([start.b, start.b]), start.c)
    for _ in range(50):
        g = exact.gradient(twice, np.hstack([data, data]))
        dW, db = g.W[:4] + g.W[4:], g.b[:4] + g.b[4:]
        start.W += 0.2 * dW
        start.b += 0.2 * db
        start.c += 0.2 * g.c
        twice = RBM(np.vstack([start.W, start.W]), np.concatenate([start.b, start.b]), start.c)
    assert dbm.weights[0] == pytest.approx(start.W, abs=1e-10)
    assert dbm.layers[0].bias == pytest.approx(start.b, abs=1e-10)
    assert twice.mean_h_given_v(np.hstack([data, data])) == pytest.approx(
        1 / (1 + np.exp(-(start.c + 2 * data @ start.W))), abs=1e-12)


def test_mean_field_pcd_steps_are_the_mean_field_data_term_minus_the_chains_moments():
    data = bars_and_stripes(2)
    dbm = DBM.random((4, 3, 2), scale=0.5, bias_scale=0.3, rng=8)
    chains = [layer.random_states(7, rng=np.random.default_rng(0)) for layer in dbm.layers]
    trained, moved = deep.fit_mean_field_pcd(dbm, data, chains, learning_rate=0.1, n_steps=1,
                                             rng=np.random.default_rng(1))
    swept = deep.gibbs_sweeps(dbm, chains, 1, rng=np.random.default_rng(1))
    assert all(np.array_equal(a, b) for a, b in zip(moved, swept))
    pos, neg = deep.mean_field_statistics(dbm, data), deep.sample_statistics(dbm, swept)
    for k in range(2):
        assert trained.weights[k] == pytest.approx(
            dbm.weights[k] + 0.1 * (pos["weights"][k] - neg["weights"][k]), abs=1e-12)
    for k in range(3):
        assert trained.layers[k].bias == pytest.approx(
            dbm.layers[k].bias + 0.1 * (pos["biases"][k] - neg["biases"][k]), abs=1e-12)
    assert neg["weights"][1] == pytest.approx(swept[1].T @ swept[2] / 7, abs=1e-12)


def test_aggregated_posterior_of_weighted_rows_is_their_weighted_mean():
    first = RBM.random(3, 2, scale=1.0, rng=9)
    V, w = bits(3), np.random.default_rng(2).dirichlet(np.ones(8))
    H, q = deep.aggregated_posterior(first, V, w)
    post = np.array([[np.prod(np.where(h == 1, p, 1 - p)) for h in H]
                     for p in first.mean_h_given_v(V)])
    assert q == pytest.approx(w @ post, abs=1e-12)


@pytest.mark.parametrize("sizes, seed", [((3, 4, 2), 11), ((2, 3, 2, 2), 12)])
def test_ais_for_a_dbm_is_unbiased_for_z(sizes, seed):
    """E[Z_hat]/Z = 1: 300 estimates of 20 runs each, their mean ratio within 4 standard
    errors of 1 (seeded), and the log-mean-weight estimate within 4 of its own errors."""
    dbm = DBM.random(sizes, scale=1.0, bias_scale=0.5, rng=seed)
    log_z = deep.log_partition(dbm)
    rng = np.random.default_rng(seed)
    ratios = np.exp([deep.ais_log_partition(dbm, n_runs=20, betas=30, rng=rng).log_z - log_z
                     for _ in range(300)])
    assert abs(ratios.mean() - 1) < 4 * ratios.std(ddof=1) / np.sqrt(300)
    big = deep.ais_log_partition(dbm, n_runs=2000, betas=200, rng=rng)
    assert abs(big.log_z - log_z) < 4 * big.std_error


def test_ais_and_training_refuse_bad_input_by_name():
    dbm = DBM.random((3, 2, 2), rng=0)
    with pytest.raises(ValueError, match="n_runs"):
        deep.ais_log_partition(dbm, n_runs=1, rng=0)
    with pytest.raises(ValueError, match="betas"):
        deep.ais_log_partition(dbm, betas=[0.0, 0.7, 0.5, 1.0], rng=0)
    with pytest.raises(TypeError, match="DBM"):
        deep.ais_log_partition(RBM.random(3, 2, rng=0), rng=0)
    with pytest.raises(ValueError, match="n_hidden"):
        deep.pretrain_dbm(np.eye(3), (2,), learning_rate=0.1, n_steps=1, rng=0)
    with pytest.raises(ValueError, match="data"):
        deep.pretrain_dbm([[0.5, 1.0]], (2, 2), learning_rate=0.1, n_steps=1, rng=0)
    with pytest.raises(ValueError, match="chains"):
        deep.fit_mean_field_pcd(dbm, np.eye(3), [np.zeros((2, 3))], learning_rate=0.1,
                                n_steps=1, rng=0)
    with pytest.raises(ValueError, match="weights"):
        deep.aggregated_posterior(RBM.random(3, 2, rng=0), np.eye(3), [0.5, 0.5, 0.5])


def test_bound_at_means_is_the_brute_force_jensen_bound_and_what_probabilities_climb():
    """The greedy bound with log p2 at the posterior means, summed over every state here: below
    the greedy bound (Jensen), not tight at the transpose, and raised by exact ascent on the
    probabilities (rate 0.05, every one of 50 steps)."""
    first = RBM.random(4, 3, scale=1.5, bias_scale=0.5, rng=31)
    top = RBM.random(3, 2, scale=1.5, bias_scale=0.5, rng=32)
    V, H = bits(4), bits(3)
    mu = first.mean_h_given_v(V)
    log_z2 = np.log(sum(np.exp(top.b @ x + top.c @ y + x @ top.W @ y)
                        for x in H for y in bits(2)))
    free = mu @ top.b + np.logaddexp(0.0, top.c + mu @ top.W).sum(axis=1)
    rest = np.zeros(len(V))
    for i, v in enumerate(V):
        for h in H:
            log_q = log_sigmoid_bernoulli(h, first.c + v @ first.W)
            rest[i] += np.exp(log_q) * (log_sigmoid_bernoulli(v, first.b + first.W @ h) - log_q)
    found = deep.bound_at_means(DBN([first, top]), V)
    assert found == pytest.approx(free - log_z2 + rest, abs=1e-12)
    assert (found < deep.greedy_bound(DBN([first, top]), V) - 1e-6).all()
    at_transpose = DBN([first, first.transpose()])
    assert (deep.bound_at_means(at_transpose, V)
            < deep.log_prob(at_transpose, V) - 1e-3).all()
    data = bars_and_stripes(2)
    probabilities = first.mean_h_given_v(data)
    second, climbed = first.transpose(), []
    for _ in range(50):
        climbed.append(deep.bound_at_means(DBN([first, second]), data).mean())
        second = deep.fit_exact(second, probabilities, learning_rate=0.05, n_steps=1)
    assert np.diff(climbed).min() > 0
    with pytest.raises(ValueError, match="two RBMs"):
        deep.bound_at_means(DBN([first, top, RBM.random(2, 2, rng=0)]), V)


def test_exact_draws_of_a_dbm_follow_the_sum_over_every_joint_state():
    """Every moment of the draws (each unit, each connected pair) against its brute-force
    value: z-tests at family-wise level 1e-3 (Bonferroni), 40000 draws of a 3-2-2-2 DBM, seed
    14; the visible states' frequencies fail against the first two layers' RBM."""
    dbm = DBM.random((3, 2, 2, 2), scale=1.5, bias_scale=0.5, rng=22)
    joint = bits(9)
    cut = [0, 3, 5, 7, 9]
    parts = [joint[:, a:b] for a, b in zip(cut, cut[1:])]
    neg_e = -dbm.energy(parts)
    p = np.exp(neg_e - np.logaddexp.reduce(neg_e))

    def moments(xs):
        return np.hstack([x for x in xs] + [(xs[k][:, :, None] * xs[k + 1][:, None, :])
                                            .reshape(len(xs[k]), -1) for k in range(3)])

    truth = p @ moments(parts)
    xs = deep.sample_exact(dbm, 40000, rng=14)
    found = moments(xs).mean(axis=0)
    z = np.abs(found - truth) / np.sqrt(truth * (1 - truth) / 40000)
    assert z.max() < norm.isf(1e-3 / 2 / len(z))
    lower = RBM(dbm.weights[0], dbm.layers[0].bias, dbm.layers[1].bias)
    v_counts = np.bincount(exact.state_index(xs[0]), minlength=8)
    assert chisquare(v_counts, np.exp(exact.log_prob(lower, V3)) * 40000).pvalue < 1e-3
    with pytest.raises(TypeError, match="DBM"):
        deep.sample_exact(DBN([RBM.random(3, 2, rng=0), RBM.random(2, 2, rng=0)]), 5, rng=0)
    with pytest.raises(ValueError, match="n_samples"):
        deep.sample_exact(dbm, 0, rng=0)
