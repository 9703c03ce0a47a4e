"""The exact Gibbs transition matrix and the exact expectation of CD-k, against brute force."""

import itertools
import math

import numpy as np
import pytest

from rbm import RBM, exact
from rbm.transition import (
    MAX_JOINT_BITS,
    MAX_TRANSITION_BITS,
    MAX_VARIANT_BITS,
    cd1_variant_expected_gradient,
    cd_expected_gradient,
    gibbs_transition_matrix,
)
from conftest import MODEL_DATA as DATA


def _sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


def _brute_force_chain(model):
    """Conditionals and the visible transition, by explicit loops over tuples of states.

    Written independently of the package: plain Python floats, states as
    tuples, no ordering convention shared with ``rbm.exact.all_states``.
    """
    W, b, c = model.W.tolist(), model.b.tolist(), model.c.tolist()
    nv, nh = model.n_visible, model.n_hidden
    vs = list(itertools.product((0, 1), repeat=nv))
    hs = list(itertools.product((0, 1), repeat=nh))

    def p_h_given_v(h, v):
        out = 1.0
        for j in range(nh):
            on = _sigmoid(c[j] + sum(W[i][j] * v[i] for i in range(nv)))
            out *= on if h[j] else 1.0 - on
        return out

    def p_v_given_h(v, h):
        out = 1.0
        for i in range(nv):
            on = _sigmoid(b[i] + sum(W[i][j] * h[j] for j in range(nh)))
            out *= on if v[i] else 1.0 - on
        return out

    A = {(v, h): p_h_given_v(h, v) for v in vs for h in hs}
    B = {(h, v): p_v_given_h(v, h) for h in hs for v in vs}
    T = {(v, w): sum(A[v, h] * B[h, w] for h in hs) for v in vs for w in vs}
    return vs, hs, A, T


def _brute_force_cd_expectation(model, data, k):
    vs, hs, A, T = _brute_force_chain(model)
    nv, nh = model.n_visible, model.n_hidden

    def mean_h(v):
        return [sum(A[v, h] * h[j] for h in hs) for j in range(nh)]

    rows = [tuple(int(x) for x in row) for row in data]
    r = {v: rows.count(v) / len(rows) for v in vs}
    for _ in range(k):
        r = {w: sum(r[v] * T[v, w] for v in vs) for w in vs}

    def moments(dist):
        W = np.zeros((nv, nh))
        bv = np.zeros(nv)
        ch = np.zeros(nh)
        for v, weight in dist.items():
            m = mean_h(v)
            for i in range(nv):
                bv[i] += weight * v[i]
                for j in range(nh):
                    W[i, j] += weight * v[i] * m[j]
            for j in range(nh):
                ch[j] += weight * m[j]
        return W, bv, ch

    pos = moments({v: rows.count(v) / len(rows) for v in set(rows)})
    neg = moments(r)
    return [p - n for p, n in zip(pos, neg)]


@pytest.mark.parametrize("k", [1, 3, 10])
def test_cd_expected_gradient_equals_brute_force_markov_chain(model, k):
    expected = _brute_force_cd_expectation(model, DATA, k)
    got = cd_expected_gradient(model, DATA, k)
    for name, want, have in zip("Wbc", expected, (got.W, got.b, got.c)):
        np.testing.assert_allclose(have, want, rtol=0, atol=1e-12, err_msg=name)


def test_gibbs_transition_matrix_equals_brute_force(model):
    vs, _, _, T_bf = _brute_force_chain(model)
    T = gibbs_transition_matrix(model)
    # The package orders states as binary numbers, first unit most significant.
    index = {v: int("".join(map(str, v)), 2) for v in vs}
    for (v, w), value in T_bf.items():
        assert abs(T[index[v], index[w]] - value) < 1e-12


def test_gibbs_transition_matrix_is_stochastic_with_the_model_as_stationary_distribution(model):
    T = gibbs_transition_matrix(model)
    p = exact.visible_distribution(model)
    np.testing.assert_allclose(T.sum(axis=1), 1.0, rtol=0, atol=1e-13)
    np.testing.assert_allclose(p @ T, p, rtol=0, atol=1e-13)


def test_chunked_propagation_gives_the_same_expectation(model):
    whole = cd_expected_gradient(model, DATA, 3)
    chunked = cd_expected_gradient(model, DATA, 3, chunk_size=5)  # 5 divides neither 16 nor 64
    np.testing.assert_allclose(chunked.flat(), whole.flat(), rtol=0, atol=1e-14)


