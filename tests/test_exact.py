"""Exact enumeration against an independent brute force over all joint states."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rbm
from rbm import exact
from conftest import brute_log_joint_terms, brute_log_partition

SCALES = [0.01, 0.3, 1.0, 5.0, 50.0]


def random_model(n_visible, n_hidden, scale, seed):
    return rbm.RBM.random(n_visible, n_hidden, scale=scale, bias_scale=scale, rng=seed)


@settings(max_examples=40, deadline=None)
@given(
    n_visible=st.integers(1, 5),
    n_hidden=st.integers(1, 5),
    scale=st.sampled_from(SCALES),
    seed=st.integers(0, 2**32 - 1),
)
def test_log_partition_matches_joint_enumeration(n_visible, n_hidden, scale, seed):
    model = random_model(n_visible, n_hidden, scale, seed)
    expected = brute_log_partition(model)
    assert exact.log_partition(model) == pytest.approx(expected, rel=1e-12, abs=1e-10)


@settings(max_examples=30, deadline=None)
@given(
    n_visible=st.integers(1, 7),
    n_hidden=st.integers(1, 7),
    scale=st.sampled_from(SCALES),
    seed=st.integers(0, 2**32 - 1),
)
def test_either_layer_and_the_transpose_give_the_same_log_partition(n_visible, n_hidden, scale,
                                                                    seed):
    model = random_model(n_visible, n_hidden, scale, seed)
    by_visible = exact.log_partition(model, layer="visible")
    by_hidden = exact.log_partition(model, layer="hidden")
    transposed = exact.log_partition(model.transpose())
    assert by_hidden == pytest.approx(by_visible, rel=1e-12, abs=1e-10)
    assert transposed == pytest.approx(by_visible, rel=1e-12, abs=1e-10)


@pytest.mark.parametrize("chunk_size", [1, 3, 7, 64])
def test_chunking_does_not_change_results(chunk_size, small_model, small_data):
    reference = exact.gradient(small_model, small_data)
    for layer in ("visible", "hidden"):
        g = exact.gradient(small_model, small_data, layer=layer, chunk_size=chunk_size)
        assert np.allclose(g.flat(), reference.flat(), rtol=1e-12, atol=1e-13)
        assert exact.log_partition(small_model, layer=layer, chunk_size=chunk_size) == (
            pytest.approx(exact.log_partition(small_model), rel=1e-13))


def test_visible_distribution_sums_to_one_and_matches_joint_marginal(small_model):
    vs, _, neg_e = brute_log_joint_terms(small_model)
    log_z = brute_log_partition(small_model)
    p_v = exact.visible_distribution(small_model)
    assert p_v.sum() == pytest.approx(1.0, abs=1e-12)
    expected = np.zeros(2**small_model.n_visible)
    np.add.at(expected, exact.state_index(vs), np.exp(neg_e - log_z))
    assert np.allclose(p_v, expected, rtol=1e-11, atol=1e-15)


def brute_log_prob(model, v):
    """log p(v): the joint terms with this v, summed over h, minus log Z (all by brute force)."""
    vs, _, neg_e = brute_log_joint_terms(model)
    mine = np.all(vs == v, axis=1)
    return np.logaddexp.reduce(neg_e[mine]) - brute_log_partition(model)


def test_log_prob_and_log_likelihood_match_the_joint_enumeration(small_model, small_data):
    """Each against the brute force over joint states (not against each other: the mean
    log-likelihood is defined as the mean of log_prob, so that comparison would be circular)."""
    expected = np.array([brute_log_prob(small_model, v) for v in small_data])
    lp = exact.log_prob(small_model, small_data)
    assert lp.shape == (len(small_data),)
    np.testing.assert_allclose(lp, expected, rtol=1e-12)
    assert exact.log_prob(small_model, small_data[0]) == pytest.approx(expected[0], rel=1e-12)
    assert exact.log_likelihood(small_model, small_data) == pytest.approx(expected.mean(),
                                                                           rel=1e-12)


def test_model_expectations_match_joint_enumeration(small_model):
    vs, hs, neg_e = brute_log_joint_terms(small_model)
    p = np.exp(neg_e - brute_log_partition(small_model))
    moments = exact.model_expectations(small_model)
    assert np.allclose(moments.vh, np.einsum("n,ni,nj->ij", p, vs, hs), atol=1e-12)
    assert np.allclose(moments.v, p @ vs, atol=1e-12)
    assert np.allclose(moments.h, p @ hs, atol=1e-12)


def numerical_gradient(model, data, step=1e-5):
    """Central finite differences of the exact mean log-likelihood, entry by entry."""
    theta = rbm.Gradient(model.W, model.b, model.c).flat()
    grad = np.zeros_like(theta)
    for k in range(theta.size):
        values = []
        for sign in (+1, -1):
            shifted = theta.copy()
            shifted[k] += sign * step
            p = rbm.Gradient.from_flat(shifted, model.n_visible, model.n_hidden)
            values.append(exact.log_likelihood(rbm.RBM(p.W, p.b, p.c), data))
        grad[k] = (values[0] - values[1]) / (2 * step)
    return grad


@pytest.mark.parametrize("shape", [(6, 4), (3, 7)])
def test_gradient_matches_central_finite_differences(shape, small_data):
    n_visible, n_hidden = shape
    model = rbm.RBM.random(n_visible, n_hidden, scale=1.0, bias_scale=1.0, rng=3)
    data = small_data[:, :n_visible]
    analytic = exact.gradient(model, data).flat()
    # Central differences have error O(step**2) ~ 1e-10 here, far below the tolerance.
    assert np.allclose(analytic, numerical_gradient(model, data), rtol=1e-6, atol=1e-8)


def test_gradient_step_raises_the_log_likelihood(small_model, small_data):
    g = exact.gradient(small_model, small_data)
    before = exact.log_likelihood(small_model, small_data)
    eps = 1e-3
    stepped = rbm.RBM(small_model.W + eps * g.W, small_model.b + eps * g.b,
                      small_model.c + eps * g.c)
    gain = exact.log_likelihood(stepped, small_data) - before
    # First-order Taylor: the gain is eps * |g|^2 up to O(eps^2).
    assert gain == pytest.approx(eps * np.sum(g.flat() ** 2), rel=1e-2)


def test_kl_is_non_negative_and_equals_minus_entropy_minus_mean_log_prob(small_model,
                                                                          small_data):
    """KL against its definition, sum over the distinct rows of q log(q / p) with q counted and
    p summed from the joint states here; then the identity KL = -H(q) - mean log p, whose
    sides come from different functions (kl_divergence is not built from log_likelihood)."""
    from collections import Counter

    counts = Counter(map(tuple, small_data))
    by_definition = sum(n / len(small_data) * (np.log(n / len(small_data))
                                               - brute_log_prob(small_model, np.array(v)))
                        for v, n in counts.items())
    q = exact.empirical_distribution(small_data)
    kl = exact.kl_divergence(q, small_model)
    assert kl >= 0
    assert kl == pytest.approx(by_definition, rel=1e-12)
    mean_log_p = exact.log_likelihood(small_model, small_data)
    assert kl == pytest.approx(-exact.entropy(q) - mean_log_p, rel=1e-12)
    # KL of the model's own distribution against itself is zero.
    p_v = exact.visible_distribution(small_model)
    assert exact.kl_divergence(p_v / p_v.sum(), small_model) == pytest.approx(0.0, abs=1e-12)


def test_empirical_distribution_counts_rows(small_data):
    q = exact.empirical_distribution(small_data)
    assert q.sum() == pytest.approx(1.0)
    assert q[exact.state_index(small_data[0])] == pytest.approx(2 / 5)
    assert np.count_nonzero(q) == 4


@pytest.mark.parametrize("scale", [100.0, -100.0])
def test_extreme_weights_give_finite_correct_results(scale, small_data):
    rng = np.random.default_rng(0)
    W = scale * np.sign(rng.standard_normal((6, 4)))
    model = rbm.RBM(W, scale * 0.5 * np.ones(6), -scale * 0.25 * np.ones(4))
    log_z = exact.log_partition(model)
    assert np.isfinite(log_z)
    assert log_z == pytest.approx(brute_log_partition(model), rel=1e-12)
    assert np.isfinite(exact.log_likelihood(model, small_data))
    g = exact.gradient(model, small_data)
    assert np.all(np.isfinite(g.flat()))
    assert np.all(np.isfinite(model.free_energy(small_data)))


def test_all_states_and_state_index_are_inverse():
    states = exact.all_states(5)
    assert states.shape == (32, 5)
    assert np.array_equal(exact.state_index(states), np.arange(32))
    assert np.array_equal(states[1], [0, 0, 0, 0, 1])


@pytest.mark.parametrize("shape", [(3, 2), (2, 4)])
def test_sample_draws_the_exact_visible_distribution(shape):
    """Both routes (through the hidden marginal, or the visible one directly).

    A chi-square test of 20,000 seeded samples against the exact p(v), at
    significance 0.001 per shape.
    """
    from scipy.stats import chisquare

    model = rbm.RBM.random(*shape, scale=1.0, bias_scale=1.0, rng=0)
    v = exact.sample(model, 20_000, rng=1)
    assert v.shape == (20_000, shape[0])
    counts = np.bincount(exact.state_index(v), minlength=2 ** shape[0])
    expected = exact.visible_distribution(model) * 20_000
    assert chisquare(counts, expected).pvalue > 0.001


def test_sample_refuses_models_whose_layers_are_both_too_large():
    model = rbm.RBM.random(21, 21, rng=0)
    with pytest.raises(ValueError, match="exact sampling"):
        exact.sample(model, 1, rng=0)
