"""rbm.curvature against independent computations: brute-force sums over joint states,
per-state gradients from rbm.exact, and central differences of the exact gradient."""

import numpy as np
import pytest

from rbm import RBM, Gradient, curvature, exact

MODEL = RBM.random(4, 3, scale=1.0, bias_scale=0.5, rng=3)
DATA = np.array([[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 1], [1, 0, 1, 1]], dtype=float)


def joint_statistics(model):
    """Every joint state's statistics s(v, h) and its probability, by brute force."""
    rows, probs = [], []
    for v in exact.all_states(model.n_visible):
        for h in exact.all_states(model.n_hidden):
            rows.append(np.concatenate([np.outer(v, h).ravel(), v, h]))
            probs.append(-model.energy(v, h))
    logw = np.array(probs)
    w = np.exp(logw - logw.max())
    return np.array(rows), w / w.sum()


def central_difference_jacobian(f, model, step=1e-5):
    """d f(theta) / d theta by central differences, f returning a flat vector."""
    theta = Gradient(model.W, model.b, model.c).flat()
    cols = []
    for k in range(len(theta)):
        shifted = []
        for sign in (1, -1):
            t = theta.copy()
            t[k] += sign * step
            g = Gradient.from_flat(t, model.n_visible, model.n_hidden)
            shifted.append(f(RBM(g.W, g.b, g.c)))
        cols.append((shifted[0] - shifted[1]) / (2 * step))
    return np.array(cols).T


def test_log_partition_hessian_is_the_covariance_of_the_statistics():
    s, w = joint_statistics(MODEL)
    centred = s - w @ s
    brute = centred.T @ (centred * w[:, None])
    np.testing.assert_allclose(curvature.log_partition_hessian(MODEL), brute, atol=1e-12)


def test_log_partition_hessian_is_the_derivative_of_the_model_moments():
    def grad_log_z(m):
        mom = exact.model_expectations(m)
        return np.concatenate([mom.vh.ravel(), mom.v, mom.h])

    fd = central_difference_jacobian(grad_log_z, MODEL)
    # central differences with step 1e-5: error about step^2 * third derivative, below 1e-8
    np.testing.assert_allclose(curvature.log_partition_hessian(MODEL), fd, atol=1e-8)


def test_fisher_is_the_mean_outer_product_of_per_state_scores():
    states = exact.all_states(MODEL.n_visible)
    p = np.exp(exact.log_prob(MODEL, states))
    scores = np.array([exact.gradient(MODEL, v[None]).flat() for v in states])
    brute = scores.T @ (scores * p[:, None])
    np.testing.assert_allclose(curvature.fisher_information(MODEL), brute, atol=1e-12)


def test_log_likelihood_hessian_is_the_derivative_of_the_exact_gradient():
    fd = central_difference_jacobian(lambda m: exact.gradient(m, DATA).flat(), MODEL)
    H = curvature.log_likelihood_hessian(MODEL, DATA)
    np.testing.assert_allclose(H, fd, atol=1e-8)
    np.testing.assert_allclose(H, H.T, atol=1e-14)


def test_symmetries_leave_p_of_v_unchanged_and_a_mutation_is_caught():
    states = exact.all_states(MODEL.n_visible)
    reference = exact.log_prob(MODEL, states)
    for j in range(MODEL.n_hidden):
        np.testing.assert_allclose(exact.log_prob(curvature.flip_hidden(MODEL, j), states),
                                   reference, atol=1e-12)
    np.testing.assert_allclose(
        exact.log_prob(curvature.permute_hidden(MODEL, [2, 0, 1]), states), reference, atol=1e-12)
    wrong = curvature.flip_hidden(MODEL, 0)
    wrong = RBM(wrong.W, MODEL.b, wrong.c)  # without the shift of b
    assert np.abs(exact.log_prob(wrong, states) - reference).max() > 1e-3


def test_centered_parameters_define_the_same_distribution():
    mu, lam = DATA.mean(axis=0), np.full(3, 0.4)
    centered = curvature.to_centered(MODEL, mu, lam)
    back = curvature.from_centered(centered, mu, lam)
    for name in ("W", "b", "c"):
        np.testing.assert_allclose(getattr(back, name), getattr(MODEL, name), atol=1e-14)
    # the centered energy, evaluated literally on every joint state
    logw = np.array([[(v - mu) @ centered.b + (h - lam) @ centered.c + (v - mu) @ centered.W @ (h - lam)
                      for h in exact.all_states(3)] for v in exact.all_states(4)])
    log_pv = np.log(np.exp(logw).sum(axis=1))
    log_pv -= np.log(np.exp(log_pv).sum())
    np.testing.assert_allclose(exact.log_prob(back, exact.all_states(4)), log_pv, atol=1e-12)
    J = curvature.centering_jacobian(4, 3, mu, lam)
    np.testing.assert_allclose(J @ centered.flat(), Gradient(MODEL.W, MODEL.b, MODEL.c).flat(),
                               atol=1e-14)


def test_natural_gradient_solves_the_damped_fisher_system():
    step = curvature.natural_gradient(MODEL, DATA, damping=1e-3)
    F = curvature.fisher_information(MODEL)
    np.testing.assert_allclose((F + 1e-3 * np.eye(len(F))) @ step.flat(),
                               exact.gradient(MODEL, DATA).flat(), atol=1e-10)


