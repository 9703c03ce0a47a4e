r"""Stacks of RBMs with exact values: deep belief networks and deep Boltzmann machines.

Two models are built from the layers of :mod:`rbm.layers`:

* a **deep belief network** (:class:`DBN`, Hinton, Osindero & Teh 2006): a stack of RBMs
  ``rbms[0], ..., rbms[-1]`` whose top RBM is an undirected model of the last two layers
  and whose lower RBMs each give a directed conditional :math:`p(x_{k} \mid x_{k+1})`
  (their weights and visible layer); a lower RBM's hidden layer is kept as the
  *recognition* layer, whose factorial posterior :math:`Q(x_{k+1} \mid x_k)` enters the
  variational bound (:func:`greedy_bound`);
* a **deep Boltzmann machine** (:class:`DBM`, Salakhutdinov & Hinton 2009): layers
  :math:`x_0 = v, x_1, \dots, x_L` with energy
  :math:`\sum_k E_k(x_k) - \sum_k s(x_k)\cdot W_k\, s(x_{k+1})`.

**Exact values by enumerating the first hidden layer.**  Given the first hidden layer
:math:`h_1`, the visible layer of a DBN is independent of the layers above it, and its
prior :math:`p(h_1)` is the top RBM's marginal (a closed form in :math:`h_1`) or, for a
deeper stack, the exact :func:`log_prob` of the sub-network above.  So

.. math::
    \log p(v) = \log\sum_{h_1} p(h_1)\, p(v \mid h_1)

is a sum over the :math:`2^{n_1}` states of :math:`h_1` alone (for a deeper stack, over the
states of every hidden layer below the top RBM's, together).  In a DBM, given the
odd-numbered layers :math:`h_1, h_3, \dots` the even ones (the visible layer among them)
are independent, each summed in closed form through its log-normaliser; the odd layers
together are enumerated.  Enumerations beyond :math:`2^{20}` states
(``MAX_DEEP_BITS``) are refused with a :class:`ValueError` that names the limit.

**Memory.**  States are taken in blocks so that an array of the enumeration holds at most
about ``CHUNK_ELEMENTS`` (:math:`2^{20}`) numbers: a call holds a few such arrays (about
40 MiB) besides its result and, for a DBN, the prior :math:`\log p(h_1)` over every state
of :math:`h_1` (at most :math:`2^{20}` numbers, 8 MiB).

**Ctrl-C and threads.**  Every loop (over blocks, mean-field steps, Gibbs sweeps) runs in
the caller's thread, one block of bounded size at a time, so an interrupt stops it within
one block's time (milliseconds).  Matrix products run with BLAS on one thread and the
blocks are summed in a fixed order, so results are the same to the last bit whatever the
number of threads.
"""

import numpy as np

from rbm import ais, exact
from rbm._enumeration import CHUNK_ELEMENTS, one_blas_thread
from rbm._validation import (
    MAX_DENSE_BITS,
    as_float_array,
    check_binary,
    check_enumeration_size,
    check_finite_parameter,
    check_positive_float,
    check_positive_int,
    check_rng,
)
from rbm.layers import Binary, Layer
from rbm.model import RBM, check_model

__all__ = ["MAX_DEEP_BITS", "DBN", "DBM", "log_partition", "log_prob", "log_likelihood",
           "posterior_means", "greedy_bound", "bound_at_means", "mean_field", "mean_field_bound", "sample",
           "gibbs_sweeps", "statistics", "gradient", "mean_field_statistics",
           "aggregated_posterior", "fit_exact", "sample_statistics", "pretrain_dbm",
           "fit_mean_field_pcd", "ais_log_partition", "sample_exact"]

#: Enumerations of more than ``2**MAX_DEEP_BITS`` states (the first hidden layer of a DBN,
#: the odd layers of a DBM) are refused.
MAX_DEEP_BITS = MAX_DENSE_BITS


def _bits(layer):
    return layer.n_units * np.log2(layer.n_states)


def _require_enumerable(layers, what):
    """Refuse a joint enumeration of `layers` beyond ``2**MAX_DEEP_BITS`` states."""
    for layer in layers:
        if not layer.discrete:
            raise ValueError(f"{what} enumerates {layer!r}, which is continuous; it needs a "
                             "discrete layer")
    bits = int(np.ceil(sum(_bits(layer) for layer in layers) - 1e-9))
    check_enumeration_size(bits, what, limit=MAX_DEEP_BITS)


def _joint_states(layers, start, stop):
    """States ``start .. stop - 1`` of `layers` taken together (the last layer varies fastest)."""
    return _states_at(layers, np.arange(start, stop, dtype=np.int64))


