"""rbm.short_run's closed-form derivatives, against the complex step at 1e-10 relative.

kl_gradient and update_jacobian are exact formulas; finite differences (tests/test_short_run.py)
cannot tell them from a formula off by 1e-7 relative (issue 48 planted one in kl_gradient's
visible-step part, and every test passed).  Here both are compared with the complex step,
f'(x) = Im f(x + i h) / h at h = 1e-30, which has no subtraction and so no cancellation: it is
exact to rounding.  The function differentiated is written out again below, in complex
arithmetic, from the definitions (the conditionals as products over units, the k-step law as
k multiplications by T = A B, KL and the update as sums over the visible states); it shares no
code with rbm.short_run, rbm.cd_theory or rbm.exact.

Agreement is required to 1e-10 of the largest entry, on models of 3 x 2 and 4 x 3 units, k from
1 to 5, uniform and product starts; measured it is within 1.1e-15 (kl_gradient) and 2.3e-15
(update_jacobian) of the largest entry.
"""

import itertools

import numpy as np
import pytest

from rbm import RBM, exact
from rbm.datasets import bars_and_stripes
from rbm.short_run import kl_gradient, update_jacobian

STEP = 1e-30
TOLERANCE = 1e-10


def states(n):
    return np.array(list(itertools.product([0.0, 1.0], repeat=n)))


def conditional(x, field):
    """Prod_j p(x_j | field_j) for {0,1} units, in complex arithmetic (one row of A or B)."""
    p = 1.0 / (1.0 + np.exp(-field))
    return np.prod(np.where(x == 1, p, 1.0 - p), axis=-1)


def unpack(theta, nv, nh):
    return theta[:nv * nh].reshape(nv, nh), theta[nv * nh:nv * nh + nv], theta[nv * nh + nv:]


def k_step_law(theta, nv, nh, p0, k):
    """p0 T^k with T(v, v') = sum_h p(h | v) p(v' | h), complex parameters allowed."""
    W, b, c = unpack(theta, nv, nh)
    V, H = states(nv), states(nh)
    A = np.array([[conditional(h, c + v @ W) for h in H] for v in V])
    B = np.array([[conditional(v, b + W @ h) for v in V] for h in H])
    r = p0.astype(complex)
    for _ in range(k):
        r = (r @ A) @ B
    return r


def kl(theta, nv, nh, q, p0, k):
    r = k_step_law(theta, nv, nh, p0, k)
    nz = q > 0
    return np.sum(q[nz] * (np.log(q[nz]) - np.log(r[nz])))


def update(theta, nv, nh, q, p0, k):
    """<v s(v)^T>_(q - r_k), <v>, <s(v)> with s(v) = sigmoid(c + v W), flat (W, b, c)."""
    W, b, c = unpack(theta, nv, nh)
    V = states(nv)
    d = q - k_step_law(theta, nv, nh, p0, k)
    s = 1.0 / (1.0 + np.exp(-(c + V @ W)))
    return np.concatenate([((V * d[:, None]).T @ s).ravel(), d @ V, d @ s])


def complex_step(f, theta):
    """d f / d theta, one column per parameter (f real-valued on real theta)."""
    cols = []
    for a in range(theta.size):
        t = theta.astype(complex)
        t[a] += 1j * STEP
        cols.append(np.imag(f(t)) / STEP)
    return np.stack(cols, axis=-1)


def case(nv, nh, seed, start):
    model = RBM.random(nv, nh, scale=1.5, bias_scale=0.5, rng=seed)
    data = states(nv)[np.random.default_rng(seed).integers(0, 2 ** nv, size=5)]
    q = exact.empirical_distribution(data)
    if start == "uniform":
        p0 = np.full(2 ** nv, 2.0 ** -nv)
    else:
        start = np.random.default_rng(seed + 1).uniform(0.1, 0.9, size=nv)
        p0 = np.prod(np.where(states(nv) == 1, start, 1 - start), axis=1)
    theta = np.concatenate([model.W.ravel(), model.b, model.c])
    return model, q, start, p0, theta


CASES = [(3, 2, 1, "uniform", 1), (3, 2, 2, "product", 3), (4, 3, 3, "uniform", 2),
         (4, 3, 4, "product", 5)]


def largest_relative_gap(found, exact_value):
    return float(np.abs(found - exact_value).max() / np.abs(exact_value).max())


@pytest.mark.parametrize("nv, nh, seed, start, k", CASES)
def test_kl_gradient_is_the_complex_step_derivative_of_the_k_step_divergence(nv, nh, seed,
                                                                             start, k):
    model, q, start, p0, theta = case(nv, nh, seed, start)
    reference = complex_step(lambda t: kl(t, nv, nh, q, p0, k), theta)
    found = kl_gradient(model, q, k, start=start).flat()
    assert largest_relative_gap(found, reference) <= TOLERANCE


@pytest.mark.parametrize("nv, nh, seed, start, k", CASES)
def test_update_jacobian_is_the_complex_step_jacobian_of_the_expected_update(nv, nh, seed,
                                                                            start, k):
    model, q, start, p0, theta = case(nv, nh, seed, start)
    reference = complex_step(lambda t: update(t, nv, nh, q, p0, k), theta)
    found = update_jacobian(model, q, k, start=start)
    assert found.shape == reference.shape
    assert largest_relative_gap(found, reference) <= TOLERANCE


def test_the_written_out_law_is_the_modules_law():
    """The reference differentiates the right function: its value at real parameters is
    rbm.short_run's k-step law and divergence (to rounding)."""
    from rbm.short_run import k_step_distribution, kl_to_k_step
    for nv, nh, seed, start, k in CASES:
        model, q, start, p0, theta = case(nv, nh, seed, start)
        law = k_step_law(theta, nv, nh, p0, k)
        assert np.abs(law.imag).max() == 0
        assert np.abs(law.real - k_step_distribution(model, k, start=start)).max() < 1e-15
        assert abs(kl(theta, nv, nh, q, p0, k).real - kl_to_k_step(q, model, k, start=start)) \
            < 1e-13


def test_the_complex_step_sees_an_error_of_1e_8_relative():
    """The comparison can fail: the gradient of bars and stripes' divergence with its visible
    bias part scaled by 1 + 1e-8 is 1e-8 off, a hundred times the tolerance."""
    model = RBM.random(4, 3, scale=1.5, bias_scale=0.5, rng=0)
    q = exact.empirical_distribution(bars_and_stripes(2))
    p0 = np.full(16, 1 / 16)
    theta = np.concatenate([model.W.ravel(), model.b, model.c])
    reference = complex_step(lambda t: kl(t, 4, 3, q, p0, 2), theta)
    found = kl_gradient(model, q, 2).flat()
    assert largest_relative_gap(found, reference) <= TOLERANCE
    found[12:16] *= 1 + 1e-8
    assert largest_relative_gap(found, reference) > 10 * TOLERANCE
