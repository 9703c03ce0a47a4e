r"""Pseudo-likelihood of an RBM: exact, and the one-bit estimator of scikit-learn.

The pseudo-log-likelihood of a visible vector replaces :math:`\log p(v)`
by the sum of the log conditionals of its bits,

.. math::
    \operatorname{PL}(v) = \sum_{i=1}^{n_\text{visible}} \log p(v_i \mid v_{-i}),
    \qquad
    p(v_i \mid v_{-i}) = \frac{e^{-F(v)}}{e^{-F(v)} + e^{-F(\tilde v^{(i)})}}
    = \sigma\big(F(\tilde v^{(i)}) - F(v)\big),

where :math:`\tilde v^{(i)}` is :math:`v` with bit :math:`i` flipped and
:math:`F` the free energy.  It needs no partition function: ``Z`` cancels
in each conditional.  For any discrete visible layer (±1 spins, Potts
units) the same holds with a sum over every value of unit :math:`i`:
:math:`p(v_i \mid v_{-i}) = e^{-F(v)} / \sum_a e^{-F(v^{(i \leftarrow a)})}`.
A continuous visible layer is refused (a ValueError naming it).
"""

import numpy as np

from rbm._validation import check_rng
from rbm.model import check_model
from rbm.special import logsumexp, softplus

__all__ = ["log_conditionals", "pseudo_log_likelihood", "stochastic_pseudo_log_likelihood"]


def log_conditionals(model, data):
    r"""Every :math:`\log p(v_i \mid v_{-i}) = \log\sigma\big(F(\tilde v^{(i)}) - F(v)\big)`, per row and bit.

    Flipping bit :math:`i` changes :math:`v_i` by :math:`s_i = 1 - 2 v_i`,
    so the free-energy difference is

    .. math::
        F(\tilde v^{(i)}) - F(v) = -s_i b_i
        - \sum_j \big[\operatorname{softplus}(x_j + s_i W_{ij}) - \operatorname{softplus}(x_j)\big],
        \qquad x = c + v^\top W,

    one rank-one update of the hidden input per bit instead of a new
    product with ``W``; and :math:`\log\sigma(d) = -\operatorname{softplus}(-d)`.

    Parameters
    ----------
    model : RBM
    data : array_like of shape (n_samples, n_visible)
        Zeros and ones.

    Returns
    -------
    ndarray of shape (n_samples, n_visible)
        Entry ``[n, i]`` is :math:`\log p(v^{(n)}_i \mid v^{(n)}_{-i})`.

    Examples
    --------
    >>> from rbm import RBM
    >>> model = RBM(W=np.zeros((2, 1)), b=[0.0, np.log(3.0)], c=[0.0])
    >>> np.exp(log_conditionals(model, [[1, 1]])).round(6).tolist()  # independent bits
    [[0.5, 0.75]]
    """
    model = check_model(model, discrete="log_conditionals")
    v, _ = model.visible.check_states(data, "data", allow_1d=False)
    if not model.is_binary:
        return np.stack([_log_conditional(model, v, np.full(v.shape[0], i))
                         for i in range(model.n_visible)], axis=1)
    x = v @ model.W + model.c
    base = softplus(x).sum(axis=1)
    sign = 1.0 - 2.0 * v
    # One bit at a time keeps memory at (n_samples, n_hidden) whatever n_visible is.
    gap = np.empty_like(v)
    for i in range(model.n_visible):
        flipped = softplus(x + sign[:, i:i + 1] * model.W[i]).sum(axis=1)
        gap[:, i] = -sign[:, i] * model.b[i] - (flipped - base)
    return -softplus(-gap)


def pseudo_log_likelihood(model, data):
    r"""Exact mean pseudo-log-likelihood :math:`\frac{1}{N}\sum_n \sum_i \log p(v^{(n)}_i \mid v^{(n)}_{-i})`.

    Parameters
    ----------
    model : RBM
    data : array_like of shape (n_samples, n_visible)
        Zeros and ones.

    Returns
    -------
    float
        At most 0; equal to :func:`rbm.exact.log_likelihood` when the
        visible units are independent (zero weights).

    Examples
    --------
    >>> from rbm import RBM
    >>> from rbm import exact
    >>> model = RBM(W=np.zeros((3, 2)), b=[0.5, -1.0, 2.0], c=[0.0, 1.0])
    >>> data = [[1, 0, 1], [0, 0, 1]]
    >>> bool(np.isclose(pseudo_log_likelihood(model, data), exact.log_likelihood(model, data)))
    True
    """
    return float(log_conditionals(model, data).sum(axis=1).mean())


def stochastic_pseudo_log_likelihood(model, data, *, rng):
    r"""One-bit estimate of the mean pseudo-log-likelihood, as in scikit-learn's ``BernoulliRBM.score_samples``.

    For each row one bit :math:`i_n` is drawn uniformly,
    ``rng.integers(0, n_visible, size=n_samples)``, and

    .. math::
        \widehat{\operatorname{PL}} = \frac{1}{N}\sum_n n_\text{visible}\,
        \log\sigma\big(F(\tilde v^{(n, i_n)}) - F(v^{(n)})\big).

    Scaling the single term by :math:`n_\text{visible}` makes it
    **unbiased** for the exact sum over bits:
    :math:`\mathbb{E}_{i}[n_\text{visible} \log p(v_i \mid v_{-i})] =
    \sum_i \log p(v_i \mid v_{-i})`, so the expectation over the draws is
    :func:`pseudo_log_likelihood`.  It costs two free energies per row
    instead of :math:`n_\text{visible} + 1`, at the price of variance.

    Parameters
    ----------
    model : RBM
    data : array_like of shape (n_samples, n_visible)
        Zeros and ones.
    rng : numpy.random.Generator or int

    Returns
    -------
    float

    Examples
    --------
    >>> from rbm import RBM
    >>> model = RBM.random(4, 3, scale=1.0, rng=0)
    >>> data = np.array([[1, 0, 1, 1], [0, 1, 0, 0]])
    >>> draws = [stochastic_pseudo_log_likelihood(model, data, rng=s) for s in range(2000)]
    >>> bool(abs(np.mean(draws) - pseudo_log_likelihood(model, data)) < 0.1)
    True
    """
    model = check_model(model, discrete="stochastic_pseudo_log_likelihood")
    v, _ = model.visible.check_states(data, "data", allow_1d=False)
    rng = check_rng(rng)
    rows = np.arange(v.shape[0])
    bits = rng.integers(0, model.n_visible, size=v.shape[0])
    if not model.is_binary:
        return float(np.mean(model.n_visible * _log_conditional(model, v, bits)))
    flipped = v.copy()
    flipped[rows, bits] = 1.0 - flipped[rows, bits]
    gap = model.free_energy(flipped) - model.free_energy(v)
    return float(np.mean(-model.n_visible * softplus(-gap)))


def _log_conditional(model, v, units):
    r""":math:`\log p(v_i \mid v_{-i})` of unit ``units[n]`` of each row, by every value of it."""
    rows = np.arange(v.shape[0])
    values = model.visible.states(0, model.visible.n_states)[:, -1]
    scores = []
    for a in values:
        changed = v.copy()
        changed[rows, units] = a
        scores.append(-model.free_energy(changed))
    return -model.free_energy(v) - logsumexp(np.stack(scores), axis=0)
