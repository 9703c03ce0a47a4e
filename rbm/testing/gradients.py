"""Exact targets of gradient estimators: the expected persistent-CD gradient and the
centred gradient."""

import numpy as np

from rbm import deep, exact, transition
from rbm._kernels import row_statistics
from rbm._validation import check_positive_int
from rbm.model import Gradient

from rbm.testing._shared import all_states, as_model, is_network, joint_probabilities, valid_data


def network_gradient(terms):
    r"""A DBM's gradient or moments (the dict of :func:`rbm.deep.gradient`) as a Gradient.

    The fields are ``W1, ..., WL`` (``terms["weights"]``), then ``b`` (the visible
    layer's) and ``c1, ..., cL`` (the hidden layers').

    Parameters
    ----------
    terms : dict
        ``{"weights": [...], "biases": [...]}``.

    Returns
    -------
    Gradient

    Examples
    --------
    >>> from rbm import deep
    >>> g = network_gradient(deep.gradient(deep.DBM.random((2, 2, 1), rng=0), [[1, 0]]))
    >>> g.names
    ('W1', 'W2', 'b', 'c1', 'c2')
    """
    if not isinstance(terms, dict) or set(terms) != {"weights", "biases"}:
        raise TypeError("terms must be a dict of 'weights' and 'biases', as rbm.deep.gradient "
                        "returns")
    fields = {f"W{k}": W for k, W in enumerate(terms["weights"], start=1)}
    fields["b"] = terms["biases"][0]
    fields.update({f"c{k}": c for k, c in enumerate(terms["biases"][1:], start=1)})
    return Gradient.from_fields(fields)


def gradient_target(model, data, target, offsets=None):
    """The expected gradient (centred with `offsets`), a phrase naming it, and the uncentred one."""
    if is_network(model):
        if not isinstance(model, deep.DBM) or offsets is not None or not (
                isinstance(target, Gradient) or (isinstance(target, str) and target == "exact")):
            raise ValueError("for a stack of RBMs the gradient checks take a DBM, target "
                             "'exact' or a Gradient (network_gradient), and no offsets")
        if isinstance(target, Gradient):
            return target, "the expected value", target
        raw = network_gradient(deep.gradient(model, data))
        return raw, "the exact gradient", raw
    if isinstance(target, str) and target == "exact":
        raw, phrase = exact.gradient(model, data), "the exact gradient"
    elif isinstance(target, Gradient):
        raw, phrase = target, "the expected value"
    elif isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        k = check_positive_int(int(target), "target")
        raw, phrase = transition.cd_expected_gradient(model, data, k), f"E[CD-{k}]"
    else:
        raise TypeError(f"target must be a number of CD steps k, 'exact' or a Gradient, got "
                        f"{target!r}")
    if offsets is None:
        return raw, phrase, raw
    return centred_gradient(raw, *offsets), f"{phrase}, centred", raw


def centred_gradient(gradient, visible_offset, hidden_offset):
    r"""The centred gradient of Melchior et al. (2016), in the model's own parameters.

    With offsets :math:`\mu` (visible) and :math:`\lambda` (hidden), the
    centred RBM's statistics are :math:`v - \mu` and :math:`h - \lambda`; its
    gradient, mapped back to :math:`(W, b, c)`, is

    .. math::
        \Delta W = \nabla W - \mu\, \nabla c^\top - \nabla b\, \lambda^\top, \qquad
        \Delta b = \nabla b - \Delta W \lambda, \qquad
        \Delta c = \nabla c - \Delta W^\top \mu,

    with :math:`\nabla` the ordinary gradient (data term minus model term).
    It is linear in the statistics, so the expected centred estimate is this
    map of the expected ordinary one, for offsets fixed during the step
    (e.g. the data mean and a running mean of the hidden means): pass it as
    the `target` of :func:`check_gradient_estimator`, or pass ``offsets=``.
    The formula is Melchior, Fischer and Wiskott, *How to center deep
    Boltzmann machines*, JMLR 17 (2016), written here from the paper's
    algorithm as read; it agrees with ``center_gradient`` of
    RestrictedBoltzmannMachines.jl (``src/train/centering.jl``).

    Parameters
    ----------
    gradient : Gradient
        With fields ``W`` of shape (n_visible, n_hidden), ``b`` and ``c``.
    visible_offset : array_like of shape (n_visible,)
    hidden_offset : array_like of shape (n_hidden,)

    Returns
    -------
    Gradient

    Examples
    --------
    >>> import numpy as np
    >>> from rbm import Gradient
    >>> from rbm.testing import centred_gradient
    >>> g = Gradient(np.ones((2, 1)), np.array([0.5, 0.0]), np.array([0.25]))
    >>> centred_gradient(g, np.zeros(2), np.zeros(1)).W.tolist()  # zero offsets: unchanged
    [[1.0], [1.0]]
    >>> c = centred_gradient(g, np.array([0.5, 0.5]), np.array([0.5]))
    >>> c.W.ravel().tolist(), c.b.tolist(), c.c.tolist()
    ([0.625, 0.875], [0.1875, -0.4375], [-0.5])
    """
    if not isinstance(gradient, Gradient) or set(gradient.fields) != {"W", "b", "c"}:
        raise TypeError(f"gradient must be a Gradient with fields W, b, c, got "
                        f"{type(gradient).__name__}")
    n_visible, n_hidden = gradient.W.shape
    mu = offset_vector(visible_offset, "visible_offset", n_visible)
    lam = offset_vector(hidden_offset, "hidden_offset", n_hidden)
    dW = gradient.W - np.outer(mu, gradient.c) - np.outer(gradient.b, lam)
    return Gradient(dW, gradient.b - dW @ lam, gradient.c - dW.T @ mu)


