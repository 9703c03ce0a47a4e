"""CD's objective, its dropped term, the update's Jacobian, loops and fixed points.

Each quantity is compared with a computation that shares no code with
``rbm.cd_theory``: ``rbm.transition`` (the chain as a matrix), ``rbm.exact``
(KL and the likelihood gradient) and central finite differences.
"""

import numpy as np
import pytest

from rbm import RBM, Gradient, exact
from rbm.cd_theory import (
    MAX_THEORY_UNITS,
    cd_objective,
    cd_objective_gradient,
    chain_divergence_gradient,
    dobrushin_coefficient,
    dropped_term,
    expected_update,
    fixed_point,
    largest_flip_energy,
    loop_integral,
    second_eigenvalue,
    transition_eigenvalues,
    update_jacobian,
)
from rbm.transition import cd_expected_gradient, gibbs_transition_matrix

DATA = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0], [1, 0, 1, 0]])


@pytest.fixture
def model():
    return RBM.random(4, 3, scale=1.5, bias_scale=0.5, rng=3)


@pytest.fixture
def q():
    return exact.empirical_distribution(DATA)


def _with(theta, like):
    g = Gradient.from_flat(theta, like.n_visible, like.n_hidden)
    return RBM(g.W, g.b, g.c)


def _central_difference(f, model, step):
    """Columns d f / d theta_j by central differences: error <= step**2 |f'''| / 6 + eps |f| / step."""
    theta = Gradient(model.W, model.b, model.c).flat()
    columns = []
    for j in range(theta.size):
        e = np.zeros_like(theta)
        e[j] = step
        columns.append((np.asarray(f(_with(theta + e, model))) -
                        np.asarray(f(_with(theta - e, model)))) / (2 * step))
    return np.stack(columns, axis=-1)


@pytest.mark.parametrize("k", [1, 2, 7])
def test_expected_update_is_the_expected_cd_k_estimate(model, q, k):
    diff = expected_update(model, q, k) - cd_expected_gradient(model, DATA, k)
    assert diff.max_abs() < 1e-13


def test_expected_update_without_k_is_the_likelihood_gradient(model, q):
    assert (expected_update(model, q, None) - exact.gradient(model, DATA)).max_abs() < 1e-13


def test_weight_decay_subtracts_lambda_theta(model, q):
    plain, decayed = expected_update(model, q, 2), expected_update(model, q, 2, weight_decay=0.1)
    theta = Gradient(model.W, model.b, model.c).flat()
    assert np.abs((plain - decayed).flat() - 0.1 * theta).max() < 1e-15


@pytest.mark.parametrize("k", [1, 3])
def test_cd_objective_is_the_difference_of_two_divergences(model, q, k):
    r = q @ np.linalg.matrix_power(gibbs_transition_matrix(model), k)
    expected = exact.kl_divergence(q, model) - exact.kl_divergence(r, model)
    assert abs(cd_objective(model, q, k) - expected) < 1e-12


def test_cd_objective_is_positive_and_falls_with_k_towards_the_full_divergence(model, q):
    values = [cd_objective(model, q, k) for k in (1, 2, 4, 8, 200)]
    assert values[0] > 0 and np.all(np.diff(values) > 0)
    assert abs(values[-1] - exact.kl_divergence(q, model)) < 1e-10


def test_cd_objective_gradient_matches_central_differences(model, q):
    # |f'''| is below 10 here, so the step 1e-4 leaves an error below 2e-8 + 2e-12.
    fd = _central_difference(lambda m: cd_objective(m, q, 2), model, 1e-4)
    assert np.abs(cd_objective_gradient(model, q, 2).flat() - fd).max() < 1e-7


@pytest.mark.parametrize("k", [1, 3])
def test_dropped_term_is_the_derivative_of_the_chain_weighted_by_log_r_over_p(model, q, k):
    def r_k(m):
        return q @ np.linalg.matrix_power(gibbs_transition_matrix(m), k)

    r = r_k(model)
    log_ratio = np.log(r) - np.log(exact.visible_distribution(model))
    expected = log_ratio @ _central_difference(r_k, model, 1e-5)
    assert np.abs(dropped_term(model, q, k).flat() - expected).max() < 1e-8


