"""The symbolic helpers: their expressions match the numeric package, and the checks can fail."""

import numpy as np
import pytest
import sympy as sp

import rbm
from rbm import exact
from rbm.symbolic import (
    binary_states,
    check_equal,
    conditional_h_expr,
    data_average,
    energy_expr,
    free_energy_by_sum,
    free_energy_closed_form,
    log_likelihood_expr,
    log_partition_expr,
    marginal_expr,
    model_average,
    rbm_symbols,
    sigmoid_expr,
)


@pytest.fixture
def symbols22():
    return rbm_symbols(2, 2)


def substitute(expr, s, model):
    """Numeric value of `expr` with the symbolic parameters replaced by the model's."""
    values = {}
    for sym_mat, arr in ((s.W, model.W), (s.b, model.b), (s.c, model.c)):
        values.update({sym: float(x) for sym, x in zip(sym_mat, np.ravel(arr))})
    return float(sp.N(expr.xreplace(values), 20))


def test_rbm_symbols_have_the_package_shapes():
    s = rbm_symbols(3, 2)
    assert s.W.shape == (3, 2) and s.b.shape == (3, 1) and s.c.shape == (2, 1)
    assert s.v.shape == (3, 1) and s.h.shape == (2, 1)
    assert all(x.is_real for x in s.W)


def test_rbm_symbols_refuse_large_layers():
    with pytest.raises(ValueError, match="at most"):
        rbm_symbols(7, 2)


def test_binary_states_follow_the_order_of_exact_all_states():
    assert np.array_equal(np.array([list(x) for x in binary_states(3)], dtype=float),
                          exact.all_states(3))


def test_symbolic_expressions_match_the_numeric_package(symbols22):
    s = symbols22
    model = rbm.RBM.random(2, 2, scale=1.0, bias_scale=1.0, rng=3)
    data = [[1, 0], [1, 1], [0, 1]]
    v, h = [1, 1], [0, 1]
    assert substitute(energy_expr(s.W, s.b, s.c, v, h), s, model) == pytest.approx(
        model.energy(v, h), abs=1e-12)
    for f in (free_energy_by_sum, free_energy_closed_form):
        assert substitute(f(s.W, s.b, s.c, v), s, model) == pytest.approx(
            model.free_energy(v), abs=1e-12)
    assert substitute(log_partition_expr(s.W, s.b, s.c), s, model) == pytest.approx(
        exact.log_partition(model), abs=1e-12)
    assert substitute(marginal_expr(s.W, s.b, s.c, v), s, model) == pytest.approx(
        np.exp(exact.log_prob(model, v)), abs=1e-12)
    assert substitute(log_likelihood_expr(s.W, s.b, s.c, data), s, model) == pytest.approx(
        exact.log_likelihood(model, data), abs=1e-12)
    p_h = np.prod(np.where(np.array(h) == 1, model.prob_h_given_v(v), 1 - model.prob_h_given_v(v)))
    assert substitute(conditional_h_expr(s.W, s.b, s.c, v, h), s, model) == pytest.approx(
        p_h, abs=1e-12)


def test_data_minus_model_average_is_the_exact_gradient(symbols22):
    s = symbols22
    model = rbm.RBM.random(2, 2, scale=1.0, bias_scale=1.0, rng=4)
    data = [[1, 0], [0, 0]]
    grad = exact.gradient(model, data)

    def vh(i, j):
        return lambda v, h: v[i] * h[j]

    for i in range(2):
        for j in range(2):
            term = (data_average(vh(i, j), s.W, s.b, s.c, data)
                    - model_average(vh(i, j), s.W, s.b, s.c))
            assert substitute(term, s, model) == pytest.approx(grad.W[i, j], abs=1e-12)


def test_check_equal_proves_the_closed_form_free_energy(capsys, symbols22):
    s = symbols22
    check_equal(free_energy_by_sum(s.W, s.b, s.c, s.v),
                free_energy_closed_form(s.W, s.b, s.c, s.v), "closed-form F")
    assert capsys.readouterr().out.startswith("verdict: closed-form F holds")


