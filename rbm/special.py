"""Numerically stable elementary functions used throughout the package.

Every function here is safe for arguments of any size: none of them
evaluates ``exp`` of an unbounded quantity.
"""

import numpy as np
from scipy.special import expit

from rbm._validation import as_real_array

__all__ = ["softplus", "sigmoid", "logsumexp"]



def softplus(x):
    r"""Softplus, :math:`\log(1 + e^{x})`, stable for every finite `x`.

    Computed as :math:`\max(x, 0) + \log(1 + e^{-|x|})`, so the exponential
    never exceeds one.  This is several times faster than
    ``np.logaddexp(0, x)`` and agrees with it to rounding.

    Parameters
    ----------
    x : array_like
        Any real array.

    Returns
    -------
    ndarray
        Same shape as `x`.

    Examples
    --------
    >>> softplus(np.array([-1000.0, 0.0, 1000.0])).round(6).tolist()
    [0.0, 0.693147, 1000.0]
    """
    x = as_real_array(x, "x")
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


def sigmoid(x):
    r"""Logistic sigmoid, :math:`\sigma(x) = 1 / (1 + e^{-x})`.

    A thin wrapper of :func:`scipy.special.expit`, which is stable for all
    `x`.  Note that :math:`\sigma(x) = \frac{d}{dx}\operatorname{softplus}(x)`.

    Examples
    --------
    >>> sigmoid(np.array([-800.0, 0.0, 800.0]))
    array([0. , 0.5, 1. ])
    """
    return expit(as_real_array(x, "x"))


def logsumexp(a, axis=None):
    r"""Stable :math:`\log \sum_k e^{a_k}`, along `axis` (all entries if ``None``).

    Examples
    --------
    >>> float(logsumexp(np.array([1000.0, 1000.0])) - 1000.0)
    0.693147...
    """
    a = as_real_array(a, "a")
    if a.size == 0:
        raise ValueError("a is empty: the log of an empty sum is -infinity, not computed here")
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    if axis is None:
        return out.reshape(())[()]
    return np.squeeze(out, axis=axis)


def sigmoid_inplace(x):
    r"""Overwrite `x` (a float64 array) with :math:`\sigma(x) = \tfrac12(1 + \tanh(x/2))`.

    For the sampling kernels: about twice as fast as :func:`scipy.special.expit`
    and never overflows, with an absolute error of at most 2.3e-16 (so a relative
    error that grows for probabilities under 1e-12, which only matters for
    log-probabilities, never computed from it).
    """
    x *= 0.5
    np.tanh(x, out=x)
    x += 1.0
    x *= 0.5
    return x
