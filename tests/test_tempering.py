"""Parallel tempering's exact transition matrix, against its definition written out."""

import itertools

import numpy as np
import pytest

from rbm import RBM, exact
from rbm.tempering import MAX_TEMPERING_BITS, tempered, tempering_transition_matrix
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
