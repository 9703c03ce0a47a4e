"""rbm.cd_theory on every pair of discrete layers ({0,1}, ±1, Potts), against brute force.

Each quantity is compared with code that shares none of ``rbm.cd_theory``'s: the
general path of ``rbm.transition`` (the chain as a matrix of the layers' conditionals),
``rbm.exact`` (KL, the likelihood gradient) and central finite differences over the
model's parameters.
"""

import itertools

import numpy as np
import pytest

from rbm import RBM, cd_theory, exact, transition
from rbm.layers import Binary, Gaussian, Potts, Spin

KINDS = {"binary": lambda n, r: Binary(0.5 * r.normal(size=n)),
         "spin": lambda n, r: Spin(0.3 * r.normal(size=n)),
         "potts": lambda n, r: Potts(0.5 * r.normal(size=(n, 3)))}
PAIRS = [("spin", "spin"), ("spin", "binary"), ("binary", "spin"), ("potts", "binary"),
         ("potts", "spin"), ("binary", "potts")]


def _model(pair, seed=0):
    r = np.random.default_rng(seed)
    return RBM.random(KINDS[pair[0]](3, r), KINDS[pair[1]](2, r), scale=0.8, rng=seed)


def _q(model, seed=1):
    data = model.visible.random_states(5, rng=seed)
    counts = np.bincount(model.visible.index_of(data),
                         minlength=model.visible.n_states ** model.n_visible)
    return data, counts / counts.sum()


def _central_difference(f, model, step=1e-5):
    """Columns d f / d theta_j, theta in the order of model.parameters()."""
    columns = []
    for name, arr in model.parameters().items():
        for index in np.ndindex(arr.shape):
            values = []
            for sign in (1, -1):
                moved = model.copy()
                moved.parameters()[name][index] += sign * step
                values.append(np.asarray(f(moved), dtype=float))
            columns.append((values[0] - values[1]) / (2 * step))
    return np.stack(columns, axis=-1)


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
def test_expected_update_is_the_exact_expected_cd_k_and_the_likelihood_gradient(pair):
    model = _model(pair)
    data, q = _q(model)
    for k in (1, 3):
        diff = cd_theory.expected_update(model, q, k) - transition.cd_expected_gradient(
            model, data, k)
        assert diff.max_abs() < 1e-13
    ml = cd_theory.expected_update(model, q, None) - exact.gradient(model, data)
    assert ml.max_abs() < 1e-13
    assert ml.names == tuple(model.parameters())


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
def test_objective_and_its_gradients_against_kl_and_central_differences(pair):
    model = _model(pair)
    _, q = _q(model)
    T = transition.gibbs_transition_matrix(model)
    r = q @ T @ T
    value = cd_theory.cd_objective(model, q, 2)
    assert abs(value - (exact.kl_divergence(q, model) - exact.kl_divergence(r, model))) < 1e-12
    numeric = _central_difference(lambda m: cd_theory.cd_objective(m, q, 2), model)
    assert np.abs(cd_theory.cd_objective_gradient(model, q, 2).flat() - numeric).max() < 1e-8
    # -grad CD_k = g_k + D_k, and grad KL(r_k || p) = D_k + g_k - g_inf
    g_k, d_k = cd_theory.expected_update(model, q, 2), cd_theory.dropped_term(model, q, 2)
    assert (-cd_theory.cd_objective_gradient(model, q, 2) - (g_k + d_k)).max_abs() < 1e-12
    chain = cd_theory.chain_divergence_gradient(model, q, 2)
    assert (chain - (d_k + g_k - cd_theory.expected_update(model, q, None))).max_abs() < 1e-12


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
def test_update_jacobian_matches_central_differences(pair):
    model = _model(pair)
    _, q = _q(model)
    numeric = _central_difference(lambda m: cd_theory.expected_update(m, q, 1).flat(), model)
    assert np.abs(cd_theory.update_jacobian(model, q, 1) - numeric).max() < 1e-8
    H = cd_theory.update_jacobian(model, q, None)
    assert np.abs(H - H.T).max() < 1e-13     # the likelihood's Hessian


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
def test_eigenvalues_and_dobrushin_against_the_transition_matrix(pair):
    model = _model(pair)
    T = transition.gibbs_transition_matrix(model)
    brute = np.sort(np.linalg.eigvals(T).real)
    assert np.abs(cd_theory.transition_eigenvalues(model) - brute).max() < 1e-12
    rows = range(len(T))
    tv = max(0.5 * np.abs(T[i] - T[j]).sum() for i in rows for j in rows)
    assert abs(cd_theory.dobrushin_coefficient(model) - tv) < 1e-13


@pytest.mark.parametrize("pair", [p for p in PAIRS if "potts" not in p], ids="-".join)
def test_largest_flip_energy_is_the_largest_change_of_one_flip(pair):
    model = _model(pair)
    V, H = (layer.states(0, 2**layer.n_units) for layer in (model.visible, model.hidden))
    low_high = [layer.values for layer in (model.visible, model.hidden)]
    best = 0.0
    for v, h in itertools.product(V, H):
        for side, x in ((0, v), (1, h)):
            for i in range(len(x)):
                y = x.copy()
                y[i] = low_high[side][1] if x[i] == low_high[side][0] else low_high[side][0]
                pair_after = (y, h) if side == 0 else (v, y)
                best = max(best, abs(model.energy(*pair_after) - model.energy(v, h)))
    assert abs(cd_theory.largest_flip_energy(model) - best) < 1e-12


def test_fixed_point_of_a_spin_model_is_a_zero_and_keeps_its_layers():
    model = _model(("spin", "spin"))
    _, q = _q(model)
    found = cd_theory.fixed_point(model, q, 1, weight_decay=0.05, ascent_steps=20)
    assert isinstance(found.visible, Spin) and isinstance(found.hidden, Spin)
    assert cd_theory.expected_update(found, q, 1, weight_decay=0.05).max_abs() <= 1e-12


def test_what_cannot_be_enumerated_or_flipped_is_refused_by_name():
    gaussian = RBM.random(Gaussian(np.zeros(2)), Binary(np.zeros(2)), rng=0)
    with pytest.raises(ValueError, match="model.visible is Gaussian.*continuous"):
        cd_theory.expected_update(gaussian, np.ones(4) / 4, 1)
    potts = _model(("potts", "binary"))
    with pytest.raises(ValueError, match="model.visible is Potts"):
        cd_theory.largest_flip_energy(potts)
    big = RBM.random(Potts(np.zeros((7, 3))), Binary(np.zeros(1)), rng=0)  # 11.1 bits
    with pytest.raises(ValueError, match="n_visible=7"):
        cd_theory.second_eigenvalue(big)


def test_a_potts_layer_gauge_makes_the_jacobian_singular_until_weight_decay():
    model = _model(("potts", "binary"))
    _, q = _q(model)
    smallest = np.abs(np.linalg.eigvals(cd_theory.update_jacobian(model, q, 1))).min()
    assert smallest < 1e-12
    found = cd_theory.fixed_point(model, q, 1, weight_decay=0.05, ascent_steps=20)
    assert cd_theory.expected_update(found, q, 1, weight_decay=0.05).max_abs() <= 1e-12