def offset_vector(x, name, size):
    arr = np.asarray(x, dtype=float)
    if arr.shape != (size,) or not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite, of shape ({size},), got shape {arr.shape}")
    return arr


def expected_pcd_gradient(model, data, chains, *, k=1, chain_layer="visible"):
    r"""The exact expectation of a persistent-CD estimate, given the chains' current states.

    From each chain state the chain runs `k` Gibbs steps; the negative
    statistics are those of the visible states reached, with
    :math:`\mathbb E[h \mid v]` for the hidden units (the expectation is the
    same with sampled ``h``):

    .. math::
        \mathbb E[\Delta W] = \langle v\,\mathbb E[h \mid v]^\top\rangle_\text{data}
        - \sum_{v'} r(v')\, v'\,\mathbb E[h \mid v']^\top,
        \qquad r = \frac{1}{C}\sum_{c=1}^{C} \delta_{x_c} T^k,

    with ``T`` the Gibbs transition.  When the chains hold hidden states
    (scikit-learn keeps ``h_samples_``), the first step starts at
    :math:`p(v \mid h_c)`: :math:`r = \frac1C \sum_c p(\cdot \mid h_c)\, T^{k-1}`.

    Parameters
    ----------
    model : RBM or tuple
        An RBM of {0,1} or ±1 layers, or ``(W, b, c)`` (see :func:`as_model`).
    data : array_like of shape (n_samples, n_visible)
    chains : array_like of shape (n_chains, n_visible) or (n_chains, n_hidden)
        The chains' states before the call.
    k : int, default 1
    chain_layer : {"visible", "hidden"}
        The layer the chains' states belong to.

    Returns
    -------
    Gradient
        In the ascent direction.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import as_model, expected_pcd_gradient
    >>> W, b, c = np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.1, -0.3]), np.zeros(2)
    >>> data = np.array([[1.0, 0.0], [1.0, 1.0]])
    >>> from rbm import transition
    >>> g = expected_pcd_gradient((W, b, c), data, chains=data, k=2)
    >>> bool((g - transition.cd_expected_gradient(as_model((W, b, c)), data, 2)).max_abs()
    ...      < 1e-12)   # chains at the data: CD-k
    True
    """
    model = as_model(model)
    data = valid_data(model, data)
    k = check_positive_int(k, "k")
    if chain_layer not in ("visible", "hidden"):
        raise ValueError(f"chain_layer must be 'visible' or 'hidden', got {chain_layer!r}")
    layer = getattr(model, chain_layer)
    chains, _ = layer.check_states(chains, "chains", allow_1d=False)
    V = all_states(model.visible)
    T = transition.gibbs_transition_matrix(model)
    if chain_layer == "visible":
        r = np.bincount(model.visible.index_of(chains), minlength=len(V)) / len(chains)
        steps = k
    else:
        r = joint_probabilities(model, chains, "hidden")[0].mean(axis=0)
        steps = k - 1
    r = r @ np.linalg.matrix_power(T, steps)
    pos = exact.data_statistics(model, data)
    neg = row_statistics(model, V, weights=r, accurate=True)
    return pos - Gradient.from_fields(neg)