def test_cd_1_is_biased_on_the_example(model):
    bias = cd_expected_gradient(model, DATA, 1) - exact.gradient(model, DATA)
    assert bias.max_abs() > 1e-3


def test_large_k_tends_to_the_exact_gradient_on_a_mixing_chain():
    # Weak weights: the second eigenvalue of T is about 0.02, so after 200
    # steps the chain's distance from p(v) is far below rounding; the
    # tolerance 1e-12 only allows for rounding in the two computations.
    model = RBM.random(6, 4, scale=0.3, bias_scale=0.3, distribution="uniform", rng=7)
    second = np.sort(np.abs(np.linalg.eigvals(gibbs_transition_matrix(model))))[-2]
    assert second < 0.1
    diff = cd_expected_gradient(model, DATA, 200) - exact.gradient(model, DATA)
    assert diff.max_abs() < 1e-12


def test_bias_shrinks_with_k(model):
    g = exact.gradient(model, DATA)
    biases = [(cd_expected_gradient(model, DATA, k) - g).max_abs() for k in (1, 3, 10)]
    assert biases[0] > biases[1] > biases[2]


@pytest.mark.parametrize("shape, name", [((MAX_TRANSITION_BITS + 1, 2), "n_visible=15"),
                                         ((4, MAX_JOINT_BITS - 3), "n_visible \\+ n_hidden=31")])
def test_too_large_layers_are_refused_by_name(shape, name):
    model = RBM(np.zeros(shape), np.zeros(shape[0]), np.zeros(shape[1]))
    data = np.zeros((1, shape[0]))
    with pytest.raises(ValueError, match=name):
        cd_expected_gradient(model, data, 1)
    with pytest.raises(ValueError, match=name):
        gibbs_transition_matrix(model)


@pytest.mark.parametrize("k", [0, -2])
def test_k_below_one_is_refused(model, k):
    with pytest.raises(ValueError, match="k must be >= 1"):
        cd_expected_gradient(model, DATA, k)


def test_non_integer_k_is_a_type_error(model):
    with pytest.raises(TypeError, match="k must be an int"):
        cd_expected_gradient(model, DATA, 1.5)


@pytest.mark.parametrize("data, message", [
    (np.zeros((3, 5)), "data must have 6 columns"),
    (np.full((2, 6), 0.5), "data must hold only 0 and 1"),
    (np.zeros(6), r"data must have shape \(n_samples, 6\)"),
])
def test_bad_data_is_refused_by_name(model, data, message):
    with pytest.raises(ValueError, match=message):
        cd_expected_gradient(model, data, 1)


def test_model_must_be_an_rbm():
    with pytest.raises(TypeError, match="model must be an rbm.RBM"):
        gibbs_transition_matrix("not a model")


