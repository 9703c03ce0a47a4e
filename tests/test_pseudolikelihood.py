"""Pseudo-likelihood against exact conditionals and against scikit-learn's BernoulliRBM."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rbm
from rbm import exact
from rbm.pseudolikelihood import (
    log_conditionals,
    pseudo_log_likelihood,
    stochastic_pseudo_log_likelihood,
)


def enumerated_log_conditionals(model, data):
    """log p(v_i | v_-i) from the exact joint log-probabilities of v and of v with bit i flipped."""
    out = np.empty(data.shape)
    log_p = exact.log_prob(model, data)
    for i in range(model.n_visible):
        flipped = data.copy()
        flipped[:, i] = 1 - flipped[:, i]
        out[:, i] = log_p - np.logaddexp(log_p, exact.log_prob(model, flipped))
    return out


@settings(max_examples=30, deadline=None)
@given(n_visible=st.integers(1, 6), n_hidden=st.integers(1, 5),
       scale=st.sampled_from([0.01, 1.0, 5.0, 50.0]), seed=st.integers(0, 2**32 - 1))
def test_log_conditionals_equal_an_enumeration_of_exact_joint_probabilities(n_visible, n_hidden,
                                                                            scale, seed):
    model = rbm.RBM.random(n_visible, n_hidden, scale=scale, bias_scale=scale, rng=seed)
    data = exact.all_states(n_visible)
    expected = enumerated_log_conditionals(model, data)
    assert np.allclose(log_conditionals(model, data), expected, rtol=1e-9, atol=1e-9)
    assert pseudo_log_likelihood(model, data) == pytest.approx(expected.sum(axis=1).mean(),
                                                               rel=1e-9, abs=1e-9)


def test_log_conditionals_are_finite_and_non_positive_for_huge_weights():
    model = rbm.RBM.random(8, 6, scale=1e4, bias_scale=1e4, rng=0)
    terms = log_conditionals(model, exact.all_states(8))
    assert np.all(np.isfinite(terms)) and np.all(terms <= 0)


def test_pseudo_log_likelihood_equals_log_likelihood_when_units_are_independent(small_data):
    model = rbm.RBM(W=np.zeros((6, 3)), b=[0.5, -1.0, 2.0, 0.0, -0.3, 1.1], c=[0.2, -0.4, 3.0])
    assert pseudo_log_likelihood(model, small_data) == pytest.approx(
        exact.log_likelihood(model, small_data), rel=1e-12)


def test_stochastic_estimate_flips_the_bits_drawn_from_rng(small_model, small_data):
    # The documented draw is rng.integers(0, n_visible, size=n_samples).
    terms = log_conditionals(small_model, small_data)
    bits = np.random.default_rng(42).integers(0, 6, size=len(small_data))
    expected = np.mean(6 * terms[np.arange(len(small_data)), bits])
    assert stochastic_pseudo_log_likelihood(small_model, small_data, rng=42) == pytest.approx(
        expected, rel=1e-12)


def test_stochastic_estimate_is_unbiased_for_the_exact_pseudo_log_likelihood(small_model,
                                                                             small_data):
    # Mean of 3000 seeded draws within 3 standard errors of the exact value:
    # two-sided significance about 0.3% by the central limit theorem.
    draws = np.array([stochastic_pseudo_log_likelihood(small_model, small_data, rng=seed)
                      for seed in range(3000)])
    standard_error = draws.std(ddof=1) / np.sqrt(draws.size)
    exact_value = pseudo_log_likelihood(small_model, small_data)
    assert abs(draws.mean() - exact_value) < 3 * standard_error


# -- scikit-learn's BernoulliRBM with the same parameters ------------------------------


@pytest.fixture
def sklearn_twin(small_model):
    """A BernoulliRBM holding `small_model`'s parameters, as if fitted."""
    neural_network = pytest.importorskip("sklearn.neural_network")
    twin = neural_network.BernoulliRBM(n_components=small_model.n_hidden, random_state=1234)
    twin.components_ = small_model.W.T.copy()
    twin.intercept_visible_ = small_model.b.copy()
    twin.intercept_hidden_ = small_model.c.copy()
    twin.n_features_in_ = small_model.n_visible
    return twin


def test_sklearn_free_energy_equals_model_free_energy(sklearn_twin, small_model):
    # Same sign convention: both are F(v) = -log sum_h exp(-E(v, h)).
    states = exact.all_states(small_model.n_visible)
    assert np.allclose(sklearn_twin._free_energy(states), small_model.free_energy(states),
                       rtol=1e-13, atol=1e-13)


def test_sklearn_score_samples_is_n_visible_times_the_flipped_bit_conditional(sklearn_twin,
                                                                             small_model,
                                                                             small_data):
    # score_samples flips the bits RandomState(random_state).randint(0, n_visible, n_samples)
    # draws; reproduce them to compare term by term with the exact conditionals.
    bits = np.random.RandomState(1234).randint(0, small_model.n_visible, len(small_data))
    terms = log_conditionals(small_model, small_data)
    expected = small_model.n_visible * terms[np.arange(len(small_data)), bits]
    assert np.allclose(sklearn_twin.score_samples(small_data), expected, rtol=1e-12, atol=1e-12)


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize("function", [log_conditionals, pseudo_log_likelihood,
                                      lambda model, data: stochastic_pseudo_log_likelihood(
                                          model, data, rng=0)])
@pytest.mark.parametrize(
    "data, match",
    [
        (np.zeros((2, 5)), "data must have 6 columns"),
        (np.full((2, 6), 0.5), "data must hold only 0 and 1"),
        (np.zeros(6), r"data must have shape \(n_samples, 6\)"),
    ],
)
def test_bad_data_is_refused_by_name(function, data, match, small_model):
    with pytest.raises(ValueError, match=match):
        function(small_model, data)


def test_bad_model_and_rng_are_refused_by_name(small_data, small_model):
    with pytest.raises(TypeError, match="model must be an rbm.RBM"):
        pseudo_log_likelihood(None, small_data)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        stochastic_pseudo_log_likelihood(small_model, small_data, rng=0.5)