def _states_at(layers, index):
    """The joint states of `layers` at the indices `index` (the last layer varies fastest)."""
    out = []
    for k, layer in enumerate(layers):
        later = int(np.prod([lay.n_states ** lay.n_units for lay in layers[k + 1:]],
                            dtype=np.int64))
        count = layer.n_states ** layer.n_units
        out.append(layer.states_at((index // later) % count))
    return out


def _n_joint(layers):
    return int(np.prod([layer.n_states ** layer.n_units for layer in layers], dtype=np.int64))


def _block_rows(width, n_rows=1):
    """States per block so that a block's arrays hold about ``CHUNK_ELEMENTS`` numbers."""
    return max(1, CHUNK_ELEMENTS // max(1, width * n_rows))


class _RowLogSum:
    r"""Per row, a running :math:`\log\sum_k e^{a_k}` and weighted sums
    :math:`\sum_k e^{a_k - m} x_k`, kept relative to the row's largest term :math:`m`."""

    def __init__(self, n_rows, width=0):
        self.shift = np.full(n_rows, -np.inf)
        self.total = np.zeros(n_rows)
        self.sums = np.zeros((n_rows, width)) if width else None

    def add(self, scores, values=None):
        """Add a block: `scores` of shape (n_rows, n_states), `values` (n_states, width)."""
        top = scores.max(axis=1)
        new = np.maximum(self.shift, top)
        factor = np.exp(np.where(np.isfinite(self.shift), self.shift - new, -np.inf))
        w = np.exp(scores - new[:, None])
        self.total = self.total * factor + w.sum(axis=1)
        if self.sums is not None:
            self.sums = self.sums * factor[:, None] + w @ values
        self.shift = new

    def log(self):
        return self.shift + np.log(self.total)

    def means(self):
        return self.sums / self.total[:, None]


def _same_states(a, b):
    """Whether two layers have the same states (type, units and states per unit)."""
    return type(a) is type(b) and a.shape == b.shape


def _scalar_layers(layers, name):
    for k, layer in enumerate(layers):
        if len(layer.shape) != 1:
            raise ValueError(f"{name}[{k}] is {layer!r}: stacks take layers of one statistic "
                             "per unit ({0,1}, ±1, Gaussian, ReLU, dReLU), not Potts")


class DBN:
    r"""A deep belief network: a stack of RBMs, undirected at the top, directed below.

    With ``rbms = [R_1, ..., R_L]`` over layers :math:`x_0 = v, x_1, \dots, x_L`
    (:math:`R_k` between :math:`x_{k-1}` and :math:`x_k`),

    .. math::
        p(x_0, \dots, x_L) = p_{R_L}(x_{L-1}, x_L)\prod_{k=1}^{L-1} p_{R_k}(x_{k-1} \mid x_k),

    where :math:`p_{R_k}(x_{k-1}\mid x_k)` is :math:`R_k`'s conditional of its visible
    layer (its weights and visible layer).  The hidden layers of :math:`R_1, \dots,
    R_{L-1}` define the recognition posteriors :math:`Q(x_k \mid x_{k-1})` of greedy
    training (their biases are not part of the generative model).

    Parameters
    ----------
    rbms : sequence of RBM
        At least two; the hidden layer of each has the same states (type and size) as the
        visible layer of the next.  They are copied.

    Examples
    --------
    >>> first = RBM.random(4, 3, scale=1.0, rng=0)
    >>> dbn = DBN([first, first.transpose()])
    >>> dbn.sizes
    (4, 3, 4)
    >>> bool(np.isclose(log_likelihood(dbn, [[1, 0, 1, 1]]),
    ...                 exact.log_likelihood(first, [[1, 0, 1, 1]])))
    True
    """

    def __init__(self, rbms):
        if isinstance(rbms, RBM) or not hasattr(rbms, "__len__"):
            raise TypeError(f"rbms must be a sequence of rbm.RBM, got {type(rbms).__name__}")
        if len(rbms) < 2:
            raise ValueError(f"rbms must hold at least two RBMs (one directed layer and a top "
                             f"RBM), got {len(rbms)}")
        for k, model in enumerate(rbms):
            check_model(model, f"rbms[{k}]")
        _scalar_layers([m.visible for m in rbms] + [rbms[-1].hidden], "layers")
        for k in range(len(rbms) - 1):
            if not _same_states(rbms[k].hidden, rbms[k + 1].visible):
                raise ValueError(f"rbms[{k}].hidden ({rbms[k].hidden!r}) and rbms[{k + 1}]"
                                 f".visible ({rbms[k + 1].visible!r}) must be layers of the "
                                 "same units")
        self.rbms = [model.copy() for model in rbms]

    @property
    def top(self):
        """The top RBM, over the last two layers."""
        return self.rbms[-1]

    @property
    def sizes(self):
        """Units per layer, visible first."""
        return tuple([m.n_visible for m in self.rbms] + [self.top.n_hidden])

    def check(self, name="dbn"):
        """Require every RBM's parameters to be consistent and finite (they may change)."""
        for k, model in enumerate(self.rbms):
            check_model(model, f"{name}.rbms[{k}]")
        return self

    def copy(self):
        """An independent copy."""
        return DBN(self.rbms)

    def above(self):
        """The network over the layers above the visible one (an RBM, or a DBN)."""
        return self.rbms[1] if len(self.rbms) == 2 else DBN(self.rbms[1:])

    def __repr__(self):
        return f"DBN(sizes={self.sizes})"


class DBM:
    r"""A deep Boltzmann machine: layers :math:`x_0 = v, x_1, \dots, x_L` coupled in a chain.

    .. math::
        E(x_0, \dots, x_L) = \sum_{k=0}^{L} E_k(x_k) - \sum_{k=0}^{L-1} s(x_k)\cdot W_k\, s(x_{k+1}),

    for {0,1} layers :math:`-\sum_k b_k^\top x_k - \sum_k x_k^\top W_k x_{k+1}`.

    Parameters
    ----------
    weights : sequence of array_like
        ``weights[k]`` of shape ``(n_k, n_{k+1})``; at least two (two hidden layers).
    layers : sequence
        One more than `weights`: layers (copied), or the bias vectors of {0,1} layers.

    Examples
    --------
    >>> dbm = DBM.random((3, 2, 2), scale=1.0, rng=0)
    >>> dbm.sizes
    (3, 2, 2)
    >>> float(dbm.energy([[[0, 0, 0]], [[0, 0]], [[0, 0]]])[0])
    0.0
    """

    def __init__(self, weights, layers):
        if not hasattr(weights, "__len__") or not hasattr(layers, "__len__"):
            raise TypeError("weights and layers must be sequences")
        if len(weights) < 2:
            raise ValueError(f"weights must hold at least two arrays (two hidden layers), got "
                             f"{len(weights)}")
        if len(layers) != len(weights) + 1:
            raise ValueError(f"layers must hold one more entry than weights ({len(weights) + 1}"
                             f"), got {len(layers)}")
        built = []
        for k, layer in enumerate(layers):
            if isinstance(layer, Layer):
                built.append(layer.copy().check(f"layers[{k}]"))
            else:
                bias = as_float_array(layer, f"layers[{k}]")
                if bias.ndim != 1 or bias.shape[0] < 1:
                    raise ValueError(f"layers[{k}] must be a layer or a bias vector of shape "
                                     f"(n_units,), got shape {bias.shape}")
                built.append(Binary(check_finite_parameter(bias, f"layers[{k}]", bias.shape)))
        _scalar_layers(built, "layers")
        self.layers = built
        self.weights = [check_finite_parameter(W, f"weights[{k}]",
                                               (built[k].n_units, built[k + 1].n_units))
                        for k, W in enumerate(weights)]

    @classmethod
    def random(cls, sizes, *, rng, scale=0.01, bias_scale=0.0):
        """A {0,1} DBM with N(0, scale²) weights and N(0, bias_scale²) biases.

        Parameters
        ----------
        sizes : sequence of int
            Units per layer, visible first; at least three.
        rng : numpy.random.Generator or int
        scale, bias_scale : float
        """
        if not hasattr(sizes, "__len__") or len(sizes) < 3:
            raise ValueError(f"sizes must list at least three layers, got {sizes!r}")
        sizes = [check_positive_int(n, f"sizes[{k}]") for k, n in enumerate(sizes)]
        scale = check_positive_float(scale, "scale", allow_zero=True)
        bias_scale = check_positive_float(bias_scale, "bias_scale", allow_zero=True)
        rng = check_rng(rng)
        weights = [scale * rng.standard_normal((a, b)) for a, b in zip(sizes[:-1], sizes[1:])]
        biases = [bias_scale * rng.standard_normal(n) for n in sizes]
        return cls(weights, biases)

    @property
    def sizes(self):
        """Units per layer, visible first."""
        return tuple(layer.n_units for layer in self.layers)

    def check(self, name="dbm"):
        """Require consistent shapes and finite parameters (they may change after creation)."""
        for k, layer in enumerate(self.layers):
            layer.check(f"{name}.layers[{k}]")
        for k, W in enumerate(self.weights):
            check_finite_parameter(W, f"{name}.weights[{k}]",
                                   (self.layers[k].n_units, self.layers[k + 1].n_units))
        return self

    def copy(self):
        """An independent copy."""
        return DBM(self.weights, self.layers)

    def __repr__(self):
        return f"DBM(sizes={self.sizes})"

    def check_layer_states(self, states, name="states"):
        """A list of checked 2-d state arrays, one per layer, with equal numbers of rows."""
        if not hasattr(states, "__len__") or len(states) != len(self.layers):
            raise ValueError(f"{name} must hold one array per layer ({len(self.layers)})")
        out = [layer.check_states(x, f"{name}[{k}]", allow_1d=False)[0]
               for k, (layer, x) in enumerate(zip(self.layers, states))]
        if len({x.shape[0] for x in out}) != 1:
            raise ValueError(f"{name} must have the same number of rows in every layer")
        return out

    def energy(self, states):
        """:math:`E(x_0, \\dots, x_L)` per row; `states` holds one array per layer."""
        self.check()
        xs = self.check_layer_states(states)
        S = [layer.statistic(x) for layer, x in zip(self.layers, xs)]
        e = sum(layer.energy(x) for layer, x in zip(self.layers, xs))
        for k, W in enumerate(self.weights):
            e = e - np.einsum("ni,ij,nj->n", S[k], W, S[k + 1])
        return e

    def input_to(self, k, stats):
        """The input of layer `k` from its neighbours' statistics ``stats[k - 1], stats[k + 1]``
        (entries that are None are left out)."""
        I = 0.0
        if k > 0 and stats[k - 1] is not None:
            I = I + stats[k - 1] @ self.weights[k - 1]
        if k < len(self.layers) - 1 and stats[k + 1] is not None:
            I = I + stats[k + 1] @ self.weights[k].T
        if np.isscalar(I):
            raise ValueError(f"layer {k} has no neighbour given")
        return I


def _check_network(model, name="model"):
    if isinstance(model, DBN):
        return model.check(name)
    if isinstance(model, DBM):
        return model.check(name)
    raise TypeError(f"{name} must be an rbm.deep.DBN or rbm.deep.DBM, got "
                    f"{type(model).__name__}")


def _visible_rows(model, v, name="v"):
    layer = model.rbms[0].visible if isinstance(model, DBN) else model.layers[0]
    return layer.check_states(v, name)


# -- DBN ------------------------------------------------------------------------------

def _log_prior(model):
    r""":math:`\log p(h_1)` of a DBN over every state of its first hidden layer, in order."""
    h1 = model.rbms[0].hidden
    # a deeper stack sums over every hidden layer below the top RBM's, for every state of h1
    _require_enumerable([m.hidden for m in model.rbms[:-1]],
                        "the exact prior of the first hidden layer (every hidden layer below "
                        "the top RBM's, together)")
    above = model.above()
    n = h1.n_states ** h1.n_units
    rows = _block_rows(max(sum(above.sizes) if isinstance(above, DBN) else h1.n_units, 1))
    out = np.empty(n)
    if isinstance(above, RBM):
        log_z = exact.log_partition(above)
    for start in range(0, n, rows):
        H = h1.states(start, min(start + rows, n))
        if isinstance(above, RBM):
            out[start:start + len(H)] = -above.free_energy(H) - log_z
        else:
            out[start:start + len(H)] = _dbn_log_prob(above, H)
    return out


def _dbn_scores(model, V, prior, start, stop):
    r"""Per row of `V` and state of :math:`h_1` in ``start .. stop - 1``:
    :math:`\log p(h_1) + \log p(v \mid h_1)`, and the states."""
    first = model.rbms[0]
    H = first.hidden.states(start, stop)
    I = first.input_visible(H)
    log_v = (first.visible.statistic(V) @ I.T - first.visible.energy(V)[:, None]
             - first.visible.log_normaliser(I)[None, :])
    return prior[start:stop][None, :] + log_v, H


def _dbn_log_prob(model, V, means=False):
    prior = _log_prior(model)
    n = prior.size
    acc = _RowLogSum(len(V), model.rbms[0].n_hidden if means else 0)
    rows = _block_rows(len(V) + model.sizes[0])
    for start in range(0, n, rows):
        scores, H = _dbn_scores(model, V, prior, start, min(start + rows, n))
        acc.add(scores, H if means else None)
    return acc.means() if means else acc.log()


def _greedy_terms(model, V):
    r"""Per row of `V`: the greedy bound and its term :math:`\sum_{h_1} Q(h_1\mid v)\log p(h_1)`."""
    first = model.rbms[0]
    with one_blas_thread():
        prior = _log_prior(model)
        J = first.input_hidden(V)
        A = first.hidden.log_normaliser(J)
        total, prior_term = np.zeros(len(V)), np.zeros(len(V))
        rows = _block_rows(len(V) + model.sizes[0])
        for start in range(0, prior.size, rows):
            stop = min(start + rows, prior.size)
            scores, H = _dbn_scores(model, V, prior, start, stop)
            log_q = (J @ first.hidden.statistic(H).T - first.hidden.energy(H)[None, :]
                     - A[:, None])
            q = np.exp(log_q)
            total += np.where(q > 0, q * (scores - log_q), 0.0).sum(axis=1)
            prior_term += q @ prior[start:stop]
    return total, prior_term


def greedy_bound(model, v):
    r"""The variational lower bound of Hinton, Osindero & Teh (2006) on :math:`\log p(v)` of a DBN.

    With :math:`Q(h_1 \mid v)` the factorial posterior of the first RBM (its hidden
    layer given `v`),

    .. math::
        \log p(v) \ge \sum_{h_1} Q(h_1\mid v)\big[\log p(h_1) + \log p(v\mid h_1)
        - \log Q(h_1 \mid v)\big],

    computed exactly by enumerating :math:`h_1`, with :math:`p(h_1)` exact.  The gap is
    :math:`\mathrm{KL}(Q(h_1\mid v)\,\|\,p(h_1\mid v))`: zero when the second RBM is the
    first one's transpose (then the DBN is the first RBM).

    Parameters
    ----------
    model : DBN
    v : array_like of shape (n_visible,) or (n_samples, n_visible)

    Returns
    -------
    float or ndarray of shape (n_samples,)

    Examples
    --------
    >>> first = RBM.random(4, 3, scale=1.0, rng=0)
    >>> second = RBM.random(3, 2, scale=1.0, rng=1)
    >>> dbn = DBN([first, second])
    >>> bool(greedy_bound(dbn, [1, 0, 1, 1]) <= log_prob(dbn, [1, 0, 1, 1]))
    True
    """
    if not isinstance(model, DBN):
        raise TypeError(f"model must be an rbm.deep.DBN, got {type(model).__name__}")
    model.check("model")
    V, single = _visible_rows(model, v)
    total, _ = _greedy_terms(model, V)
    return total[0] if single else total


def bound_at_means(model, v):
    r"""The greedy bound with :math:`\log p_2(h_1)` taken at the posterior means: the
    objective that training the top RBM on the first RBM's probabilities climbs.

    With :math:`\mu = \mathbb E_Q[h_1 \mid v]` and :math:`-F_2` the top RBM's negative free
    energy, convex in :math:`h_1` for a {0,1} visible layer of the top RBM, Jensen's
    inequality gives :math:`\mathbb E_Q[-F_2(h_1)] \ge -F_2(\mu)`, so

    .. math::
        \log p(v) \ge \text{greedy bound} \ge -F_2(\mu) - \log Z_2
        + \sum_{h_1} Q(h_1\mid v)\big[\log p(v\mid h_1) - \log Q(h_1\mid v)\big].

    Only :math:`-F_2(\mu) - \log Z_2` depends on the top RBM: its log-likelihood of the rows
    :math:`\mu`, whose gradient :func:`fit_exact` climbs when given them.  Unlike the greedy
    bound it is not tight when the top RBM is the first one's transpose.

    Parameters
    ----------
    model : DBN
        Of two RBMs, the top one with a {0,1} visible layer.
    v : array_like of shape (n_visible,) or (n_samples, n_visible)

    Returns
    -------
    float or ndarray of shape (n_samples,)
        Per row of `v`; below :func:`greedy_bound`, which it equals only where :math:`Q` puts
        all its mass on one state.

    Examples
    --------
    >>> lower = RBM.random(3, 2, scale=2.0, rng=5)
    >>> at_transpose = DBN([lower, lower.transpose()])
    >>> bool(bound_at_means(at_transpose, [0, 1, 1]) < log_prob(at_transpose, [0, 1, 1]))
    True
    """
    if not isinstance(model, DBN):
        raise TypeError(f"model must be an rbm.deep.DBN, got {type(model).__name__}")
    model.check("model")
    if len(model.rbms) != 2 or not isinstance(model.top.visible, Binary):
        raise ValueError("bound_at_means needs a DBN of two RBMs whose top RBM has a {0,1} "
                         f"visible layer, got sizes {model.sizes} and {model.top.visible!r}")
    V, single = _visible_rows(model, v)
    total, prior_term = _greedy_terms(model, V)
    top = model.top
    with one_blas_thread():
        mu = model.rbms[0].hidden.mean_statistic(model.rbms[0].input_hidden(V))
        at_means = (-top.visible.energy(mu) + top.hidden.log_normaliser(top.input_hidden(mu))
                    - exact.log_partition(top))
    out = total - prior_term + at_means
    return out[0] if single else out


# -- DBM ------------------------------------------------------------------------------

def _odd(model):
    return list(range(1, len(model.layers), 2))


def _dbm_blocks(model, n_rows):
    """Blocks of the joint states of the odd layers: ``(states by layer index, count)``."""
    odd = _odd(model)
    layers = [model.layers[k] for k in odd]
    _require_enumerable(layers, "exact enumeration of the odd layers of a DBM")
    n = _n_joint(layers)
    rows = _block_rows(sum(model.sizes), n_rows)
    for start in range(0, n, rows):
        xs = _joint_states(layers, start, min(start + rows, n))
        yield dict(zip(odd, xs))


def _dbm_log_weights(model, odd_states, skip_visible):
    r""":math:`-\sum_\text{odd} E_k + \sum_\text{even} A_k(\text{input})` per joint odd state
    (without the visible layer when `skip_visible`), and the odd layers' statistics."""
    stats = [None] * len(model.layers)
    log_w = 0.0
    for k, x in odd_states.items():
        stats[k] = model.layers[k].statistic(x)
        log_w = log_w - model.layers[k].energy(x)
    for k in range(0 if not skip_visible else 2, len(model.layers), 2):
        log_w = log_w + model.layers[k].log_normaliser(model.input_to(k, stats))
    return log_w, stats


def _dbm_log_partition(model):
    total = _RowLogSum(1)
    for odd_states in _dbm_blocks(model, 1):
        log_w, _ = _dbm_log_weights(model, odd_states, skip_visible=False)
        total.add(log_w[None, :])
    return float(total.log()[0])


def _dbm_scores(model, SV, odd_states):
    """Per row of visible statistics `SV` and joint odd state: the log-weight of the pair
    (without the visible layer's own energy), and the odd layers' statistics."""
    log_w, stats = _dbm_log_weights(model, odd_states, skip_visible=True)
    return SV @ model.weights[0] @ stats[1].T + log_w[None, :], stats


def _dbm_log_unnormalised(model, V, means=False, with_energy=True):
    layer = model.layers[0]
    SV = layer.statistic(V)
    acc = _RowLogSum(len(V), model.sizes[1] if means else 0)
    for odd_states in _dbm_blocks(model, len(V)):
        scores, _ = _dbm_scores(model, SV, odd_states)
        acc.add(scores, odd_states[1] if means else None)
    if means:
        return acc.means()
    return acc.log() - (layer.energy(V) if with_energy else 0.0)


def _dbm_moments(model, V=None):
    r"""Exact :math:`\langle s_k s_{k+1}^\top\rangle` and :math:`\langle s_k\rangle` for every
    layer: under the model (`V` None) or under each row's posterior, averaged over rows."""
    L = len(model.layers)
    cross = [np.zeros(W.shape) for W in model.weights]
    means = [np.zeros(n) for n in model.sizes]
    if V is None:
        log_norm, n_rows, first_even = _dbm_log_partition(model), 1, 0
    else:
        SV = model.layers[0].statistic(V)
        log_norm = _dbm_log_unnormalised(model, V, with_energy=False)
        n_rows, first_even = len(V), 2
    for odd_states in _dbm_blocks(model, n_rows):
        if V is None:
            log_w, stats = _dbm_log_weights(model, odd_states, skip_visible=False)
            w = np.exp(log_w - log_norm)
        else:
            scores, stats = _dbm_scores(model, SV, odd_states)
            P = np.exp(scores - log_norm[:, None])
            w = P.sum(axis=0) / n_rows
            cross[0] += SV.T @ (P @ stats[1]) / n_rows
        for k in range(first_even, L, 2):
            stats[k] = model.layers[k].mean_statistic(model.input_to(k, stats))
        for k in range(first_even // 2, L):
            means[k] += w @ stats[k]
        for k in range(first_even // 2, L - 1):
            cross[k] += (stats[k] * w[:, None]).T @ stats[k + 1]
    if V is not None:
        means[0] = SV.mean(axis=0)
    return {"weights": cross, "biases": means}


# -- both -----------------------------------------------------------------------------

def log_partition(model):
    r"""Exact :math:`\log Z` of a DBN (its top RBM's: the directed layers are normalised) or of
    a DBM (enumerating its odd layers, the even ones summed in closed form).

    Parameters
    ----------
    model : DBN or DBM

    Returns
    -------
    float

    Examples
    --------
    >>> dbm = DBM([np.zeros((2, 1)), np.zeros((1, 3))],
    ...           [np.zeros(2), np.zeros(1), np.zeros(3)])
    >>> round(float(log_partition(dbm) / np.log(2)), 12)  # 2**6 states of energy 0
    6.0
    """
    _check_network(model)
    with one_blas_thread():
        if isinstance(model, DBN):
            return float(exact.log_partition(model.top))
        return _dbm_log_partition(model)


def log_prob(model, v):
    r"""Exact :math:`\log p(v)` by enumerating the first hidden layer (a DBN) or the odd layers
    (a DBM).

    For a DBN, :math:`\log\sum_{h_1} p(h_1)\,p(v\mid h_1)`, with :math:`p(h_1)` the top
    RBM's marginal or, deeper, the exact :func:`log_prob` of the network above; for a DBM,
    :math:`\log\sum_{h_1, h_3, \dots} e^{-E_v(v) + s(v)\cdot W_0 s(h_1) - \sum_\text{odd}
    E_k + \sum_{\text{even}\ge 2} A_k} - \log Z`.

    Parameters
    ----------
    model : DBN or DBM
    v : array_like of shape (n_visible,) or (n_samples, n_visible)

    Returns
    -------
    float or ndarray of shape (n_samples,)

    Raises
    ------
    ValueError
        If the enumeration exceeds ``2**MAX_DEEP_BITS`` states (use a smaller first hidden
        layer, or an estimate such as annealed importance sampling).
    """
    _check_network(model)
    V, single = _visible_rows(model, v)
    with one_blas_thread():
        if isinstance(model, DBN):
            out = _dbn_log_prob(model, V)
        else:
            out = _dbm_log_unnormalised(model, V) - _dbm_log_partition(model)
    return out[0] if single else out


def log_likelihood(model, data):
    """Mean exact :math:`\\log p(v)` over the rows of `data` (:func:`log_prob`).

    Parameters
    ----------
    model : DBN or DBM
    data : array_like of shape (n_samples, n_visible)

    Returns
    -------
    float
    """
    _check_network(model)
    V, _ = _visible_rows(model, data, "data")
    return float(np.mean(log_prob(model, V)))


def posterior_means(model, v):
    r"""Exact :math:`\mathbb E[h_1 \mid v]` of the first hidden layer (for {0,1} units, the
    probabilities :math:`p(h_{1j} = 1 \mid v)`), by enumeration; `model` and `v` as in
    :func:`log_prob`.

    Returns
    -------
    ndarray of shape (n_1,) or (n_samples, n_1)

    Examples
    --------
    >>> first = RBM.random(4, 3, scale=1.0, rng=0)
    >>> dbn = DBN([first, first.transpose()])
    >>> v = [1, 0, 1, 1]
    >>> bool(np.allclose(posterior_means(dbn, v), first.mean_h_given_v(v)))
    True
    """
    _check_network(model)
    V, single = _visible_rows(model, v)
    with one_blas_thread():
        if isinstance(model, DBN):
            out = _dbn_log_prob(model, V, means=True)
        else:
            out = _dbm_log_unnormalised(model, V, means=True)
    return out[0] if single else out


def mean_field(model, v, *, n_steps=100, tol=1e-10):
    r"""The mean-field posterior of a DBM: factorial :math:`Q(h\mid v) = \prod_k q_k(x_k)`.

    Each :math:`q_k(x) \propto e^{-E_k(x) + J_k\cdot s(x)}` is given by its input
    :math:`J_k`; the fixed-point equations :math:`J_k = \mu_{k-1} W_{k-1} + W_k \mu_{k+1}`
    (:math:`\mu` the means of the statistics, :math:`\mu_0 = s(v)`) are iterated, odd
    layers then even ones, from a bottom-up pass, until no input moves by more than `tol`
    or `n_steps` sweeps.

    Parameters
    ----------
    model : DBM
    v : array_like of shape (n_samples, n_visible)
    n_steps : int, default 100
    tol : float, default 1e-10

    Returns
    -------
    list of ndarray
        The inputs :math:`J_1, \dots, J_L`, each of shape (n_samples, n_k).
    """
    if not isinstance(model, DBM):
        raise TypeError(f"model must be an rbm.deep.DBM, got {type(model).__name__}")
    model.check("model")
    V, _ = model.layers[0].check_states(v, "v", allow_1d=False)
    n_steps = check_positive_int(n_steps, "n_steps")
    tol = check_positive_float(tol, "tol", allow_zero=True)
    L = len(model.layers)
    mu = [model.layers[0].statistic(V)] + [None] * (L - 1)
    J = [None] * L
    with one_blas_thread():
        for k in range(1, L):
            J[k] = mu[k - 1] @ model.weights[k - 1]
            mu[k] = model.layers[k].mean_statistic(J[k])
        for _ in range(n_steps):
            moved = 0.0
            for parity in (1, 0):
                for k in range(1, L):
                    if k % 2 == parity:
                        new = model.input_to(k, mu)
                        moved = max(moved, float(np.max(np.abs(new - J[k]))))
                        J[k] = new
                        mu[k] = model.layers[k].mean_statistic(new)
            if moved <= tol:
                break
    return J[1:]


def mean_field_bound(model, v, inputs=None, *, n_steps=100, tol=1e-10):
    r"""The mean-field lower bound on :math:`\log p(v)` of a DBM, exact but for nothing.

    .. math::
        \log p(v) \ge -E_0(v) + s(v)\cdot W_0\mu_1 + \sum_{k\ge1}\big[A_k(J_k) - J_k\cdot\mu_k\big]
        + \sum_{k\ge1}\mu_k\cdot W_k\mu_{k+1} - \log Z,

    which is :math:`\mathbb E_Q[-E(v,h)] + H(Q) - \log Z` for the factorial :math:`Q` with
    inputs :math:`J_k` and means :math:`\mu_k` (the layers' energies cancel against their
    entropies).  Its gap is :math:`\mathrm{KL}(Q\,\|\,p(h\mid v))`.

    Parameters
    ----------
    model : DBM
    v : array_like of shape (n_samples, n_visible)
    inputs : list of ndarray, optional
        :math:`J_1, \dots, J_L`; by default those of :func:`mean_field`.
    n_steps, tol
        As in :func:`mean_field`.

    Returns
    -------
    ndarray of shape (n_samples,)
    """
    if not isinstance(model, DBM):
        raise TypeError(f"model must be an rbm.deep.DBM, got {type(model).__name__}")
    model.check("model")
    V, _ = model.layers[0].check_states(v, "v", allow_1d=False)
    if inputs is None:
        inputs = mean_field(model, V, n_steps=n_steps, tol=tol)
    if not hasattr(inputs, "__len__") or len(inputs) != len(model.layers) - 1:
        raise ValueError(f"inputs must hold one array per hidden layer "
                         f"({len(model.layers) - 1})")
    J = [None]
    for k, x in enumerate(inputs, start=1):
        arr = as_float_array(x, f"inputs[{k - 1}]")
        if arr.shape != (len(V), model.sizes[k]):
            raise ValueError(f"inputs[{k - 1}] must have shape ({len(V)}, {model.sizes[k]}), "
                             f"got {arr.shape}")
        J.append(arr)
    with one_blas_thread():
        mu = [model.layers[0].statistic(V)] + [model.layers[k].mean_statistic(J[k])
                                               for k in range(1, len(J))]
        out = -model.layers[0].energy(V)
        for k in range(1, len(J)):
            out = out + model.layers[k].log_normaliser(J[k]) - (J[k] * mu[k]).sum(axis=1)
        for k, W in enumerate(model.weights):
            out = out + ((mu[k] @ W) * mu[k + 1]).sum(axis=1)
        return out - _dbm_log_partition(model)


def gibbs_sweeps(model, states, n_steps, *, rng):
    """Block Gibbs sampling of a DBM: each sweep draws the even layers given the odd ones,
    then the odd layers given the even ones.

    Parameters
    ----------
    model : DBM
    states : list of array_like
        One array of shape (n_chains, n_k) per layer (copied).
    n_steps : int
        Sweeps, at least 0.
    rng : numpy.random.Generator or int

    Returns
    -------
    list of ndarray
    """
    if not isinstance(model, DBM):
        raise TypeError(f"model must be an rbm.deep.DBM, got {type(model).__name__}")
    model.check("model")
    xs = [x.copy() for x in model.check_layer_states(states)]
    n_steps = check_positive_int(n_steps, "n_steps", minimum=0)
    rng = check_rng(rng)
    with one_blas_thread():
        stats = [layer.statistic(x) for layer, x in zip(model.layers, xs)]
        for _ in range(n_steps):
            _sweep(model, xs, stats, rng)
    return xs


def _sweep(model, xs, stats, rng):
    """One block-Gibbs sweep in place: the even layers given the odd ones, then the odd ones."""
    for parity in (0, 1):
        for k in range(parity, len(model.layers), 2):
            xs[k] = model.layers[k].sample(model.input_to(k, stats), rng=rng)
            stats[k] = model.layers[k].statistic(xs[k])


def sample(model, n_samples, *, rng, n_steps=1000):
    r"""Samples of :math:`p(v)`: exact and ancestral for a DBN, by block Gibbs for a DBM.

    A DBN draws its top RBM's visible layer exactly (:func:`rbm.exact.sample`), then
    each layer below from its directed conditional: independent exact draws.  A DBM runs
    `n_chains` = `n_samples` independent chains of :func:`gibbs_sweeps` from uniformly
    random states for `n_steps` sweeps and returns their last visible states (approximate
    draws; `n_steps` is ignored for a DBN).

    Parameters
    ----------
    model : DBN or DBM
    n_samples : int
    rng : numpy.random.Generator or int
    n_steps : int, default 1000

    Returns
    -------
    ndarray of shape (n_samples, n_visible)

    Examples
    --------
    >>> first = RBM(W=np.zeros((2, 1)), b=[50.0, -50.0], c=[0.0])
    >>> sample(DBN([first, first.transpose()]), 2, rng=0).tolist()
    [[1.0, 0.0], [1.0, 0.0]]
    """
    _check_network(model)
    n_samples = check_positive_int(n_samples, "n_samples")
    rng = check_rng(rng)
    if isinstance(model, DBN):
        x = exact.sample(model.top, n_samples, rng=rng)
        for below in reversed(model.rbms[:-1]):
            x = below.sample_v_given_h(x, rng=rng)
        return x
    start = [layer.random_states(n_samples, rng=rng) for layer in model.layers]
    return gibbs_sweeps(model, start, n_steps, rng=rng)[0]


def sample_exact(model, n_samples, *, rng):
    r"""Independent exact draws of every layer of a DBM: the odd layers from their exact
    marginal (by enumerating them), then the even layers given them.

    Given the odd layers :math:`h_1, h_3, \dots` the even ones are independent, and the odd
    layers' marginal is proportional to :math:`e^{-\sum_\text{odd} E_k}
    \prod_\text{even} e^{A_k(\text{input})}` (the terms of :func:`log_partition`).  A
    reference for the persistent chains of :func:`fit_mean_field_pcd`: what their moments
    would be without a chain's lag.

    Parameters
    ----------
    model : DBM
        Its odd layers together of at most ``MAX_DEEP_BITS`` bits.
    n_samples : int
    rng : numpy.random.Generator or int

    Returns
    -------
    list of ndarray
        One array of shape (n_samples, n_k) per layer, as the chains of
        :func:`gibbs_sweeps`.

    Examples
    --------
    >>> dbm = DBM([np.zeros((2, 1)), np.zeros((1, 1))], [[50.0, -50.0], [0.0], [0.0]])
    >>> sample_exact(dbm, 2, rng=0)[0].tolist()
    [[1.0, 0.0], [1.0, 0.0]]
    """
    if not isinstance(model, DBM):
        raise TypeError(f"model must be an rbm.deep.DBM, got {type(model).__name__}")
    model.check("model")
    n_samples = check_positive_int(n_samples, "n_samples")
    rng = check_rng(rng)
    odd = _odd(model)
    with one_blas_thread():
        log_w = np.concatenate([_dbm_log_weights(model, states, skip_visible=False)[0]
                                for states in _dbm_blocks(model, 1)])
        p = np.exp(log_w - log_w.max())
        index = rng.choice(len(p), size=n_samples, p=p / p.sum())
        xs = [None] * len(model.layers)
        for k, x in zip(odd, _states_at([model.layers[k] for k in odd], index)):
            xs[k] = x
        stats = [None if x is None else model.layers[k].statistic(x)
                 for k, x in enumerate(xs)]
        for k in range(0, len(model.layers), 2):
            xs[k] = model.layers[k].sample(model.input_to(k, stats), rng=rng)
    return xs


def _two_state(model, what):
    for k, layer in enumerate(model.layers):
        if layer.bits is None:
            raise ValueError(f"{what} needs {{0,1}} or ±1 layers (energy -b x, statistic x); "
                             f"model.layers[{k}] is {layer!r}")


def statistics(model, data=None):
    r"""Exact moments of a DBM: :math:`\langle x_k x_{k+1}^\top\rangle` and
    :math:`\langle x_k\rangle`, under the model or, given `data`, under
    :math:`q(\bv)\,p(\bh\mid\bv)` (each row's exact posterior, averaged over rows).

    Enumerates the odd layers; the even ones enter through their conditional means.  The
    log-likelihood gradient is ``statistics(model, data)`` minus ``statistics(model)``
    (:func:`gradient`).

    Parameters
    ----------
    model : DBM
        Of {0,1} or ±1 layers.
    data : array_like of shape (n_samples, n_visible), optional

    Returns
    -------
    dict
        ``"weights"``: a list of arrays shaped as ``model.weights``; ``"biases"``: a list of
        one vector per layer.
    """
    if not isinstance(model, DBM):
        raise TypeError(f"model must be an rbm.deep.DBM, got {type(model).__name__}")
    model.check("model")
    _two_state(model, "statistics")
    with one_blas_thread():
        if data is None:
            return _dbm_moments(model)
        V, _ = model.layers[0].check_states(data, "data", allow_1d=False)
        return _dbm_moments(model, V)


def gradient(model, data):
    r"""The exact gradient of a DBM's mean log-likelihood of `data`: data term minus model term.

    .. math::
        \frac{\partial\bar\ell}{\partial W_k} = \langle x_k x_{k+1}^\top\rangle_{q(\bv)p(\bh\mid\bv)}
        - \langle x_k x_{k+1}^\top\rangle_p,\qquad
        \frac{\partial\bar\ell}{\partial b_k} = \langle x_k\rangle_{q(\bv)p(\bh\mid\bv)}
        - \langle x_k\rangle_p.

    Parameters
    ----------
    model : DBM
    data : array_like of shape (n_samples, n_visible)

    Returns
    -------
    dict
        As :func:`statistics`.
    """
    pos, neg = statistics(model, data), statistics(model)
    return {key: [a - b for a, b in zip(pos[key], neg[key])] for key in pos}


def mean_field_statistics(model, data, *, n_steps=100, tol=1e-10):
    r"""The data term of Salakhutdinov & Hinton (2009): the moments under the mean-field
    posterior, :math:`\langle \mu_k \mu_{k+1}^\top\rangle` with :math:`\mu_0 = \bv`.

    Parameters
    ----------
    model : DBM
        Of {0,1} or ±1 layers.
    data : array_like of shape (n_samples, n_visible)
    n_steps, tol
        As in :func:`mean_field`.

    Returns
    -------
    dict
        As :func:`statistics`; minus ``statistics(model)`` it is the mean-field gradient,
        whose gap to :func:`gradient` is the bias of the mean-field data term.
    """
    if not isinstance(model, DBM):
        raise TypeError(f"model must be an rbm.deep.DBM, got {type(model).__name__}")
    _two_state(model, "mean_field_statistics")
    V, _ = model.layers[0].check_states(data, "data", allow_1d=False)
    J = mean_field(model, V, n_steps=n_steps, tol=tol)
    with one_blas_thread():
        return _moments([model.layers[0].statistic(V)] + [model.layers[k].mean_statistic(x)
                                                          for k, x in enumerate(J, start=1)])


def _moments(stats):
    r""":math:`\langle s_k s_{k+1}^\top\rangle` and :math:`\langle s_k\rangle` over the rows of
    per-layer statistics (or means)."""
    n = len(stats[0])
    return {"weights": [stats[k].T @ stats[k + 1] / n for k in range(len(stats) - 1)],
            "biases": [x.mean(axis=0) for x in stats]}


def sample_statistics(model, states):
    r"""The moments :math:`\langle s_k s_{k+1}^\top\rangle`, :math:`\langle s_k\rangle` of
    sampled states of every layer (persistent chains, say), averaged over the rows.

    Parameters
    ----------
    model : DBM
    states : list of array_like
        One array of shape (n_chains, n_k) per layer.

    Returns
    -------
    dict
        As :func:`statistics`: the negative phase that the chains estimate.
    """
    if not isinstance(model, DBM):
        raise TypeError(f"model must be an rbm.deep.DBM, got {type(model).__name__}")
    xs = model.check_layer_states(states)
    with one_blas_thread():
        return _moments([layer.statistic(x) for layer, x in zip(model.layers, xs)])


# -- greedy training ------------------------------------------------------------------

def aggregated_posterior(model, data, weights=None):
    r"""Every hidden state of an RBM and its weight :math:`\bar Q(h) = \frac1N\sum_n
    Q(h\mid v_n)` under the factorial posterior, averaged over the rows of `data`.

    The part of the greedy bound (:func:`greedy_bound`) that the second RBM changes is
    :math:`\sum_h \bar Q(h)\log p_2(h)`: the second RBM's log-likelihood of this weighted
    data set (what training on samples of :math:`Q` estimates).

    Parameters
    ----------
    model : RBM
        With a discrete hidden layer of at most ``MAX_DEEP_BITS`` bits.
    data : array_like of shape (n_samples, n_visible)
    weights : array_like of shape (n_samples,), optional
        Of the rows, non-negative and summing to 1 (uniform by default): the aggregated
        posterior of a weighted data set, such as another RBM's aggregated posterior (a
        third layer's data).

    Returns
    -------
    (ndarray of shape (n_states, n_hidden), ndarray of shape (n_states,))
    """
    check_model(model)
    V, _ = model.visible.check_states(data, "data", allow_1d=False)
    w = _row_weights(weights, len(V))
    _require_enumerable([model.hidden], "the aggregated posterior")
    n = model.hidden.n_states ** model.n_hidden
    J = model.input_hidden(V)
    A = model.hidden.log_normaliser(J)
    out = np.empty(n)
    rows = _block_rows(len(V) + model.n_hidden)
    with one_blas_thread():
        for start in range(0, n, rows):
            H = model.hidden.states(start, min(start + rows, n))
            log_q = (J @ model.hidden.statistic(H).T - model.hidden.energy(H)[None, :]
                     - A[:, None])
            out[start:start + len(H)] = w @ np.exp(log_q)
    return model.hidden.states(0, n), out


def _row_weights(weights, n):
    """Checked weights of `n` rows (non-negative, summing to 1), uniform when None."""
    if weights is None:
        return np.full(n, 1.0 / n)
    w = as_float_array(weights, "weights")
    if w.shape != (n,) or not np.isfinite(w).all() or (w < 0).any() or abs(w.sum() - 1) > 1e-9:
        raise ValueError(f"weights must be {n} non-negative numbers summing to 1")
    return w


def fit_exact(model, states, weights=None, *, learning_rate, n_steps):
    r"""Full-batch gradient ascent on :math:`\sum_n w_n \log p(x_n)` with the exact gradient.

    The data term is :math:`\sum_n w_n\, s(x_n)\,\mathbb E[s(h)\mid x_n]^\top` (and the
    biases'), the model term :func:`rbm.exact.model_statistics`: every step is
    deterministic.  Rows of `states` may be probabilities rather than states (training on
    the first layer's posterior probabilities): the data term is then the same formula at
    those rows, which is not the gradient of any likelihood of states.

    Parameters
    ----------
    model : RBM
        Of two {0,1} layers; a trained copy is returned.
    states : array_like of shape (n_rows, n_visible)
        In [0, 1].
    weights : array_like of shape (n_rows,), optional
        Non-negative, summing to 1; uniform by default.
    learning_rate : float
    n_steps : int

    Returns
    -------
    RBM
    """
    check_model(model, binary="fit_exact")
    X = as_float_array(states, "states")
    if X.ndim != 2 or X.shape[1] != model.n_visible or X.shape[0] < 1:
        raise ValueError(f"states must have shape (n_rows, {model.n_visible}), got {X.shape}")
    if not (np.isfinite(X).all() and (X >= 0).all() and (X <= 1).all()):
        raise ValueError("states must lie in [0, 1]")
    w = _row_weights(weights, len(X))
    learning_rate = check_positive_float(learning_rate, "learning_rate")
    n_steps = check_positive_int(n_steps, "n_steps", minimum=0)
    return _ascend(model, X, w, learning_rate, n_steps)


def _doubled(model, copies):
    """The RBM with two tied copies of one layer ("visible" or "hidden"), or `model` itself."""
    if copies == "visible":
        return RBM(np.vstack([model.W, model.W]), np.concatenate([model.b, model.b]), model.c)
    if copies == "hidden":
        return RBM(np.hstack([model.W, model.W]), model.b, np.concatenate([model.c, model.c]))
    return model


def _ascend(model, X, w, learning_rate, n_steps, copies=None):
    r"""`n_steps` of exact full-batch ascent on :math:`\sum_n w_n \log p(x_n)`; with `copies`,
    of the RBM with that layer doubled and tied (its gradient summed over the two copies)."""
    out = model.copy()
    n_v, n_h = model.W.shape
    with one_blas_thread():
        for _ in range(n_steps):
            big = _doubled(out, copies)
            P = big.hidden.mean_statistic(big.input_hidden(X))
            neg = exact.model_expectations(big, n_threads=1)
            dW, db, dc = (X * w[:, None]).T @ P - neg.vh, w @ X - neg.v, w @ P - neg.h
            if copies == "visible":
                dW, db = dW[:n_v] + dW[n_v:], db[:n_v] + db[n_v:]
            elif copies == "hidden":
                dW, dc = dW[:, :n_h] + dW[:, n_h:], dc[:n_h] + dc[n_h:]
            out.W += learning_rate * dW
            out.b += learning_rate * db
            out.c += learning_rate * dc
    return out.check("the trained model")


# -- a DBM trained as Salakhutdinov & Hinton (2009) --------------------------------------

def pretrain_dbm(data, n_hidden, *, learning_rate, n_steps, rng, scale=0.01):
    r"""A {0,1} DBM of two hidden layers, pretrained greedily with doubled weights.

    As Salakhutdinov & Hinton (2009, section 3.1) describe: the first RBM sees its input
    twice, :math:`p(h_{1j} = 1 \mid \bv) = \sigma(c_j + 2\sum_i W^{(1)}_{ij} v_i)`, and the
    second RBM, over :math:`\bh^{(1)}` and :math:`\bh^{(2)}`, has its hidden layer twice,
    :math:`p(h_{1j} = 1 \mid \bh^{(2)}) = \sigma(b_j + 2\sum_m W^{(2)}_{jm} h_{2m})`; in the
    DBM each of :math:`\bh^{(1)}`'s two neighbours then gives about half its input.  Each is
    the RBM with two tied copies of the doubled layer, trained here by full-batch ascent on its
    exact gradient (the paper uses contrastive divergence): the first on the data (both
    copies equal to it), the second on the first one's aggregated posterior
    (:func:`aggregated_posterior`, every state of :math:`\bh^{(1)}` weighted exactly).  The
    DBM takes both weight matrices as they are, the visible biases of the first RBM, the
    hidden biases of the second, and for :math:`\bh^{(1)}` the mean of the two biases it has
    in the two RBMs (a choice of ours: the paper does not say).

    Parameters
    ----------
    data : array_like of shape (n_samples, n_visible)
        {0,1} rows.
    n_hidden : (int, int)
        Units of :math:`\bh^{(1)}` (at most ``MAX_DEEP_BITS``) and :math:`\bh^{(2)}`.
    learning_rate : float
    n_steps : int
        Steps of each of the two RBMs.
    rng : numpy.random.Generator or int
        Draws the starting weights, N(0, scale²).
    scale : float, default 0.01

    Returns
    -------
    DBM

    Examples
    --------
    >>> dbm = pretrain_dbm(np.eye(4), (3, 2), learning_rate=0.1, n_steps=5, rng=0)
    >>> dbm.sizes
    (4, 3, 2)
    """
    arr = as_float_array(data, "data")
    V, _ = check_binary(arr, "data", arr.shape[-1] if arr.ndim == 2 else 0, allow_1d=False)
    if not hasattr(n_hidden, "__len__") or len(n_hidden) != 2:
        raise ValueError(f"n_hidden must be two sizes (n_1, n_2), got {n_hidden!r}")
    n1, n2 = (check_positive_int(n, f"n_hidden[{k}]") for k, n in enumerate(n_hidden))
    _require_enumerable([Binary(np.zeros(n1))], "pretraining (the aggregated posterior of h1)")
    learning_rate = check_positive_float(learning_rate, "learning_rate")
    n_steps = check_positive_int(n_steps, "n_steps", minimum=0)
    scale = check_positive_float(scale, "scale", allow_zero=True)
    rng = check_rng(rng)
    twice = np.hstack([V, V])
    first = _ascend(RBM.random(V.shape[1], n1, scale=scale, rng=rng), twice,
                    _row_weights(None, len(V)), learning_rate, n_steps, copies="visible")
    states, weights = aggregated_posterior(_doubled(first, "visible"), twice)
    second = _ascend(RBM.random(n1, n2, scale=scale, rng=rng), states, weights, learning_rate,
                     n_steps, copies="hidden")
    return DBM([first.W, second.W], [first.b, (first.c + second.b) / 2.0, second.c])


def fit_mean_field_pcd(model, data, chains, *, learning_rate, n_steps, rng, n_sweeps=1,
                       mf_steps=100):
    r"""Train a DBM as Salakhutdinov & Hinton (2009): mean-field data term, persistent chains.

    Each step ascends

    .. math::
        \Delta W_k = \eta\big(\langle \mu_k \mu_{k+1}^\top\rangle_\text{data}
        - \langle s_k s_{k+1}^\top\rangle_\text{chains}\big)

    (and the biases alike), with :math:`\mu` the mean-field means of every row of `data`
    (:func:`mean_field_statistics`, `mf_steps` sweeps at most) and the chains' states moved
    by `n_sweeps` block-Gibbs sweeps of the current model (:func:`gibbs_sweeps`) before
    their moments are taken (:func:`sample_statistics`).  Full batch, constant rate.

    Parameters
    ----------
    model : DBM
        Of {0,1} or ±1 layers; a trained copy is returned.
    data : array_like of shape (n_samples, n_visible)
    chains : list of array_like
        The persistent chains: one array of shape (n_chains, n_k) per layer (copied).
    learning_rate : float
    n_steps : int
    rng : numpy.random.Generator or int
    n_sweeps : int, default 1
    mf_steps : int, default 100

    Returns
    -------
    (DBM, list of ndarray)
        The trained model and the chains' last states.
    """
    if not isinstance(model, DBM):
        raise TypeError(f"model must be an rbm.deep.DBM, got {type(model).__name__}")
    _two_state(model.check("model"), "fit_mean_field_pcd")
    V, _ = model.layers[0].check_states(data, "data", allow_1d=False)
    xs = [x.copy() for x in model.check_layer_states(chains, "chains")]
    learning_rate = check_positive_float(learning_rate, "learning_rate")
    n_steps = check_positive_int(n_steps, "n_steps", minimum=0)
    n_sweeps = check_positive_int(n_sweeps, "n_sweeps")
    mf_steps = check_positive_int(mf_steps, "mf_steps")
    rng = check_rng(rng)
    out = model.copy()
    for _ in range(n_steps):
        pos = mean_field_statistics(out, V, n_steps=mf_steps)
        with one_blas_thread():
            stats = [layer.statistic(x) for layer, x in zip(out.layers, xs)]
            for _ in range(n_sweeps):
                _sweep(out, xs, stats, rng)
            neg = _moments(stats)
        for k, W in enumerate(out.weights):
            W += learning_rate * (pos["weights"][k] - neg["weights"][k])
        for k, layer in enumerate(out.layers):
            layer.bias += learning_rate * (pos["biases"][k] - neg["biases"][k])
    return out.check("the trained model"), xs


def _tempered(model, base, beta):
    """The DBM of weights beta W and layers of energy (1 - beta) E_base + beta E."""
    return DBM([beta * W for W in model.weights],
               [layer.anneal(b, beta) for layer, b in zip(model.layers, base)])


def _odd_log_marginal(model, xs):
    r"""Per row: :math:`\log` of the unnormalised marginal of the odd layers' states
    (the even layers summed in closed form)."""
    return _dbm_log_weights(model, {k: xs[k] for k in _odd(model)}, skip_visible=False)[0]


def ais_log_partition(model, *, n_runs=100, betas=14500, rng):
    r"""Estimate :math:`\log Z` of a DBM by annealed importance sampling.

    As Salakhutdinov & Murray (2008) anneal an RBM, and Salakhutdinov & Hinton (2009) a
    DBM: from the base model of independent units (``layer.base()``: uniform {0,1} units,
    no weights) through the DBMs with weights :math:`\beta_k W` and layer energies
    :math:`(1-\beta_k)E_\text{base} + \beta_k E`.  The even layers (the visible one among
    them) are summed out in closed form, so each run's weight is a product of ratios of
    the marginals :math:`p_k^*` of the odd layers' states,

    .. math::
        \log w = \sum_{k=1}^{K}\big[\log p_k^*(x^\text{odd}_k)
        - \log p_{k-1}^*(x^\text{odd}_k)\big],

    and one block-Gibbs sweep at :math:`\beta_k` (which leaves :math:`p_k` and so its
    marginal invariant) moves the states between temperatures.  :math:`\hat Z` is unbiased
    for :math:`Z`; :math:`\log\hat Z` is low in expectation.  The layers of
    :mod:`rbm.ais` (:func:`rbm.ais.inverse_temperatures`, :func:`rbm.ais.log_mean_weight`,
    :class:`rbm.ais.AISResult`) are shared.

    Parameters
    ----------
    model : DBM
    n_runs : int, default 100
        At least 2.
    betas : int or array_like, default 14500
        As in :func:`rbm.ais.ais_log_partition` (an int K: the paper's schedule in K steps).
    rng : numpy.random.Generator or int

    Returns
    -------
    rbm.ais.AISResult
        ``final_states`` are the runs' visible states.

    Examples
    --------
    >>> dbm = DBM.random((4, 3, 2), scale=1.0, rng=0)
    >>> result = ais_log_partition(dbm, n_runs=200, betas=300, rng=1)
    >>> bool(abs(result.log_z - log_partition(dbm)) < 4 * result.std_error)
    True
    """
    if not isinstance(model, DBM):
        raise TypeError(f"model must be an rbm.deep.DBM, got {type(model).__name__}")
    model.check("model")
    n_runs = check_positive_int(n_runs, "n_runs", minimum=2)
    betas = ais.inverse_temperatures(betas)
    rng = check_rng(rng)
    base = [layer.base() for layer in model.layers]
    log_z_base = sum(float(b.log_normaliser(np.zeros((1,) + b.shape))[0]) for b in base)
    xs = [b.sample(np.zeros((n_runs,) + b.shape), rng=rng) for b in base]
    log_w = np.zeros(n_runs)
    with one_blas_thread():
        previous = _tempered(model, base, betas[0])
        for m in range(1, len(betas)):
            current = _tempered(model, base, betas[m])
            log_w += _odd_log_marginal(current, xs) - _odd_log_marginal(previous, xs)
            if m < len(betas) - 1:
                _sweep(current, xs, [layer.statistic(x) for layer, x in
                                     zip(current.layers, xs)], rng)
            previous = current
    log_mean, std_error = ais.log_mean_weight(log_w)
    return ais.AISResult(log_z=log_z_base + log_mean, std_error=std_error, log_weights=log_w,
                         log_z_base=log_z_base, final_states=xs[0])