def test_a_sequence_of_k_agrees_with_each_k_alone(model):
    """On 6 visible units every k forms T once (2**6 <= 64 k); a sequence follows one chain."""
    single = [cd_expected_gradient(model, DATA, k=k) for k in (1, 2, 40)]
    curve = cd_expected_gradient(model, DATA, k=[40, 1, 2])
    for one, from_curve in zip(single, [curve[1], curve[2], curve[0]]):
        assert np.allclose(one.flat(), from_curve.flat(), rtol=1e-10, atol=1e-13)
    chunked = cd_expected_gradient(model, DATA, k=range(1, 3), chunk_size=3)
    assert np.allclose(chunked[1].flat(), single[1].flat(), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("chunk_size", [None, 7])
def test_pushing_through_the_conditionals_agrees_with_the_transition_matrix(monkeypatch,
                                                                             chunk_size):
    """With 2**9 = 512 > 64 k visible states, k = 1, 2, 3 push the data distribution through
    p(h|v) and p(v|h) (counted below); the result must equal q T^k formed from the matrix."""
    from rbm import transition

    model = RBM.random(9, 5, scale=1.0, bias_scale=0.5, rng=3)
    data = (np.random.default_rng(4).random((12, 9)) < 0.5).astype(float)
    pushes = []
    real_push = transition._push
    monkeypatch.setattr(transition, "_push", lambda *a: pushes.append(1) or real_push(*a))
    got = cd_expected_gradient(model, data, k=[1, 2, 3], chunk_size=chunk_size)
    assert len(pushes) == 2 * 3  # two conditionals per step, three steps: the push path ran
    T = gibbs_transition_matrix(model)
    V = exact.all_states(9)
    P = model.prob_h_given_v(V)
    pos = exact.data_expectations(model, data)
    r = exact.empirical_distribution(data)
    for k in (1, 2, 3):
        r = r @ T
        want = np.concatenate([(pos.vh - (V * r[:, None]).T @ P).ravel(), pos.v - r @ V,
                               pos.h - r @ P])
        np.testing.assert_allclose(got[k - 1].flat(), want, rtol=1e-10, atol=1e-13)


def test_transition_matrix_does_not_depend_on_the_block_size(model):
    T = gibbs_transition_matrix(model)
    for chunk_size in (1, 5, 16):
        assert np.allclose(gibbs_transition_matrix(model, chunk_size=chunk_size), T,
                           rtol=1e-12, atol=1e-15)


def test_an_empty_sequence_of_steps_is_refused(model):
    with pytest.raises(ValueError, match="k must hold at least one"):
        cd_expected_gradient(model, DATA, k=[])
    with pytest.raises(ValueError, match="k must be >= 1"):
        cd_expected_gradient(model, DATA, k=[3, 0])


# -- CD-1 and its variants -----------------------------------------------------

VARIANTS = [("sample", "reconstruction"), ("sample", "data"),
            ("probabilities", "reconstruction"), ("probabilities", "data")]


def _simulated_variant(model, data, reconstruction, negative_hidden, n_repeats, rng):
    """Monte Carlo mean and standard error of the variant's estimate, one chain per row and repeat.

    Written with plain NumPy from the definitions, sharing no code with the package.
    """
    def sig(x):
        return 1.0 / (1.0 + np.exp(-x))

    v0 = np.repeat(data, n_repeats, axis=0)
    p0 = sig(v0 @ model.W + model.c)
    h0 = (rng.random(p0.shape) < p0).astype(float)
    mean_v1 = sig(h0 @ model.W.T + model.b)
    v1 = mean_v1 if reconstruction == "probabilities" else (
        rng.random(mean_v1.shape) < mean_v1).astype(float)
    s = sig(v1 @ model.W + model.c) if negative_hidden == "reconstruction" else h0
    # One estimate per chain: positive minus negative statistics, flattened as W, b, c.
    per_chain = np.concatenate([
        (v0[:, :, None] * p0[:, None, :] - v1[:, :, None] * s[:, None, :]).reshape(len(v0), -1),
        v0 - v1, p0 - s], axis=1)
    return per_chain.mean(axis=0), per_chain.std(axis=0, ddof=1) / np.sqrt(len(v0))


def test_cd1_variant_defaults_equal_the_cd1_expectation(model):
    got = cd1_variant_expected_gradient(model, DATA)
    want = cd_expected_gradient(model, DATA, k=1)
    assert (got - want).max_abs() < 1e-12


@pytest.mark.parametrize("reconstruction, negative_hidden", VARIANTS)
def test_cd1_variant_expectation_matches_simulation(model, reconstruction, negative_hidden):
    # Every entry within 5 standard errors: a false alarm has probability below 1e-4 per test.
    rng = np.random.default_rng(7)
    mean, se = _simulated_variant(model, DATA, reconstruction, negative_hidden, 40_000, rng)
    exact_value = cd1_variant_expected_gradient(
        model, DATA, reconstruction=reconstruction, negative_hidden=negative_hidden).flat()
    assert np.all(np.abs(mean - exact_value) <= 5 * se + 1e-12)


def test_pairing_with_the_data_step_hidden_state_never_moves_the_hidden_biases(model):
    for reconstruction in ("sample", "probabilities"):
        g = cd1_variant_expected_gradient(model, DATA, reconstruction=reconstruction,
                                          negative_hidden="data")
        assert np.abs(g.c).max() < 1e-12


def test_mean_field_reconstruction_changes_the_expectation(model):
    cd1 = cd1_variant_expected_gradient(model, DATA)
    mean_field = cd1_variant_expected_gradient(model, DATA, reconstruction="probabilities")
    assert (mean_field - cd1).max_abs() > 1e-2


@pytest.mark.parametrize("kwargs, message", [
    ({"reconstruction": "mean"}, "reconstruction must be"),
    ({"negative_hidden": "h0"}, "negative_hidden must be"),
])
def test_unknown_cd1_variants_are_refused_by_name(model, kwargs, message):
    with pytest.raises(ValueError, match=message):
        cd1_variant_expected_gradient(model, DATA, **kwargs)


def test_cd1_variant_refuses_models_beyond_its_enumeration_limit():
    big = RBM.random(MAX_VARIANT_BITS - 3, 4, rng=0)
    with pytest.raises(ValueError, match="n_visible \\+ n_hidden"):
        cd1_variant_expected_gradient(big, np.zeros((1, MAX_VARIANT_BITS - 3)))