@pytest.mark.parametrize("k", [1, 2, 5, 20])
def test_minus_the_objective_gradient_is_the_update_plus_the_dropped_term(model, q, k):
    lhs = -cd_objective_gradient(model, q, k)
    rhs = expected_update(model, q, k) + dropped_term(model, q, k)
    assert (lhs - rhs).max_abs() < 1e-12


def test_dropped_term_vanishes_as_the_chain_mixes(model, q):
    assert dropped_term(model, q, 1).max_abs() > 1e-3
    assert dropped_term(model, q, 300).max_abs() < 1e-10


@pytest.mark.parametrize("k", [1, None])
def test_update_jacobian_matches_central_differences(model, q, k):
    fd = _central_difference(lambda m: expected_update(m, q, k).flat(), model, 1e-5)
    assert np.abs(update_jacobian(model, q, k) - fd).max() < 1e-8


def test_the_likelihood_hessian_is_symmetric_and_the_cd_jacobian_is_not(model, q):
    H, J = update_jacobian(model, q, None), update_jacobian(model, q, 1)
    assert np.abs(H - H.T).max() < 1e-13
    assert np.abs(J - J.T).max() > 1e-3


def test_loop_integrals_vanish_for_the_gradient_and_follow_stokes_for_cd(model, q):
    J = update_jacobian(model, q, 1)
    a, b = np.unravel_index(np.abs(J - J.T).argmax(), J.shape)
    u, w = np.eye(len(J))[a], np.eye(len(J))[b]
    assert abs(loop_integral(model, q, None, u, w, radius=0.5)) < 1e-13
    radius = 1e-3
    stokes = np.pi * radius**2 * (w @ J @ u - u @ J @ w)
    loop = loop_integral(model, q, 1, u, w, radius=radius, n_points=16)
    assert abs(loop - stokes) < 1e-3 * abs(stokes)
    # the trapezoidal rule has converged at 64 points
    wide = [loop_integral(model, q, 1, u, w, radius=0.5, n_points=n) for n in (64, 128)]
    assert abs(wide[0]) > 1e-4 and abs(wide[0] - wide[1]) < 1e-14


def test_every_cd_k_update_vanishes_where_the_model_is_the_data_distribution():
    teacher = RBM.random(4, 2, scale=2.0, bias_scale=0.5, rng=0)
    q = exact.visible_distribution(teacher)
    for k in (None, 1, 3):
        assert expected_update(teacher, q, k).max_abs() < 1e-14  # rounding of a few steps


def test_fixed_point_with_weight_decay_is_a_zero_of_the_decayed_field(q):
    start = RBM.random(4, 2, scale=0.1, rng=2)
    smooth = 0.9 * q + 0.1 / 16
    found = fixed_point(start, smooth, 1, weight_decay=1e-3, ascent_steps=1000)
    assert expected_update(found, smooth, 1, weight_decay=1e-3).max_abs() <= 1e-12
    assert expected_update(found, smooth, 1).max_abs() > 1e-4
    # an attracting zero of the expected CD-1 course
    J = update_jacobian(found, smooth, 1, weight_decay=1e-3)
    assert np.linalg.eigvals(J).real.max() < 0


def test_fixed_point_reports_failure(q):
    start = RBM.random(4, 2, scale=3.0, rng=2)
    with pytest.raises(RuntimeError, match="did not reach"):
        fixed_point(start, q, 1, max_iter=1)


@pytest.mark.parametrize("k", [1, 3])
def test_chain_divergence_gradient_matches_central_differences(model, q, k):
    def divergence(m):
        r = q @ np.linalg.matrix_power(gibbs_transition_matrix(m), k)
        return exact.kl_divergence(r, m)

    expected = _central_difference(divergence, model, 1e-5)
    assert np.abs(chain_divergence_gradient(model, q, k).flat() - expected).max() < 1e-8


