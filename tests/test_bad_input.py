"""Bad input fails at once with an error that names the argument."""

import numpy as np
import pytest

import rbm
from rbm import exact


@pytest.mark.parametrize(
    "W, b, c, error, match",
    [
        (np.zeros((3, 2)), np.zeros(2), np.zeros(2), ValueError, r"b must have shape \(3,\)"),
        (np.zeros((3, 2)), np.zeros(3), np.zeros(3), ValueError, r"c must have shape \(2,\)"),
        (np.zeros(3), np.zeros(3), np.zeros(1), ValueError, "W must be a 2-d array"),
        (np.zeros((0, 2)), np.zeros(0), np.zeros(2), ValueError, "W must be a 2-d array"),
        (np.array([[np.nan]]), np.zeros(1), np.zeros(1), ValueError, "W must be finite"),
        (np.zeros((1, 1)), np.array([np.inf]), np.zeros(1), ValueError, "b must be finite"),
        (np.zeros((1, 1)), np.zeros(1), np.array(["x"]), TypeError, "c must be a numeric"),
        ([["a"]], np.zeros(1), np.zeros(1), TypeError, "W must be a numeric"),
    ],
)
def test_bad_parameters_are_refused(W, b, c, error, match):
    with pytest.raises(error, match=match):
        rbm.RBM(W, b, c)


@pytest.mark.parametrize(
    "data, match",
    [
        (np.zeros((2, 5)), r"data must have 6 columns"),
        (np.zeros((0, 6)), "data is empty"),
        (np.full((2, 6), 0.5), "data must hold only 0 and 1, found 0.5 at row 0, column 0"),
        (np.array([[0, 1, 0, 1, 0, np.nan]]), "data must hold only 0 and 1, found nan"),
        (np.array([[0, 1, 0, 1, 0, 2]]), "data must hold only 0 and 1, found 2"),
        (np.zeros(6), r"data must have shape \(n_samples, 6\)"),
        (np.zeros((1, 1, 6)), r"data must have shape \(n_samples, 6\)"),
    ],
)
def test_bad_data_is_refused_by_every_exact_function(data, match, small_model):
    for function in (exact.log_likelihood, exact.gradient, exact.data_expectations):
        with pytest.raises(ValueError, match=match):
            function(small_model, data)


def test_non_numeric_data_is_a_type_error(small_model):
    with pytest.raises(TypeError, match="data must be a numeric array"):
        exact.log_likelihood(small_model, [["0"] * 6])


def test_states_of_the_wrong_width_are_refused(small_model):
    with pytest.raises(ValueError, match="v must have 6 columns"):
        small_model.free_energy(np.zeros(5))
    with pytest.raises(ValueError, match="h must have 4 columns"):
        small_model.prob_v_given_h(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="same number of rows"):
        small_model.energy(np.zeros((2, 6)), np.zeros((3, 4)))


@pytest.mark.parametrize("n_visible, n_hidden", [(31, 40), (1000, 31)])
def test_enumeration_beyond_the_limit_is_refused_at_once(n_visible, n_hidden):
    model = rbm.RBM(np.zeros((n_visible, n_hidden)), np.zeros(n_visible), np.zeros(n_hidden))
    for function in (exact.log_partition, exact.model_expectations):
        with pytest.raises(ValueError, match=r"2\*\*31 states, beyond the limit of 2\*\*30"):
            function(model)


def test_dense_functions_have_their_own_limit():
    model = rbm.RBM(np.zeros((21, 2)), np.zeros(21), np.zeros(2))
    with pytest.raises(ValueError, match=r"visible_distribution needs .* 2\*\*21 states"):
        exact.visible_distribution(model)
    with pytest.raises(ValueError, match="kl_divergence"):
        exact.kl_divergence(np.ones(4) / 4, model)
    with pytest.raises(ValueError, match="all_states"):
        exact.all_states(21)


@pytest.mark.parametrize(
    "q, match",
    [
        (np.ones(8) / 8, r"q must have shape \(64,\)"),
        (np.full(64, 1 / 32), "q must sum to 1"),
        (np.concatenate([[-0.5, 1.5], np.zeros(62)]), "non-negative"),
    ],
)
def test_kl_refuses_a_bad_distribution(q, match, small_model):
    with pytest.raises(ValueError, match=match):
        exact.kl_divergence(q, small_model)


def test_other_bad_arguments(small_model):
    with pytest.raises(TypeError, match="model must be an rbm.RBM"):
        exact.log_partition("not a model")
    with pytest.raises(ValueError, match="layer must be"):
        exact.log_partition(small_model, layer="both")
    with pytest.raises(ValueError, match="chunk_size must be >= 1"):
        exact.log_partition(small_model, chunk_size=0)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        small_model.sample_h_given_v(np.zeros(6), rng=None)
    with pytest.raises(ValueError, match="n_hidden must be >= 1"):
        rbm.RBM.random(3, 0, rng=0)
    with pytest.raises(ValueError, match="distribution must be"):
        rbm.RBM.random(3, 2, rng=0, distribution="cauchy")
    with pytest.raises(ValueError, match="scale must be finite"):
        rbm.RBM.random(3, 2, rng=0, scale=-1.0)
