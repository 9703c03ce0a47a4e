r"""Block Gibbs sampling of an RBM.

Given the visible layer the hidden units are independent, and vice versa,
so one **block Gibbs step** resamples a whole layer at once:

.. math::
    h \sim p(h \mid v) = \prod_j \sigma\big((2h_j - 1)(c_j + (v^\top W)_j)\big),
    \qquad
    v' \sim p(v \mid h) = \prod_i \sigma\big((2v_i - 1)(b_i + (W h)_i)\big).

The visible states form a Markov chain with transition
:math:`T(v, v') = \sum_h p(h \mid v)\, p(v' \mid h)`, whose stationary
distribution is the model's :math:`p(v)`
(:func:`rbm.transition.gibbs_transition_matrix` builds ``T`` exactly).
That is the binary model; for any two layers (:mod:`rbm.layers`) the step
draws each layer from its conditional given the other's input with the
layer's own ``sample``.  Every function takes any number of chains as the
rows of a 2-d array and advances them together.
"""

import numpy as np

from rbm._kernels import gibbs_steps
from rbm._validation import (
    check_array_size,
    check_bool,
    check_positive_int,
    check_rng,
)
from rbm.model import check_model

__all__ = ["gibbs_step", "gibbs_chain", "sample_model"]


def gibbs_step(model, v, *, rng):
    r"""One block Gibbs step: :math:`h \sim p(h \mid v)`, then :math:`v' \sim p(v \mid h)`.

    Parameters
    ----------
    model : RBM
    v : array_like of shape (n_visible,) or (n_chains, n_visible)
        Current visible states (zeros and ones), one chain per row.
    rng : numpy.random.Generator or int

    Returns
    -------
    ndarray, same shape as `v`
        The next visible states (float64 zeros and ones).

    Examples
    --------
    >>> from rbm import RBM
    >>> model = RBM.random(3, 2, scale=1.0, rng=0)
    >>> gibbs_step(model, [1, 0, 1], rng=1).shape
    (3,)
    """
    check_model(model)
    v2, single = model.visible.check_states(v, "v")
    v_next = gibbs_steps(model, v2, 1, check_rng(rng))
    return v_next[0] if single else v_next


def gibbs_chain(model, v0, k, *, rng, return_trajectory=False):
    r"""Run block Gibbs chains for `k` steps from `v0`.

    Parameters
    ----------
    model : RBM
    v0 : array_like of shape (n_visible,) or (n_chains, n_visible)
        Starting visible states, one chain per row.
    k : int
        Number of steps, at least 1.
    rng : numpy.random.Generator or int
    return_trajectory : bool, default False
        Return every state :math:`v_0, \dots, v_k` instead of only :math:`v_k`.

    Returns
    -------
    ndarray
        :math:`v_k`, the same shape as `v0`; with `return_trajectory`, an
        array of shape ``(k + 1,) + v0.shape`` whose first entry is `v0`.

    Examples
    --------
    >>> from rbm import RBM
    >>> model = RBM.random(3, 2, scale=1.0, rng=0)
    >>> gibbs_chain(model, [[0, 0, 0], [1, 1, 1]], k=5, rng=1).shape
    (2, 3)
    >>> gibbs_chain(model, [0, 0, 0], k=5, rng=1, return_trajectory=True).shape
    (6, 3)
    """
    check_model(model)
    v2, single = model.visible.check_states(v0, "v0")
    k = check_positive_int(k, "k")
    rng = check_rng(rng)
    if return_trajectory is True:
        check_array_size((k + 1) * v2.size,
                         f"return_trajectory=True over k={k} steps of {v2.shape[0]} x "
                         f"{model.n_visible} states")
    if not check_bool(return_trajectory, "return_trajectory"):  # only the current state is held
        v = gibbs_steps(model, v2, k, rng)
        return v[0] if single else v
    trajectory = [v2]
    for _ in range(k):
        trajectory.append(gibbs_steps(model, trajectory[-1], 1, rng))
    stacked = np.stack(trajectory)
    return stacked[:, 0, :] if single else stacked


def sample_model(model, n_chains, n_steps, *, rng, v0=None):
    r"""Approximate samples of :math:`p(v)` from many independent Gibbs chains.

    Each chain runs `n_steps` block Gibbs steps (the burn-in) and
    contributes its final state.  The chains' distribution converges to
    :math:`p(v)` geometrically in `n_steps`, at a rate set by the second
    eigenvalue of the transition matrix; chains that mix slowly (large
    weights) need a long burn-in.

    Parameters
    ----------
    model : RBM
    n_chains : int
        Number of independent chains (samples returned), at least 1.
    n_steps : int
        Gibbs steps per chain, at least 1.
    rng : numpy.random.Generator or int
    v0 : array_like of shape (n_visible,) or (n_chains, n_visible), optional
        Starting states; one vector is used for every chain.  By default
        every unit of every chain starts as an independent fair coin
        (uniform over all visible states; for a continuous layer, a draw of
        its units with zero input: ``model.visible.random_states``).

    Returns
    -------
    ndarray of shape (n_chains, n_visible)

    Examples
    --------
    >>> from rbm import RBM
    >>> model = RBM.random(4, 3, scale=0.5, rng=0)
    >>> samples = sample_model(model, n_chains=100, n_steps=20, rng=1)
    >>> samples.shape, bool(np.isin(samples, [0, 1]).all())
    ((100, 4), True)
    """
    check_model(model)
    n_chains = check_positive_int(n_chains, "n_chains")
    n_steps = check_positive_int(n_steps, "n_steps")
    check_array_size(n_chains * max(model.n_visible, model.n_hidden), f"n_chains={n_chains}")
    rng = check_rng(rng)
    if v0 is None:
        start = model.visible.random_states(n_chains, rng=rng)
    else:
        start, single = model.visible.check_states(v0, "v0")
        if single:
            start = np.repeat(start, n_chains, axis=0)
        elif start.shape[0] != n_chains:
            raise ValueError(
                f"v0 must have n_chains={n_chains} rows (or be one vector), got shape {start.shape}"
            )
    return gibbs_chain(model, start, n_steps, rng=rng)