def test_bad_input_is_refused_with_a_clear_message():
    with pytest.raises(ValueError, match="j must be an integer"):
        curvature.flip_hidden(MODEL, 3)
    with pytest.raises(ValueError, match="order must be a permutation"):
        curvature.permute_hidden(MODEL, [0, 0, 1])
    with pytest.raises(ValueError, match="damping must be a positive"):
        curvature.natural_gradient(MODEL, DATA, damping=0.0)
    with pytest.raises(ValueError, match="mu must have shape"):
        curvature.to_centered(MODEL, np.zeros(3), np.zeros(3))
    with pytest.raises(TypeError, match="centered must be an rbm.Gradient"):
        curvature.from_centered(MODEL, np.zeros(4), np.zeros(3))
    with pytest.raises(ValueError, match="fisher_information"):
        curvature.fisher_information(RBM.random(17, 2, rng=0))


def test_an_added_hidden_unit_raises_one_state_by_the_predicted_gain():
    data = np.array([[1, 0, 1, 1], [1, 0, 1, 1], [0, 1, 0, 0]], dtype=float)
    states = exact.all_states(4)
    q = exact.empirical_distribution(data)
    p = np.exp(exact.log_prob(MODEL, states))
    i = int(np.argmax(q - p))
    rho, pi = q[i], p[i]
    log_gain = np.log((rho - pi) / (pi * (1 - rho)))
    bigger = curvature.add_hidden_unit(MODEL, states[i], float(log_gain))
    predicted = rho * np.log(rho / pi) + (1 - rho) * np.log((1 - rho) / (1 - pi))
    gain = exact.log_likelihood(bigger, data) - exact.log_likelihood(MODEL, data)
    # other states change by factors within exp(log_gain - 30) of 1
    assert abs(gain - predicted) < 1e-10 and predicted > 0
    ratio = np.exp(exact.log_prob(bigger, states) - exact.log_prob(MODEL, states))
    others = np.delete(ratio, i)
    np.testing.assert_allclose(others / others[0], 1.0, atol=1e-10)
    np.testing.assert_allclose(ratio[i] / others[0], 1 + np.exp(log_gain), rtol=1e-10)


def test_add_hidden_unit_refuses_bad_input():
    with pytest.raises(ValueError, match="sharpness must be positive"):
        curvature.add_hidden_unit(MODEL, [1, 0, 1, 1], 0.0, sharpness=0.0)
    with pytest.raises(ValueError, match="log_gain must be a finite number"):
        curvature.add_hidden_unit(MODEL, [1, 0, 1, 1], float("nan"))
    with pytest.raises(ValueError, match="state"):
        curvature.add_hidden_unit(MODEL, [1, 0, 2, 1], 0.0)


SADDLE_DATA = (np.random.default_rng(5).random((12, 5)) < 0.5).astype(float)


def test_saddle_model_is_a_critical_point_for_any_hidden_biases():
    for c in ([0.0], [1.5, -3.0, 0.2]):
        model = curvature.saddle_model(SADDLE_DATA, c)
        assert np.abs(exact.gradient(model, SADDLE_DATA).flat()).max() < 1e-12


def test_saddle_curvature_is_the_exact_hessian_along_a_weight_column():
    c = np.array([0.0, 1.5, -3.0])
    model = curvature.saddle_model(SADDLE_DATA, c)
    H = curvature.log_likelihood_hessian(model, SADDLE_DATA)
    K = curvature.saddle_curvature(SADDLE_DATA, c)
    rng = np.random.default_rng(0)
    for j in range(3):
        x = rng.normal(size=5)
        W = np.zeros((5, 3))
        W[:, j] = x
        s = 1.0 / (1.0 + np.exp(-c[j]))
        d = Gradient(W, -s * x, np.zeros(3)).flat()
        assert abs(d @ H @ d - x @ K[j] @ x) < 1e-12
        # the weight column alone, without the shift of b, is curved less
        d_alone = Gradient(W, np.zeros(5), np.zeros(3)).flat()
        assert d_alone @ H @ d_alone < x @ K[j] @ x - 1e-3


def test_saddle_top_eigenvalue_is_the_largest_column_curvature_for_equal_biases():
    for c in (0.0, 5.0):
        model = curvature.saddle_model(SADDLE_DATA, [c, c])
        top = np.linalg.eigvalsh(curvature.log_likelihood_hessian(model, SADDLE_DATA)).max()
        K = curvature.saddle_curvature(SADDLE_DATA, [c, c])
        np.testing.assert_allclose(top, np.linalg.eigvalsh(K[0]).max(), atol=1e-12)


def test_saddle_functions_refuse_bad_input():
    constant = SADDLE_DATA.copy()
    constant[:, 2] = 1.0
    with pytest.raises(ValueError, match="every pixel both on and off"):
        curvature.saddle_model(constant, [0.0])
    with pytest.raises(ValueError, match="c must be a non-empty 1-d array"):
        curvature.saddle_curvature(SADDLE_DATA, [[0.0]])
    with pytest.raises(ValueError, match="data must have shape"):
        curvature.saddle_model(SADDLE_DATA[0], [0.0])
