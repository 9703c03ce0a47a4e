"""Parallel tempering's exact transition matrix, against its definition written out."""

import itertools

import numpy as np
import pytest

from rbm import RBM, exact
from rbm.tempering import (MAX_TEMPERING_BITS, TemperedPCD, tempered,
                           tempering_transition_matrix)
from rbm.transition import gibbs_transition_matrix


@pytest.fixture
def model():
    return RBM.random(3, 2, scale=2.0, bias_scale=1.0, rng=4)


def test_the_product_of_tempered_distributions_is_stationary(model):
    betas = [1.0, 0.6, 0.2]
    K = tempering_transition_matrix(model, betas)
    pi = np.ones(1)
    for beta in betas:
        pi = np.kron(pi, exact.visible_distribution(tempered(model, beta)))
    assert np.abs(K.sum(axis=1) - 1).max() < 1e-13
    assert np.abs(pi @ K - pi).max() < 1e-15


def test_two_replicas_match_a_loop_over_every_pair_of_states(model):
    betas = [1.0, 0.5]
    T = [gibbs_transition_matrix(tempered(model, b)) for b in betas]
    V = exact.all_states(3)
    log_w = [-tempered(model, b).free_energy(V) for b in betas]
    n = len(V)
    K = np.zeros((n * n, n * n))
    for x0, y0, x1, y1 in itertools.product(range(n), repeat=4):
        gibbs = T[0][x0, x1] * T[1][y0, y1]
        a = min(1.0, np.exp(log_w[0][y1] + log_w[1][x1] - log_w[0][x1] - log_w[1][y1]))
        K[x0 * n + y0, x1 * n + y1] += gibbs * (1 - a)
        K[x0 * n + y0, y1 * n + x1] += gibbs * a
    assert np.abs(tempering_transition_matrix(model, betas) - K).max() < 1e-15


def test_tempered_scales_every_parameter(model):
    half = tempered(model, 0.5)
    assert np.array_equal(half.W, 0.5 * model.W) and np.array_equal(half.c, 0.5 * model.c)


@pytest.mark.parametrize("betas, match", [
    ([0.9, 0.5], "betas must start at 1"),
    ([1.0, 1.0], "decrease strictly"),
    ([1.0, 0.5, -0.1], "to a value >= 0"),
    ([[1.0]], "1-d array"),
])
def test_bad_temperatures_are_refused(model, betas, match):
    with pytest.raises(ValueError, match=match):
        tempering_transition_matrix(model, betas)


def test_bad_beta_and_too_many_states_are_refused(model):
    with pytest.raises(ValueError, match=r"beta must lie in \[0, 1\]"):
        tempered(model, 1.5)
    with pytest.raises(TypeError, match="beta must be a real number"):
        tempered(model, "1")
    with pytest.raises(ValueError, match=f"beyond the limit of 2\\*\\*{MAX_TEMPERING_BITS}"):
        tempering_transition_matrix(model, np.linspace(1, 0, 5))


def test_tempered_pcd_with_one_temperature_is_pcd(model):
    from rbm.estimators import PCD
    data = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]])
    pcd, pt = PCD(7, 2), TemperedPCD(7, [1.0], k=2)
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    for _ in range(3):
        a, b = pcd.gradient(model, data, rng=rng_a), pt.gradient(model, data, rng=rng_b)
        assert np.array_equal(a.flat(), b.flat())
    assert np.array_equal(pcd.chains, pt.chains[0])


def test_the_cold_replicas_sample_the_model(model):
    """Frozen model, 4000 independent chains after 60 calls: z-tests at family-wise 0.01."""
    from rbm.checks import check_mean
    two_modes = RBM(W=np.full((3, 1), 5.0), b=np.full(3, -2.5), c=np.array([-7.5]))
    pt = TemperedPCD(4000, [1.0, 0.6, 0.2])
    rng = np.random.default_rng(11)
    for _ in range(60):
        pt.gradient(two_modes, [[0, 0, 0]], rng=rng)    # every chain starts in one mode
    one_hot = np.eye(8)[exact.state_index(pt.chains[0])]
    check_mean(one_hot, exact.visible_distribution(two_modes), 0.01, "cold replicas")
    assert np.all(pt.accepted > 0.05)