def test_check_equal_proves_the_exact_gradient_and_fails_on_its_sign_flip(capsys):
    s = rbm_symbols(2, 1)
    data = [[1, 0], [1, 1]]
    ll = log_likelihood_expr(s.W, s.b, s.c, data)
    W11 = s.W[0, 0]
    right = (data_average(lambda v, h: v[0] * h[0], s.W, s.b, s.c, data)
             - model_average(lambda v, h: v[0] * h[0], s.W, s.b, s.c))
    check_equal(sp.diff(ll, W11), right, "dl/dW_11")
    assert "holds" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="is false"):
        check_equal(sp.diff(ll, W11), -right, "sign-flipped dl/dW_11")


def test_check_equal_fails_on_a_wrong_free_energy(symbols22):
    s = symbols22
    wrong = free_energy_closed_form(s.W, s.b, s.c, s.v) + (s.b.T * s.v)[0] * 2  # +b.v, not -b.v
    with pytest.raises(AssertionError):
        check_equal(free_energy_by_sum(s.W, s.b, s.c, s.v), wrong, "F with +b.v")


def test_check_equal_fails_on_a_swapped_index(symbols22):
    s = symbols22
    with pytest.raises(AssertionError):
        check_equal(sp.diff(energy_expr(s.W, s.b, s.c, s.v, s.h), s.W[0, 1]),
                    -s.v[1] * s.h[0], "dE/dW_12 = -v_2 h_1")


def test_check_equal_never_passes_on_numeric_agreement_alone():
    x = sp.Symbol("x", real=True)
    # Equal to within 1e-12 at every point, yet not identical.
    with pytest.raises(AssertionError):
        check_equal(x + sp.Rational(1, 10**13), x, "almost equal")


def test_check_equal_compares_matrices_entrywise(capsys):
    x = sp.Symbol("x", real=True)
    check_equal(sp.Matrix([sp.exp(x) * sp.exp(-x), sigmoid_expr(x) + sigmoid_expr(-x)]),
                sp.Matrix([1, 1]), "two identities")
    assert "2 entries" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="entries"):
        check_equal([x, x], [x], "shape mismatch")


def test_check_equal_respects_positive_symbols(capsys):
    p = sp.symbols("p_1:4", positive=True)
    check_equal(sp.log(sp.prod(p)), sum(sp.log(x) for x in p), "log of a product")
    assert "holds" in capsys.readouterr().out


def test_check_equal_handles_undefined_functions_and_their_derivatives(capsys):
    t = sp.Symbol("theta", real=True)
    k, Z = sp.Function("k", positive=True)(t), sp.Function("Z", positive=True)(t)
    check_equal(sp.diff(-sp.log(k / Z), t), -sp.diff(k, t) / k + sp.diff(Z, t) / Z, "chain rule")
    assert "holds" in capsys.readouterr().out
    with pytest.raises(AssertionError):
        check_equal(sp.diff(-sp.log(k / Z), t), sp.diff(k, t) / k - sp.diff(Z, t) / Z, "flipped")


def test_energy_derivative_gives_the_rbm_partials():
    """dE/dW_ij = -v_i h_j, dE/db_i = -v_i, dE/dc_j = -h_j, entry by entry."""
    from rbm.symbolic import energy_derivative

    s = rbm_symbols(2, 3)
    for i in range(2):
        for j in range(3):
            assert energy_derivative(s.W, s.b, s.c, s.v, s.h, s.W[i, j]) == -s.v[i] * s.h[j]
        assert energy_derivative(s.W, s.b, s.c, s.v, s.h, s.b[i]) == -s.v[i]
    for j in range(3):
        assert energy_derivative(s.W, s.b, s.c, s.v, s.h, s.c[j]) == -s.h[j]
