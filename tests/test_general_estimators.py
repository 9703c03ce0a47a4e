"""The sampling estimators on models of any two layers, against their exact expectations.

Every statistical check is seeded and states its threshold: a z-score of 5 on every entry
(a two-sided probability of about 6e-7 per entry for a correct estimator).
"""

import numpy as np
import pytest

from rbm import RBM, ais, estimators, exact, pseudolikelihood, sampling, tempering, training
from rbm import transition

from conftest import random_layer

Z_MAX = 5.0


def _model(pair, n_visible=3, n_hidden=2, scale=0.5, seed=0):
    rng = np.random.default_rng(seed)
    return RBM.random(random_layer(pair[0], n_visible, rng), random_layer(pair[1], n_hidden, rng),
                      scale=scale, rng=seed)


PAIRS = [("spin", "binary"), ("potts", "binary"), ("potts", "drelu"), ("gaussian", "binary"),
         ("binary", "relu"), ("spin", "spin")]
DISCRETE = [p for p in PAIRS if p[1] in ("binary", "spin")
            and p[0] in ("binary", "spin", "potts")]


def _assert_z(estimate, target, se, what):
    z = np.abs(np.asarray(estimate) - np.asarray(target)) / (np.asarray(se) + 1e-12)
    assert np.all(z < Z_MAX), f"{what}: max |z| = {z.max():.2f}"


def _batch_means(model, rows, n_batches=40):
    """Mean and standard error of the statistics of `rows`, by batch means."""
    parts = [exact.data_statistics(model, b).flat() for b in np.array_split(rows, n_batches)]
    parts = np.array(parts)
    return parts.mean(axis=0), parts.std(axis=0, ddof=1) / np.sqrt(n_batches)


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
def test_gibbs_chains_sample_the_model(pair):
    """20,000 chains of 30 steps (seed 1): the statistics' means against the exact model term."""
    model = _model(pair)
    v = sampling.sample_model(model, n_chains=20_000, n_steps=30, rng=1)
    mean, se = _batch_means(model, v)
    _assert_z(mean, exact.model_statistics(model).flat(), se, "model statistics")


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
def test_pcd_estimates_the_exact_gradient(pair):
    """One call of PCD with 20,000 burnt-in chains (seed 2) against the exact gradient; the
    estimate is the data term minus the chains' statistics, exactly."""
    model = _model(pair)
    data = model.visible.random_states(5, rng=3)
    pcd = estimators.PCD(n_chains=20_000, k=30, init="uniform")
    g = pcd.gradient(model, data, rng=2)
    np.testing.assert_allclose(
        g.flat(), (exact.data_statistics(model, data) - exact.data_statistics(model, pcd.chains)
                   ).flat(), rtol=1e-9, atol=1e-12)
    _, se = _batch_means(model, pcd.chains)
    _assert_z(g.flat(), exact.gradient(model, data).flat(), se, "PCD")


@pytest.mark.parametrize("sampled", [False, True])
@pytest.mark.parametrize("pair", DISCRETE, ids="-".join)
def test_cd_k_mean_is_its_exact_expectation(pair, sampled):
    """CD-1 and CD-3, 20 calls on the data repeated 500 times (seed 4), against
    transition.cd_expected_gradient (the exact E[CD-k] over every visible state)."""
    model = _model(pair)
    data = model.visible.random_states(4, rng=5)
    repeated = np.repeat(data, 500, axis=0)
    rng = np.random.default_rng(4)
    for k in (1, 3):
        cd = estimators.CD(k, use_probabilities=not sampled)
        draws = np.array([cd.gradient(model, repeated, rng=rng).flat() for _ in range(20)])
        target = transition.cd_expected_gradient(model, data, k).flat()
        _assert_z(draws.mean(axis=0), target, draws.std(axis=0, ddof=1) / np.sqrt(20), f"CD-{k}")