@pytest.mark.parametrize("k", [1, 2, 5])
def test_chain_divergence_gradient_is_the_dropped_term_minus_the_bias(model, q, k):
    bias = expected_update(model, q, k) - expected_update(model, q, None)
    diff = chain_divergence_gradient(model, q, k) - (dropped_term(model, q, k) + bias)
    assert diff.max_abs() < 1e-13


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda m, q: expected_update("model", q, 1), TypeError, "model must be an rbm.RBM"),
        (lambda m, q: expected_update(m, q[:-1], 1), ValueError, r"q must have shape \(16,\)"),
        (lambda m, q: expected_update(m, -q, 1), ValueError, "q must hold finite, non-negative"),
        (lambda m, q: expected_update(m, q, 0), ValueError, "k must be >= 1"),
        (lambda m, q: expected_update(m, q, 1.5), TypeError, "k must be an int"),
        (lambda m, q: expected_update(m, q, 1, weight_decay=-1), ValueError, "weight_decay"),
        (lambda m, q: cd_objective(m, q, None), TypeError, "k must be an int"),
        (lambda m, q: dropped_term(m, q, 0), ValueError, "k must be >= 1"),
        (lambda m, q: chain_divergence_gradient(m, q, None), TypeError, "k must be an int"),
        (lambda m, q: loop_integral(m, q, 1, np.ones(3), np.ones(19), radius=1.0), ValueError,
         r"u must be a Gradient or have shape \(19,\)"),
        (lambda m, q: loop_integral(m, q, 1, np.ones(19), np.ones(19), radius=0.0), ValueError,
         "radius must be finite and > 0"),
        (lambda m, q: loop_integral(m, q, 1, np.ones(19), np.ones(19), radius=1.0, n_points=2),
         ValueError, "n_points must be >= 3"),
        (lambda m, q: fixed_point(m, q, 1, ascent_steps=-1), ValueError, "ascent_steps"),
    ],
)
def test_bad_input_is_refused_by_name(model, q, call, error, match):
    with pytest.raises(error, match=match):
        call(model, q)


def test_layers_beyond_the_limit_are_refused():
    big = RBM.random(2, MAX_THEORY_UNITS + 1, scale=0.1, rng=0)
    with pytest.raises(ValueError, match=f"n_hidden={MAX_THEORY_UNITS + 1}"):
        expected_update(big, np.full(4, 0.25), 1)


def test_second_eigenvalue_is_that_of_the_transition_matrix(model):
    eigenvalues = np.sort(np.linalg.eigvals(gibbs_transition_matrix(model)).real)
    assert abs(second_eigenvalue(model) - eigenvalues[-2]) < 1e-12


def test_dobrushin_coefficient_is_the_largest_distance_between_two_rows(model):
    T = gibbs_transition_matrix(model)
    brute = max(0.5 * np.abs(T[i] - T[j]).sum() for i in range(len(T)) for j in range(len(T)))
    assert abs(dobrushin_coefficient(model) - brute) < 1e-14
    # and it contracts: TV(aT, bT) <= delta TV(a, b) for two distributions
    a, b = np.random.default_rng(0).dirichlet(np.ones(len(T)), size=2)
    assert 0.5 * np.abs((a - b) @ T).sum() <= dobrushin_coefficient(model) * 0.5 * np.abs(a - b).sum()


@pytest.mark.parametrize("scale", [0.5, 2.0, 6.0])
def test_transition_eigenvalues_are_those_of_the_matrix_and_lie_in_zero_one(scale):
    model = RBM.random(4, 3, scale=scale, bias_scale=1.0, rng=1)
    eigenvalues = transition_eigenvalues(model)
    direct = np.sort(np.linalg.eigvals(gibbs_transition_matrix(model)).real)
    assert np.abs(eigenvalues - direct).max() < 1e-10
    assert eigenvalues[0] > -1e-12 and abs(eigenvalues[-1] - 1) < 1e-12


def test_largest_flip_energy_is_the_largest_energy_change_of_one_flip(model):
    from rbm.exact import all_states

    V, H = all_states(model.n_visible), all_states(model.n_hidden)
    energy = -(V @ model.b)[:, None] - (H @ model.c)[None, :] - V @ model.W @ H.T
    largest = 0.0
    for i in range(model.n_visible):
        flipped = V.copy()
        flipped[:, i] = 1 - flipped[:, i]
        other = -(flipped @ model.b)[:, None] - (H @ model.c)[None, :] - flipped @ model.W @ H.T
        largest = max(largest, np.abs(other - energy).max())
    for j in range(model.n_hidden):
        flipped = H.copy()
        flipped[:, j] = 1 - flipped[:, j]
        other = -(V @ model.b)[:, None] - (flipped @ model.c)[None, :] - V @ model.W @ flipped.T
        largest = max(largest, np.abs(other - energy).max())
    assert abs(largest_flip_energy(model) - largest) < 1e-12