def test_tempered_pcd_refuses_bad_input(model):
    with pytest.raises(ValueError, match="betas must start at 1"):
        TemperedPCD(5, [0.5, 0.2])
    with pytest.raises(ValueError, match="n_chains must be >= 1"):
        TemperedPCD(0, [1.0])
    pt = TemperedPCD(5, [1.0, 0.5])
    pt.gradient(model, [[1, 0, 1]], rng=0)
    with pytest.raises(ValueError, match="model has n_visible=4, but the persistent chains"):
        pt.gradient(RBM.random(4, 2, rng=0), [[1, 0, 1, 0]], rng=0)


def _chi_square_p_value(counts, probs, min_expected=5.0):
    """Pearson's chi-square test of `counts` against `probs`, pooling cells expected below 5."""
    from scipy.stats import chi2
    expected = counts.sum() * probs
    small = expected < min_expected
    observed = np.append(counts[~small], counts[small].sum())
    expected = np.append(expected[~small], expected[small].sum())
    if expected[-1] == 0:
        observed, expected = observed[:-1], expected[:-1]
    statistic = ((observed - expected) ** 2 / expected).sum()
    return float(chi2.sf(statistic, len(observed) - 1))


def _check_tempered_chains_follow_the_exact_kernel(alpha=1e-3):
    """Run TemperedPCD on a frozen model; test its replicas' joint states against exact K.

    20 000 chains, each replica started at a row of the data drawn uniformly (so the start
    distribution pi_0 is known), three calls of one Gibbs step and one exchange each.  Four
    chi-square tests, at family-wise significance `alpha` (Bonferroni): the joint states after
    calls 1, 2 and 3 against pi_0 K^t, and the pairs (state after call 2, state after call 3)
    against pi_2(s) K(s, s').  Seeded (model 4, chains 12): the outcome is fixed.
    """
    model = RBM.random(2, 2, scale=2.0, bias_scale=1.0, rng=4)
    betas, data, n_chains = [1.0, 0.4], np.array([[0, 0], [1, 1]]), 20_000
    K = tempering_transition_matrix(model, betas)
    start = np.zeros(4)
    start[exact.state_index(data)] = 0.5
    pi = np.kron(start, start)
    pt, rng = TemperedPCD(n_chains, betas), np.random.default_rng(12)
    joint, laws, tests = [], [], []
    for _ in range(3):
        pt.gradient(model, data, rng=rng)
        joint.append(4 * exact.state_index(pt.chains[0]) + exact.state_index(pt.chains[1]))
        laws.append((laws[-1] if laws else pi) @ K)
        tests.append((np.bincount(joint[-1], minlength=16), laws[-1]))
    pairs = np.bincount(16 * joint[1] + joint[2], minlength=256)
    tests.append((pairs, (laws[1][:, None] * K).ravel()))
    p_values = [_chi_square_p_value(counts, probs) for counts, probs in tests]
    assert min(p_values) > alpha / len(tests), f"chi-square p-values {p_values}"


def test_the_tempered_chains_follow_the_exact_tempering_kernel():
    """States and one-step transitions of TemperedPCD against tempering_transition_matrix."""
    _check_tempered_chains_follow_the_exact_kernel()


@pytest.mark.parametrize("wrong", ["reciprocal ratio", "always exchange"])
def test_a_wrong_exchange_ratio_fails_the_kernel_test(monkeypatch, wrong):
    """The test above can fail: with a wrong acceptance ratio the chi-square tests reject."""
    import rbm.tempering
    free_energy = rbm.tempering._free_energy
    if wrong == "reciprocal ratio":
        monkeypatch.setattr(rbm.tempering, "_free_energy", lambda *args: -free_energy(*args))
    else:
        monkeypatch.setattr(rbm.tempering, "_free_energy",
                            lambda model, v, *rest: np.zeros(len(v)))
    with pytest.raises(AssertionError, match="chi-square p-values"):
        _check_tempered_chains_follow_the_exact_kernel()