@pytest.mark.parametrize("pair", DISCRETE, ids="-".join)
def test_transition_matrix_of_any_discrete_layers(pair):
    model = _model(pair)
    T = transition.gibbs_transition_matrix(model)
    p = exact.visible_distribution(model)
    np.testing.assert_allclose(T.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(p @ T, p, atol=1e-13)
    far = transition.cd_expected_gradient(model, model.visible.random_states(3, rng=0), 200)
    exact_g = exact.gradient(model, model.visible.random_states(3, rng=0))
    assert (far - exact_g).max_abs() < 1e-9
    from rbm import cd_theory
    lam = cd_theory.second_eigenvalue(model)
    assert 0.0 <= lam < 1.0
    assert 0.0 <= cd_theory.dobrushin_coefficient(model) <= 1.0


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
def test_fast_pcd_without_fast_weights_is_pcd(pair):
    model = _model(pair)
    data = model.visible.random_states(4, rng=0)
    a = estimators.PCD(50, k=2).gradient(model, data, rng=7)
    b = estimators.FastPCD(50, k=2, fast_learning_rate=0.0).gradient(model, data, rng=7)
    np.testing.assert_array_equal(a.flat(), b.flat())


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
def test_ais_forward_and_reverse_bracket_log_z(pair):
    """400 runs of 300 steps (seeds 8, 9): each estimate within 5 standard errors of log Z."""
    model = _model(pair)
    log_z = exact.log_partition(model)
    forward = ais.ais_log_partition(model, n_runs=400, betas=300, rng=8)
    assert abs(forward.log_z - log_z) < Z_MAX * forward.std_error + 1e-3
    samples = exact.sample(model, 400, rng=9)
    reverse = ais.reverse_ais_log_partition(model, samples, betas=300, rng=9)
    assert abs(reverse.log_z - log_z) < Z_MAX * reverse.std_error + 1e-3
    at_zero = ais.intermediate_model(model, 0.0)
    assert float(np.abs(at_zero.W).max()) == 0.0


@pytest.mark.parametrize("pair", [("spin", "binary"), ("potts", "drelu"), ("potts", "binary")],
                         ids="-".join)
def test_pseudo_likelihood_of_any_discrete_visible_layer(pair):
    """Each conditional p(v_i | v_-i) against the ratio of exact probabilities."""
    model = _model(pair)
    data = model.visible.random_states(4, rng=0)
    p = exact.visible_distribution(model)
    index = model.visible.index_of(data)
    q, n = model.visible.n_states, model.n_visible
    want = np.zeros(data.shape)
    for row in range(len(data)):
        for i in range(n):
            place = q ** (n - 1 - i)
            digit = (index[row] // place) % q
            others = index[row] - digit * place + place * np.arange(q)
            want[row, i] = np.log(p[index[row]] / p[others].sum())
    np.testing.assert_allclose(pseudolikelihood.log_conditionals(model, data), want, rtol=1e-10)
    draws = [pseudolikelihood.stochastic_pseudo_log_likelihood(model, data, rng=s)
             for s in range(400)]
    assert abs(np.mean(draws) - want.sum(axis=1).mean()) < Z_MAX * np.std(draws) / 20


def test_tempered_pcd_moves_as_the_exact_tempering_matrix():
    """20,000 pairs of replicas from one joint state, one step (seed 10): the frequencies of
    the joint states against the row of tempering_transition_matrix (chi-square, p > 1e-6)."""
    from scipy.stats import chisquare
    model = RBM.random(2, 2, scale=2.0, bias_scale=0.5, rng=3)
    betas = [1.0, 0.4]
    K = tempering.tempering_transition_matrix(model, betas)
    start = (1, 2)  # v1 = [0, 1], v2 = [1, 0]: joint index 1 * 4 + 2
    pt = tempering.TemperedPCD(n_chains=20_000, betas=betas)
    pt.chains = np.empty((2, 20_000, 2))
    pt.chains[0] = [0, 1]
    pt.chains[1] = [1, 0]
    pt.gradient(model, [[0, 1]], rng=10)
    idx = (pt.chains[0] @ [2, 1]) * 4 + pt.chains[1] @ [2, 1]
    counts = np.bincount(idx.astype(int), minlength=16)
    expected = K[start[0] * 4 + start[1]] * 20_000
    keep = expected > 0
    assert chisquare(counts[keep], expected[keep]).pvalue > 1e-6


def test_tempered_pcd_on_spins_keeps_the_model_distribution():
    """From exact samples, 10 tempering steps leave the cold replica at p(v) (seed 11)."""
    model = _model(("spin", "binary"))
    pt = tempering.TemperedPCD(n_chains=20_000, betas=[1.0, 0.5, 0.2])
    pt.chains = np.stack([exact.sample(tempering.tempered(model, b), 20_000, rng=s)
                          for s, b in enumerate(pt.betas)])
    rng = np.random.default_rng(11)
    for _ in range(10):
        pt.gradient(model, [[1, -1, 1]], rng=rng)
    mean, se = _batch_means(model, pt.chains[0])
    _assert_z(mean, exact.model_statistics(model).flat(), se, "tempered cold replica")


@pytest.mark.parametrize("pair", [("potts", "binary"), ("gaussian", "binary")], ids="-".join)
def test_training_any_model_raises_its_likelihood(pair):
    model = _model(pair, scale=0.1)
    data = model.visible.random_states(6, rng=0)
    history = training.train(model, data, estimators.ExactGradient(), learning_rate=0.1,
                             epochs=30, batch_size=6, rng=0, track_every=10)
    assert history.log_likelihood[-1] > history.log_likelihood[0]
    training.train(model, data, estimators.CD(1), learning_rate=0.01, epochs=3, batch_size=3,
                   rng=0)
    training.train(model, data, estimators.PCD(20), learning_rate=0.01, epochs=3,
                   batch_size=3, rng=0, momentum=0.5, weight_decay=1e-3)
    assert np.isfinite(training.reconstruction_error(model, data))


def test_tempered_pcd_on_potts_moves_as_its_exact_tempering_matrix():
    """As above for a Potts-spin model (q = 3, seed 12): one step from one joint state."""
    from scipy.stats import chisquare
    model = _model(("potts", "spin"), n_visible=2, n_hidden=2, scale=1.5)
    betas = [1.0, 0.3]
    K = tempering.tempering_transition_matrix(model, betas)
    pt = tempering.TemperedPCD(n_chains=30_000, betas=betas)
    pt.chains = np.empty((2, 30_000, 2))
    pt.chains[0], pt.chains[1] = [0, 2], [1, 1]
    pt.gradient(model, [[0, 1]], rng=12)
    idx = model.visible.index_of(pt.chains[0]) * 9 + model.visible.index_of(pt.chains[1])
    counts = np.bincount(idx, minlength=81)
    expected = K[2 * 9 + 4] * 30_000
    keep = expected > 0
    assert chisquare(counts[keep], expected[keep]).pvalue > 1e-6


def test_expected_cd_by_pushing_distributions_equals_the_matrix_route():
    """cd_expected_gradient pushes q through the two conditionals when 2**n_visible exceeds
    64 k, and forms T otherwise: both routes agree (a route left untested once hid a
    NameError)."""
    model = RBM.random(8, 3, scale=0.5, bias_scale=0.3, rng=0)
    data = (np.random.default_rng(1).random((5, 8)) < 0.5).astype(float)
    pushed = transition.cd_expected_gradient(model, data, 2)          # 256 > 64 * 2
    formed = transition.cd_expected_gradient(model, data, [2, 10])[0]  # 256 <= 64 * 10
    np.testing.assert_allclose(pushed.flat(), formed.flat(), atol=1e-12)
