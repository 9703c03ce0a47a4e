r"""Training principles that avoid the partition function, each an estimator for :func:`rbm.training.train`.

The likelihood's gradient needs the model's expectations, that is
:math:`Z`.  Each principle here replaces the likelihood by an objective
that :math:`Z` cancels from (or that learns :math:`\log Z` as one more
number), and whose optimum, when the model family holds the data's
distribution, is still the true parameters (a *consistent* estimator).
Every class has

``value(model, data)``
    The objective, written so that it is **maximised** (a principle that
    is usually minimised, such as ratio matching, returns the negative).
``gradient(model, data, *, rng)``
    Its gradient with respect to every parameter of the model, in the
    ascent direction, as a :class:`~rbm.model.Gradient`: an estimator that
    :func:`rbm.training.train` accepts as it is.

**Principles of neighbouring states** (a discrete visible layer: Binary,
Spin or Potts units).  Let :math:`y = v^{(i \leftarrow a)}` be the state
:math:`v` with unit :math:`i` set to another value :math:`a` (for two-state
units: bit :math:`i` flipped) and
:math:`d_{ia}(v) = F(y) - F(v) = \log p(v) - \log p(y)`; :math:`Z` cancels
from every :math:`d`.  Per data row,

* :class:`PseudoLikelihood` (Besag 1975):
  :math:`\sum_i \log p(v_i \mid v_{-i}) = -\sum_i \log\big(1 + \sum_{a} e^{-d_{ia}}\big)`;
* :class:`RatioMatching` (Hyvärinen 2007): :math:`-\sum_{i,a} g\big(p(v)/p(y)\big)^2`
  with :math:`g(u) = 1/(1+u)`, that is :math:`-\sum_{i,a}\sigma(-d_{ia})^2`;
* :class:`MinimumProbabilityFlow` (Sohl-Dickstein, Battaglino and DeWeese 2011):
  :math:`-\sum_{i,a} e^{-d_{ia}/2}`, the initial probability flow out of the
  data under the single-unit-change connectivity (the sum runs over every
  neighbour, data states included; see the class).

Each is a function :math:`\phi(d)` of the differences, so with
:math:`\nabla(-F)` the gradient of the negative free energy (the per-row
statistics of :mod:`rbm.exact`, :func:`free_energy_gradient`),

.. math::
    \nabla_\theta \phi = \sum_{i,a} \frac{\partial\phi}{\partial d_{ia}}
    \big(\nabla(-F)(x) - \nabla(-F)(y)\big),

one weighted sum of :math:`1 + n_\text{visible}(q-1)` rows per data row.

**Noise-contrastive estimation** (Gutmann and Hyvärinen 2010, 2012),
:class:`NoiseContrastive`: any visible layer; :math:`\log Z` is an extra
parameter, carried as the estimator's attribute ``log_z``.

**Score matching** (Hyvärinen 2005) and **denoising score matching**
(Vincent 2011), :class:`ScoreMatching` and :class:`DenoisingScoreMatching`:
Gaussian visible units (:class:`rbm.layers.Gaussian`) and a two-state hidden
layer (Binary or Spin); they match :math:`\psi = \nabla_v \log p(v) = -\nabla_v F`,
from which :math:`Z` is absent.

A model or data that a principle does not support is refused with a
ValueError naming it.
"""

import numpy as np

from rbm._kernels import row_statistics
from rbm._validation import (
    as_float_array,
    check_positive_float,
    check_positive_int,
    check_rng,
)
from rbm.layers import Binary, Gaussian, Layer, Potts, Spin
from rbm.model import Gradient, check_model, parameter_names
from rbm.special import logsumexp, sigmoid, softplus

__all__ = ["free_energy_gradient", "single_unit_neighbours", "neighbour_differences",
           "neighbour_gradient", "PseudoLikelihood",
           "RatioMatching", "MinimumProbabilityFlow", "NoiseContrastive", "fit_noise_layer",
           "ScoreMatching", "DenoisingScoreMatching", "fit"]


# -- shared pieces --------------------------------------------------------------------

def _rows(model, data, name="data"):
    """The data as checked float rows of the model's visible layer."""
    return model.visible.check_states(data, name, allow_1d=False)[0]


def _weights(weights, n, name="weights"):
    """Row weights summing to one: ``1/n`` each by default."""
    if weights is None:
        return np.full(n, 1.0 / n)
    w = as_float_array(weights, name)
    if w.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), one per row, got {w.shape}")
    if not (np.isfinite(w).all() and (w >= 0).all() and w.sum() > 0):
        raise ValueError(f"{name} must be finite, >= 0 and not all zero")
    return w / w.sum()


def _finite_float(value, name):
    """A finite real number, as a float."""
    arr = as_float_array(value, name)
    if arr.ndim != 0 or not np.isfinite(arr):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(arr)


def free_energy_gradient(model, states, weights):
    r""":math:`\sum_n w_n \nabla_\theta(-F(v_n))`: the weighted gradient of the negative free energy.

    Per row, :math:`\nabla_\theta(-F(v)) = \langle -\partial E/\partial\theta\rangle_{p(h\mid v)}`,
    the data statistics of :func:`rbm.exact.data_statistics` (for the binary
    model :math:`v\,\sigma(c + W^\top v)^\top`, :math:`v`, :math:`\sigma(c + W^\top v)`).
    Every principle of this module is a function of free energies, and its
    gradient is this sum with the weights its chain rule gives.

    Parameters
    ----------
    model : RBM
    states : array_like of shape (n_rows, n_visible)
        States of the visible layer.
    weights : array_like of shape (n_rows,)
        Any real numbers (negative ones included).

    Returns
    -------
    Gradient
        One field per parameter of the model.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.principles import free_energy_gradient
    >>> from rbm import RBM, exact
    >>> model = RBM.random(3, 2, scale=1.0, rng=0)
    >>> v = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    >>> g = free_energy_gradient(model, v, [0.5, 0.5])
    >>> bool(np.allclose(g.W, exact.data_statistics(model, v).W))
    True
    """
    check_model(model)
    x = _rows(model, states, "states")
    w = as_float_array(weights, "weights")
    if w.shape != (x.shape[0],):
        raise ValueError(f"weights must have shape ({x.shape[0]},), got {w.shape}")
    return Gradient.from_fields(row_statistics(model, x, weights=w, accurate=True))


def single_unit_neighbours(layer, v):
    r"""Every state that differs from a row of `v` in exactly one unit.

    For each row, unit :math:`i` and each of the :math:`q - 1` other values
    :math:`a` of that unit (in the order of ``layer.values`` after the
    current one, cyclically), the state :math:`v^{(i \leftarrow a)}`.

    Parameters
    ----------
    layer : rbm.layers.Layer
        A discrete layer (Binary, Spin, Potts).
    v : ndarray of shape (n_samples, n_units)
        Checked states of `layer`.

    Returns
    -------
    ndarray of shape (n_samples, n_units, q - 1, n_units)
        Entry ``[n, i, k]`` is row ``n`` with unit ``i`` changed.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.principles import single_unit_neighbours
    >>> from rbm.layers import Binary
    >>> single_unit_neighbours(Binary([0.0, 0.0]), np.array([[1.0, 0.0]]))[0, :, 0].tolist()
    [[0.0, 0.0], [1.0, 1.0]]
    """
    if not isinstance(layer, Layer) or not layer.discrete:
        raise ValueError(f"single_unit_neighbours needs a discrete layer, got {layer!r}")
    values = layer.values
    q = values.size
    n, m = v.shape
    index = np.searchsorted(values, v).astype(np.int64)           # (n, m)
    shift = np.arange(1, q)                                       # the other q - 1 values
    new = values[(index[:, :, None] + shift) % q]                 # (n, m, q - 1)
    out = np.broadcast_to(v[:, None, None, :], (n, m, q - 1, m)).copy()
    units = np.arange(m)
    out[:, units, :, units] = np.moveaxis(new, 1, 0)
    return out


def neighbour_differences(model, x):
    r"""Free-energy differences to every single-unit neighbour, by rank-one updates.

    Changing unit :math:`i` of :math:`v` changes its statistic by
    :math:`\Delta s_i` at that unit only, so the hidden input of the neighbour is
    :math:`I(v) + \Delta s_i W_i` (a rank-one update, :math:`O(n_h)` per neighbour) and
    :math:`d_{ia} = F(y) - F(v) = -b_i\cdot\Delta s_i - A_h(I(v) + \Delta s_i W_i) + A_h(I(v))`
    for a discrete visible layer whose energy is :math:`-b\cdot s(v)` (Binary, Spin,
    Potts).  Per data row this costs :math:`O(n_v (q-1) n_h)`, the size of ``W``,
    instead of the :math:`O(n_v^2 (q-1) n_h)` of forming every neighbour and
    multiplying it by ``W``.

    Parameters
    ----------
    model : RBM
        With a discrete visible layer whose only parameter is ``bias``.
    x : ndarray of shape (n_samples, n_visible)
        Checked states of the visible layer.

    Returns
    -------
    d : ndarray of shape (n_samples, n_visible, q - 1)
        :math:`F(v^{(i\leftarrow a)}) - F(v)`, neighbours in the order of
        :func:`single_unit_neighbours`.
    parts : dict
        ``S`` (n, n_visible, c) the statistic of the rows, ``dS`` (n, n_visible, q - 1, c)
        its change, ``I_x`` (n, H) and ``I_y`` (n, n_visible, q - 1, H) the hidden inputs
        (flattened, ``c`` and ``H`` the sizes of one unit's statistic and of the hidden
        layer): what :func:`neighbour_gradient` needs.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm import RBM
    >>> from rbm.principles import neighbour_differences, single_unit_neighbours
    >>> model = RBM.random(3, 2, scale=1.0, rng=0)
    >>> x = np.array([[1.0, 0.0, 1.0]])
    >>> d, _ = neighbour_differences(model, x)
    >>> y = single_unit_neighbours(model.visible, x).reshape(-1, 3)
    >>> bool(np.allclose(d.ravel(), model.free_energy(y) - model.free_energy(x)[0]))
    True
    """
    visible, hidden = model.visible, model.hidden
    if set(visible.parameters()) != {"bias"}:
        raise ValueError(f"neighbour_differences needs a discrete visible layer whose only "
                         f"parameter is its bias, got {visible!r}")
    values = visible.values
    q = values.size
    n, m = x.shape
    index = np.searchsorted(values, x).astype(np.int64)
    new = values[(index[:, :, None] + np.arange(1, q)) % q]               # (n, m, K)
    S = visible.statistic(x).reshape(n, m, -1)                             # (n, m, c)
    c = S.shape[2]
    S_new = visible.statistic(np.moveaxis(new, 2, 1).reshape(n * (q - 1), m))
    dS = np.moveaxis(S_new.reshape(n, q - 1, m, c), 1, 2) - S[:, :, None, :]  # (n, m, K, c)
    W3 = model.W.reshape(m, c, -1)                                         # (m, c, H)
    I_x = model.input_hidden(x).reshape(n, -1)                             # (n, H)
    if c == 1:
        I_y = I_x[:, None, None, :] + dS * W3[None, :, 0:1, :]
    else:
        shift = np.matmul(np.moveaxis(dS, 1, 0).reshape(m, n * (q - 1), c), W3)
        I_y = I_x[:, None, None, :] + np.moveaxis(shift.reshape(m, n, q - 1, -1), 0, 1)
    hshape = hidden.shape
    A_x = hidden.log_normaliser(I_x.reshape((n,) + hshape))
    A_y = hidden.log_normaliser(I_y.reshape((-1,) + hshape)).reshape(n, m, q - 1)
    dE = -(dS * visible.bias.reshape(1, m, 1, c)).sum(axis=3)
    d = dE - A_y + A_x[:, None, None]
    return d, {"S": S, "dS": dS, "I_x": I_x, "I_y": I_y}


def neighbour_gradient(model, parts, slope):
    r""":math:`\sum_n\sum_{i,a} s_{nia}\big(\nabla(-F)(v_n) - \nabla(-F)(v_n^{(i\leftarrow a)})\big)`, by rank-one updates.

    The gradient of every principle of neighbouring states, for the slopes
    :math:`s = w_n\,\partial\phi/\partial d`.  The neighbour's statistic is the row's
    plus :math:`\Delta s_i` at unit :math:`i`, so the weight gradient is
    :math:`\sum_n s(v_n) \otimes (\dots) + \sum_{n,a} \Delta s_{i}\otimes(\dots)` row by
    row of ``W``: :math:`O(n_v (q-1) n_h)` per data row, as
    :func:`neighbour_differences`.  Equal, to rounding, to
    :func:`free_energy_gradient` of the rows and all their neighbours.

    Parameters
    ----------
    model : RBM
    parts : dict
        The second output of :func:`neighbour_differences`.
    slope : ndarray of shape (n_samples, n_visible, n_values)
        One slope per neighbour (``n_values``: the q - 1 other values of a unit).

    Returns
    -------
    Gradient

    Examples
    --------
    >>> import numpy as np
    >>> from rbm import RBM
    >>> from rbm.principles import (free_energy_gradient, neighbour_differences,
    ...                             neighbour_gradient, single_unit_neighbours)
    >>> model = RBM.random(3, 2, scale=1.0, rng=0)
    >>> x = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    >>> d, parts = neighbour_differences(model, x)
    >>> slope = np.full(d.shape, 0.5)
    >>> y = single_unit_neighbours(model.visible, x).reshape(-1, 3)
    >>> rows = free_energy_gradient(model, np.concatenate([x, y]),
    ...                             np.concatenate([slope.sum(axis=(1, 2)), -slope.ravel()]))
    >>> bool(np.allclose(neighbour_gradient(model, parts, slope).flat(), rows.flat()))
    True
    """
    visible, hidden = model.visible, model.hidden
    S, dS, I_x, I_y = parts["S"], parts["dS"], parts["I_x"], parts["I_y"]
    n, m, k, c = dS.shape
    hshape = hidden.shape
    c_x, c_y = slope.sum(axis=(1, 2)), -slope
    H_x, g_x = hidden.conditional_statistics(I_x.reshape((n,) + hshape))
    H_x = H_x.reshape(n, -1)
    H_y, g_y = hidden.conditional_statistics(I_y.reshape((-1,) + hshape))
    G_y = c_y[..., None] * H_y.reshape(n, m, k, -1)
    W = S.reshape(n, m * c).T @ (c_x[:, None] * H_x + G_y.sum(axis=(1, 2)))
    W = W.reshape(m, c, -1) + np.matmul(np.moveaxis(dS, 1, 0).reshape(m, n * k, c)
                                        .transpose(0, 2, 1),
                                        np.moveaxis(G_y, 1, 0).reshape(m, n * k, -1))
    bias = (c_x + c_y.sum(axis=(1, 2))) @ S.reshape(n, -1) \
        + (c_y[..., None] * dS).sum(axis=(0, 2)).ravel()
    fields = {"W": W.reshape(model.W.shape),
              parameter_names("visible", visible)["bias"]: bias.reshape(visible.shape)}
    names = parameter_names("hidden", hidden)
    for key in g_x:
        fields[names[key]] = np.tensordot(c_x, g_x[key], axes=1) \
            + np.tensordot(c_y.ravel(), g_y[key], axes=1)
    return Gradient.from_fields({key: fields[key] for key in model.parameters()})


class _NeighbourPrinciple:
    """A principle that is a sum over data rows of :math:`\\phi(d)`, `d` the free-energy
    differences to every single-unit neighbour; subclasses give ``_phi``."""

    name = "principle"

    def __repr__(self):
        return f"{type(self).__name__}()"

    def _differences(self, model, data):
        check_model(model, discrete=type(self).__name__)
        x = _rows(model, data)
        d, parts = neighbour_differences(model, x)
        return x, parts, d

    def value(self, model, data, *, weights=None):
        """The objective, to be maximised: the weighted mean over rows (see the class).

        Parameters
        ----------
        model : RBM
            With a discrete visible layer (Binary, Spin, Potts).
        data : array_like of shape (n_samples, n_visible)
            States of the visible layer.
        weights : array_like of shape (n_samples,), optional
            Row weights (normalised to sum to one); equal by default.

        Returns
        -------
        float
        """
        x, _, d = self._differences(model, data)
        w = _weights(weights, x.shape[0])
        return float(w @ self._phi(d)[0])

    def gradient(self, model, data, *, rng=None, weights=None, method="rank-one"):
        r"""The gradient of :meth:`value` in the ascent direction (`rng` is not used).

        :math:`\sum_n w_n \sum_{i,a} \partial_{d}\phi\,(\nabla(-F)(v_n) - \nabla(-F)(y_{nia}))`.

        Parameters
        ----------
        model, data, weights
            As in :meth:`value`.
        rng : numpy.random.Generator, int or None
            Accepted so that :func:`rbm.training.train` can pass it.
        method : str, default "rank-one"
            ``"rank-one"`` or ``"rows"``. ``"rank-one"``: :func:`neighbour_gradient`, :math:`O(n_v (q-1) n_h)` per data
            row; ``"rows"``: every neighbour formed and passed to
            :func:`free_energy_gradient` with the data rows, :math:`O(n_v^2 (q-1) n_h)`
            per row (the same numbers to rounding; a reference).

        Returns
        -------
        Gradient
        """
        if method not in ("rank-one", "rows"):
            raise ValueError(f"method must be 'rank-one' or 'rows', got {method!r}")
        x, parts, d = self._differences(model, data)
        w = _weights(weights, x.shape[0])
        slope = self._phi(d)[1] * w[:, None, None]                 # (n, m, q - 1)
        if method == "rank-one":
            return neighbour_gradient(model, parts, slope)
        y = single_unit_neighbours(model.visible, x)
        states = np.concatenate([x, y.reshape(-1, x.shape[1])])
        coeff = np.concatenate([slope.sum(axis=(1, 2)), -slope.ravel()])
        return Gradient.from_fields(row_statistics(model, states, weights=coeff, accurate=True))


class PseudoLikelihood(_NeighbourPrinciple):
    r"""Maximum pseudo-likelihood (Besag 1975) as a training principle.

    .. math::
        \operatorname{PL}(v) = \sum_i \log p(v_i \mid v_{-i})
        = -\sum_i \log\Big(1 + \sum_{a \ne v_i} e^{-d_{ia}}\Big),\qquad
        \frac{\partial \operatorname{PL}}{\partial d_{ia}} = p(v_i{=}a \mid v_{-i}),

    so the gradient is :math:`\sum_i\big(\nabla(-F)(v) - \mathbb E_{a \sim
    p(v_i \mid v_{-i})}\nabla(-F)(v^{(i\leftarrow a)})\big)`: the likelihood's
    data term minus a model term in which only unit :math:`i` is resampled.
    :meth:`value` equals :func:`rbm.pseudolikelihood.pseudo_log_likelihood`.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.principles import PseudoLikelihood
    >>> from rbm import RBM
    >>> from rbm.pseudolikelihood import pseudo_log_likelihood
    >>> model = RBM.random(4, 3, scale=1.0, rng=0)
    >>> data = np.array([[1, 0, 1, 1], [0, 1, 0, 0]])
    >>> bool(np.isclose(PseudoLikelihood().value(model, data),
    ...                 pseudo_log_likelihood(model, data)))
    True
    >>> PseudoLikelihood().gradient(model, data, rng=0).names
    ('W', 'b', 'c')
    """

    def _phi(self, d):
        z = np.concatenate([np.zeros(d.shape[:2] + (1,)), -d], axis=2)
        lse = logsumexp(z, axis=2)                               # (n, m)
        return -lse.sum(axis=1), np.exp(-d - lse[:, :, None])


class RatioMatching(_NeighbourPrinciple):
    r"""Ratio matching (Hyvärinen 2007): match :math:`p(v)/p(y)` for neighbouring states.

    Hyvärinen's objective for binary data, to be minimised, is
    :math:`J = \mathbb E_\text{data}\sum_i g\big(p(v)/p(\tilde v^{(i)})\big)^2`
    with :math:`g(u) = 1/(1+u)` and :math:`\tilde v^{(i)}` the state with bit
    :math:`i` flipped; :math:`g(e^{d}) = \sigma(-d)`.  For units of more
    than two values the sum runs over every other value of each unit, which
    keeps the argument that makes it consistent: the pairs
    :math:`(v, v^{(i\leftarrow a)})` are symmetric, and :math:`g(u) + g(1/u) = 1`.
    :meth:`value` returns :math:`-J` per row,

    .. math::
        -\sum_{i,a}\sigma(-d_{ia})^2,\qquad
        \frac{\partial}{\partial d_{ia}} = 2\,\sigma(-d_{ia})^2\,\sigma(d_{ia}).

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.principles import RatioMatching
    >>> from rbm import RBM
    >>> model = RBM(np.zeros((2, 1)), [0.0, 0.0], [0.0])  # every ratio is 1: g = 1/2
    >>> RatioMatching().value(model, [[1, 0]])
    -0.5
    """

    def _phi(self, d):
        s = sigmoid(-d)
        return -(s * s).sum(axis=(1, 2)), 2.0 * s * s * sigmoid(d)


class MinimumProbabilityFlow(_NeighbourPrinciple):
    r"""Minimum probability flow (Sohl-Dickstein, Battaglino and DeWeese 2011), single-unit connectivity.

    The data distribution is let flow under a master equation whose rates
    between neighbouring states, :math:`\Gamma_{yv} = e^{(F(v) - F(y))/2}`,
    have the model as their stationary distribution; the objective is the
    initial rate at which probability flows out of the data,

    .. math::
        K = \mathbb E_\text{data}\sum_{i,a} e^{-d_{ia}/2},\qquad
        \frac{\partial(-K)}{\partial d_{ia}} = \tfrac12 e^{-d_{ia}/2},

    to be minimised (:meth:`value` returns :math:`-K`).  Sohl-Dickstein et al.
    sum only over neighbours that are not themselves data states; the sum
    here runs over every neighbour, so that the objective is an expectation
    over the data distribution (needed when the data repeat states, and for a
    population version); it is stationary at the model that equals the data
    distribution because :math:`p(v)e^{(F(v)-F(y))/2} = e^{-(F(v)+F(y))/2}/Z`
    is symmetric in :math:`v \leftrightarrow y`.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.principles import MinimumProbabilityFlow
    >>> from rbm import RBM
    >>> model = RBM(np.zeros((2, 1)), [0.0, 0.0], [0.0])  # every d is 0: flow 1 per unit
    >>> MinimumProbabilityFlow().value(model, [[1, 0]])
    -2.0
    """

    def _phi(self, d):
        e = np.exp(-0.5 * d)
        return -e.sum(axis=(1, 2)), 0.5 * e


# -- noise-contrastive estimation ------------------------------------------------------

def fit_noise_layer(layer, data, *, pseudo_count=1.0):
    r"""A layer of independent units fitted to `data`: the noise distribution of NCE.

    A layer with zero input is a product of independent units,
    :math:`p_n(v) = e^{-E(v)}/e^{A(0)}`; its parameters are set to the
    data's per-unit frequencies (smoothed by `pseudo_count` per value, as
    :func:`rbm.ais.base_rate_biases`) or, for Gaussian units, to the data's
    means and standard deviations.  For Binary units this is the base-rate
    model of annealed importance sampling.

    Parameters
    ----------
    layer : Binary, Spin, Potts or Gaussian
        The model's visible layer (its type and size are used).
    data : array_like of shape (n_samples, n_units)
    pseudo_count : float, default 1.0

    Returns
    -------
    Layer
        Of the type of `layer`.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.layers import Binary
    >>> from rbm.principles import fit_noise_layer
    >>> noise = fit_noise_layer(Binary([0.0, 0.0]), [[1, 0], [1, 0], [1, 1]])
    >>> noise.bias.round(4).tolist()  # p = 4/5, 2/5
    [1.3863, -0.4055]
    """
    if not isinstance(layer, (Binary, Spin, Potts, Gaussian)):
        raise ValueError(f"fit_noise_layer fits Binary, Spin, Potts or Gaussian layers, got "
                         f"{layer!r}; give NoiseContrastive a noise layer of your own")
    x, _ = layer.check_states(data, "data", allow_1d=False)
    pseudo_count = check_positive_float(pseudo_count, "pseudo_count")
    if isinstance(layer, Gaussian):
        sd = np.maximum(x.std(axis=0), 1e-3 * max(float(x.std()), 1e-12))
        return Gaussian(x.mean(axis=0), sigma=sd)
    if isinstance(layer, Potts):
        counts = (x[:, :, None] == np.arange(layer.q)).sum(axis=0) + pseudo_count
        return Potts(np.log(counts / counts.sum(axis=1, keepdims=True)))
    low, high = layer.values
    p = ((x == high).sum(axis=0) + pseudo_count) / (x.shape[0] + 2 * pseudo_count)
    logit = np.log(p) - np.log1p(-p)
    return type(layer)(logit / (high - low))


class NoiseContrastive:
    r"""Noise-contrastive estimation (Gutmann and Hyvärinen 2010, 2012), with :math:`\log Z` learned.

    Data :math:`v_n` (weights :math:`w_n`) are told apart from noise
    :math:`y_m \sim p_n` (weights :math:`u_m`, :math:`\nu` noise draws per data
    row) by logistic regression on the log-ratio

    .. math::
        \begin{aligned}
        G(v) &= -F(v) - \zeta - \log\nu - \log p_n(v),\\
        J &= \sum_n w_n \log\sigma(G(v_n)) + \nu \sum_m u_m \log\sigma(-G(y_m)),
        \end{aligned}

    with :math:`\zeta` a free parameter in place of :math:`\log Z`.  The model
    with :math:`\zeta` is unnormalised, and :math:`J` is maximised where
    :math:`-F - \zeta` is the data's log-density (if the family holds it), so
    :math:`\zeta \to \log Z`.  The gradients are

    .. math::
        \begin{aligned}
        \nabla_\theta J &= \sum_n w_n \sigma(-G(v_n))\nabla(-F)(v_n)
          - \nu\sum_m u_m \sigma(G(y_m))\nabla(-F)(y_m),\\
        \frac{\partial J}{\partial \zeta} &= -\sum_n w_n\sigma(-G(v_n))
          + \nu\sum_m u_m\sigma(G(y_m)).
        \end{aligned}

    **How ζ is carried.**  :func:`rbm.training.train` updates the model's
    parameters only, so :math:`\zeta` is the attribute ``log_z`` of the
    estimator: every call of :meth:`gradient` computes both gradients at the
    same point, returns the model's and adds ``log_z_learning_rate`` times
    :math:`\partial J/\partial \zeta` to ``log_z`` (plain ascent, no momentum).
    On the first call ``log_z`` (if ``None``) is set to the importance
    sampling estimate :math:`\log\frac1M\sum_m e^{-F(y_m)}/p_n(y_m)` on that
    call's noise, and ``noise`` (if ``None``) to :func:`fit_noise_layer`
    of that call's data.

    Parameters
    ----------
    noise : Layer, optional
        The noise distribution: a layer of the visible layer's type and size,
        taken with zero input (a product of independent units).  By default
        :func:`fit_noise_layer` of the data of the first call: in minibatch
        training that is the first minibatch only, so to have the base rates of
        the whole data pass ``fit_noise_layer(model.visible, data)``.
    noise_ratio : float, default 1.0
        :math:`\nu`: noise draws per data row (rounded up to a whole number
        of draws).
    log_z : float, optional
        The starting value of :math:`\zeta`.
    log_z_learning_rate : float, default 0.1

    Attributes
    ----------
    log_z : float or None
    noise : Layer or None

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.principles import NoiseContrastive
    >>> from rbm import RBM
    >>> from rbm.layers import Binary
    >>> model = RBM(np.zeros((2, 1)), [0.0, 0.0], [0.0])   # log Z = 3 log 2
    >>> nce = NoiseContrastive(Binary([0.0, 0.0]))          # uniform noise
    >>> noise = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    >>> data = noise                                        # the model's own distribution
    >>> g, dc = nce.objective_gradient(model, data, noise, log_z=3 * np.log(2))
    >>> round(dc, 12), round(g.max_abs(), 12)               # stationary at the truth
    (0.0, 0.0)
    """

    def __init__(self, noise=None, *, noise_ratio=1.0, log_z=None, log_z_learning_rate=0.1):
        if noise is not None and not isinstance(noise, Layer):
            raise TypeError(f"noise must be a layer (rbm.layers), got {type(noise).__name__}")
        self.noise = None if noise is None else noise.copy().check("noise")
        self.noise_ratio = check_positive_float(noise_ratio, "noise_ratio")
        self.log_z = None if log_z is None else _finite_float(log_z, "log_z")
        self.log_z_learning_rate = check_positive_float(log_z_learning_rate,
                                                        "log_z_learning_rate", allow_zero=True)

    def __repr__(self):
        return (f"NoiseContrastive(noise={self.noise!r}, noise_ratio={self.noise_ratio}, "
                f"log_z={self.log_z})")

    def _check(self, model, data):
        check_model(model)
        x = _rows(model, data)
        if self.noise is None:
            self.noise = fit_noise_layer(model.visible, x)
        if type(self.noise) is not type(model.visible) or self.noise.shape != model.visible.shape:
            raise ValueError(f"noise must be a layer like model.visible ({model.visible!r}), "
                             f"got {self.noise!r}")
        return x

    def log_noise(self, y):
        r""":math:`\log p_n(y)` of checked rows `y`: :math:`-E(y) - A(0)` of the noise layer."""
        zero = np.zeros((1,) + self.noise.shape)
        return -self.noise.energy(y) - self.noise.log_normaliser(zero)[0]

    def sample_noise(self, n, *, rng):
        """`n` independent draws of the noise layer with zero input, shape (n, n_visible)."""
        return self.noise.sample(np.zeros((n,) + self.noise.shape), rng=check_rng(rng))

    def _logits(self, model, x, y, log_z):
        shift = log_z + np.log(self.noise_ratio)
        g_x = -model.free_energy(x) - shift - self.log_noise(x)
        g_y = -model.free_energy(y) - shift - self.log_noise(y)
        return g_x, g_y

    def _prepare(self, model, data, noise_samples, log_z, weights, noise_weights):
        x = self._check(model, data)
        y = self.noise.check_states(noise_samples, "noise_samples", allow_1d=False)[0]
        c = self.log_z if log_z is None else _finite_float(log_z, "log_z")
        if c is None:
            raise ValueError("log_z is not set: give log_z, or call gradient first")
        return (x, y, c, _weights(weights, x.shape[0]),
                _weights(noise_weights, y.shape[0], "noise_weights"))

    def value(self, model, data, noise_samples, *, log_z=None, weights=None,
              noise_weights=None):
        r"""The NCE objective :math:`J` (maximised) for given noise draws.

        Parameters
        ----------
        model : RBM
        data : array_like of shape (n_samples, n_visible)
        noise_samples : array_like of shape (n_noise, n_visible)
            Draws of the noise distribution (:meth:`sample_noise`).
        log_z : float, optional
            :math:`c`; the attribute ``log_z`` by default.
        weights, noise_weights : array_like, optional
            Row weights of the data and of the noise (each normalised to sum to one).

        Returns
        -------
        float
        """
        x, y, c, w, u = self._prepare(model, data, noise_samples, log_z, weights, noise_weights)
        g_x, g_y = self._logits(model, x, y, c)
        return float(-(w @ softplus(-g_x)) - self.noise_ratio * (u @ softplus(g_y)))

    def objective_gradient(self, model, data, noise_samples, *, log_z=None, weights=None,
                           noise_weights=None):
        r"""The gradients of :meth:`value`: the model's (a Gradient) and :math:`\partial J/\partial c`.

        Parameters
        ----------
        model, data, noise_samples, log_z, weights, noise_weights
            As in :meth:`value`.

        Returns
        -------
        (Gradient, float)
        """
        x, y, c, w, u = self._prepare(model, data, noise_samples, log_z, weights, noise_weights)
        g_x, g_y = self._logits(model, x, y, c)
        a = w * sigmoid(-g_x)
        b = self.noise_ratio * u * sigmoid(g_y)
        fields = row_statistics(model, np.concatenate([x, y]), weights=np.concatenate([a, -b]),
                                accurate=True)
        return Gradient.from_fields(fields), float(b.sum() - a.sum())

    def gradient(self, model, data, *, rng):
        r"""Draw :math:`\lceil\nu N\rceil` noise rows, return the model's gradient, update ``log_z``.

        Parameters
        ----------
        model : RBM
        data : array_like of shape (n_samples, n_visible)
        rng : numpy.random.Generator or int
            Draws the noise.

        Returns
        -------
        Gradient
        """
        x = self._check(model, data)
        rng = check_rng(rng)
        y = self.sample_noise(int(np.ceil(self.noise_ratio * x.shape[0])), rng=rng)
        if self.log_z is None:
            ratio = -model.free_energy(y) - self.log_noise(y)
            self.log_z = float(logsumexp(ratio) - np.log(y.shape[0]))
        g, dc = self.objective_gradient(model, x, y)
        self.log_z += self.log_z_learning_rate * dc
        return g


# -- score matching -----------------------------------------------------------------

def _check_gaussian_model(model, who):
    check_model(model)
    if not isinstance(model.visible, Gaussian):
        raise ValueError(f"{who} needs Gaussian visible units (rbm.layers.Gaussian); "
                         f"model.visible is {model.visible!r}")
    if model.hidden.bits is None:
        raise ValueError(f"{who} needs a two-state hidden layer (Binary or Spin); "
                         f"model.hidden is {model.hidden!r}")
    return model


def _score_parts(model, x):
    r"""The score :math:`\psi = -\nabla_v F` and the pieces of its derivatives, per row.

    For Gaussian visible units (:math:`u = 1/\sigma`, :math:`r = (v - b)u^2`) and a
    two-state hidden layer of values ``lo, hi`` (:math:`\Delta = hi - lo`) with
    field :math:`a = c + (xu)^\top W`, the statistic's cumulants given :math:`a` are
    :math:`\kappa_1 = lo + \Delta p`, :math:`\kappa_2 = \Delta^2 p(1-p)` and
    :math:`\kappa_3 = \Delta^3 p(1-p)(1-2p)`, :math:`p = \sigma(\Delta a)`.
    """
    u = np.exp(-model.visible.log_sigma)
    r = (x - model.visible.bias) * u * u
    low, high = model.hidden.values
    delta = high - low
    a = model.hidden.bias + (x * u) @ model.W
    p = sigmoid(delta * a)
    k1 = low + delta * p
    k2 = delta ** 2 * p * (1.0 - p)
    k3 = delta ** 3 * p * (1.0 - p) * (1.0 - 2.0 * p)
    wk1 = k1 @ model.W.T                                            # (n, n_visible)
    psi = -r + u * wk1
    return u, r, k1, k2, k3, wk1, psi


def _score_vjp(model, x, parts, e):
    r"""Per-parameter :math:`\sum_{n,i} e_{ni}\,\partial\psi_i(v_n)/\partial\theta`, as arrays."""
    u, r, k1, k2, _, wk1, _ = parts
    W = model.W
    g_a = ((e * u) @ W) * k2                                        # dJ/da_j
    return {"W": (e * u).T @ k1 + (x * u).T @ g_a,
            "b": (e * u * u).sum(axis=0),
            "log_sigma": (e * (2.0 * r - u * wk1) - x * u * (g_a @ W.T)).sum(axis=0),
            "c": g_a.sum(axis=0)}


def _as_gradient(model, fields, scale):
    names_v = parameter_names("visible", model.visible)
    names_h = parameter_names("hidden", model.hidden)
    out = {"W": scale * fields["W"], names_v["bias"]: scale * fields["b"],
           names_v["log_sigma"]: scale * fields["log_sigma"], names_h["bias"]: scale * fields["c"]}
    return Gradient.from_fields({k: out[k] for k in model.parameters()})


class ScoreMatching:
    r"""Score matching (Hyvärinen 2005) for Gaussian visible units.

    With the model's score :math:`\psi(v) = \nabla_v\log p(v) = -\nabla_v F(v)`,
    in which :math:`Z` does not appear, Hyvärinen's objective (to be
    minimised; equal, up to a constant, to the expected squared distance between the
    model's and the data's scores) is

    .. math::
        J = \mathbb E_\text{data}\sum_i\Big(\tfrac12\psi_i(v)^2 + \partial_i\psi_i(v)\Big).

    For Gaussian visible units and a two-state hidden layer (notation of the
    module's ``_score_parts``: :math:`u = 1/\sigma`, :math:`r = (v-b)u^2`,
    :math:`\kappa_k` the cumulants of the hidden statistic given its field
    :math:`a = c + (xu)^\top W`),

    .. math::
        \psi_i = -r_i + u_i\sum_j W_{ij}\kappa_1(a_j),\qquad
        \partial_i\psi_i = -u_i^2 + u_i^2\sum_j W_{ij}^2\kappa_2(a_j),

    and every parameter's derivative follows by the chain rule, with
    :math:`\kappa_k' = \kappa_{k+1}` (the code of :meth:`gradient`).
    :meth:`value` returns :math:`-J`.  The parameters are ``W``, the visible
    bias ``b`` and ``log_sigma_v``, and the hidden bias ``c``.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.principles import ScoreMatching
    >>> from rbm import RBM
    >>> from rbm.layers import Gaussian, Binary
    >>> model = RBM(np.zeros((1, 1)), Gaussian([0.0]), Binary([0.0]))  # a standard normal
    >>> ScoreMatching().value(model, [[2.0]])  # -(v**2 / 2 - 1)
    -1.0
    """

    def __repr__(self):
        return "ScoreMatching()"

    def _terms(self, model, data):
        _check_gaussian_model(model, "ScoreMatching")
        x = _rows(model, data)
        parts = _score_parts(model, x)
        u, _, _, k2, _, _, psi = parts
        div = -u * u + u * u * (k2 @ (model.W ** 2).T)
        return x, parts, psi, div

    def value(self, model, data, *, weights=None):
        r""":math:`-J`, the weighted mean over rows of :math:`-\sum_i(\psi_i^2/2 + \partial_i\psi_i)`.

        Parameters
        ----------
        model : RBM
            Gaussian visible units, Binary or Spin hidden units.
        data : array_like of shape (n_samples, n_visible)
        weights : array_like of shape (n_samples,), optional

        Returns
        -------
        float
        """
        x, _, psi, div = self._terms(model, data)
        w = _weights(weights, x.shape[0])
        return float(-(w @ (0.5 * psi * psi + div).sum(axis=1)))

    def gradient(self, model, data, *, rng=None, weights=None):
        """The gradient of :meth:`value` in the ascent direction (`rng` is not used).

        Parameters
        ----------
        model, data, weights
            As in :meth:`value`.
        rng : numpy.random.Generator, int or None

        Returns
        -------
        Gradient
        """
        x, parts, psi, div = self._terms(model, data)
        w = _weights(weights, x.shape[0])[:, None]
        fields = _score_vjp(model, x, parts, w * psi)
        u, _, _, k2, k3, _, _ = parts
        W = model.W
        g_a = k3 * ((w * u * u) @ (W * W))                           # d(sum div)/da_j
        fields["W"] += 2.0 * (w * u * u).T @ k2 * W + (x * u).T @ g_a
        fields["log_sigma"] += (-2.0 * w * div - x * u * (g_a @ W.T)).sum(axis=0)
        fields["c"] += g_a.sum(axis=0)
        return _as_gradient(model, fields, -1.0)


class DenoisingScoreMatching:
    r"""Denoising score matching (Vincent 2011) for Gaussian visible units.

    Each data row is corrupted, :math:`\tilde v = v + s\varepsilon` with
    :math:`\varepsilon \sim N(0, I)`, and the model's score at :math:`\tilde v`
    is regressed on the score of the corruption,
    :math:`\nabla_{\tilde v}\log q(\tilde v \mid v) = (v - \tilde v)/s^2 = -\varepsilon/s`:

    .. math::
        J_s = \mathbb E_{v,\varepsilon}\tfrac12\big\|\psi(v + s\varepsilon) + \varepsilon/s\big\|^2,

    which Vincent showed equals, up to a constant, score matching's :math:`J`
    on the smoothed density :math:`q_s = p_\text{data} * N(0, s^2 I)`: it is
    consistent for :math:`q_s`, not for :math:`p_\text{data}` (a bias that
    vanishes as :math:`s \to 0`), and needs no second derivative.  The
    gradient is :math:`\sum e_i\,\partial\psi_i/\partial\theta` with
    :math:`e = \psi(\tilde v) + \varepsilon/s` (the same chain rule as
    :class:`ScoreMatching`).  :meth:`value` returns :math:`-J_s`.

    Parameters
    ----------
    noise_std : float
        :math:`s > 0`.
    n_corruptions : int, default 1
        Draws of :math:`\varepsilon` per data row at each :meth:`gradient` call.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.principles import DenoisingScoreMatching
    >>> from rbm import RBM
    >>> from rbm.layers import Gaussian, Binary
    >>> model = RBM(np.zeros((1, 1)), Gaussian([0.0]), Binary([0.0]))
    >>> dsm = DenoisingScoreMatching(noise_std=0.5)
    >>> dsm.value(model, [[0.0]], [[1.0]])  # psi(0.5) = -0.5, eps/s = 2: -(1.5**2)/2
    -1.125
    """

    def __init__(self, noise_std, *, n_corruptions=1):
        self.noise_std = check_positive_float(noise_std, "noise_std")
        self.n_corruptions = check_positive_int(n_corruptions, "n_corruptions")

    def __repr__(self):
        return (f"DenoisingScoreMatching(noise_std={self.noise_std}, "
                f"n_corruptions={self.n_corruptions})")

    def _terms(self, model, data, eps):
        _check_gaussian_model(model, "DenoisingScoreMatching")
        x = _rows(model, data)
        e = as_float_array(eps, "eps")
        if e.shape != x.shape or not np.isfinite(e).all():
            raise ValueError(f"eps must be finite and have the shape of data, {x.shape}, got "
                             f"{e.shape}")
        noisy = x + self.noise_std * e
        parts = _score_parts(model, noisy)
        return noisy, parts, parts[-1] + e / self.noise_std

    def value(self, model, data, eps, *, weights=None):
        r""":math:`-J_s` for given standard-normal draws `eps` (one row per data row).

        Parameters
        ----------
        model : RBM
            Gaussian visible units, Binary or Spin hidden units.
        data : array_like of shape (n_samples, n_visible)
        eps : array_like of shape (n_samples, n_visible)
        weights : array_like of shape (n_samples,), optional

        Returns
        -------
        float
        """
        x, _, resid = self._terms(model, data, eps)
        w = _weights(weights, x.shape[0])
        return float(-(w @ (0.5 * resid * resid).sum(axis=1)))

    def objective_gradient(self, model, data, eps, *, weights=None):
        """The gradient of :meth:`value` for given draws `eps`, ascent direction.

        Returns
        -------
        Gradient
        """
        x, parts, resid = self._terms(model, data, eps)
        w = _weights(weights, x.shape[0])[:, None]
        return _as_gradient(model, _score_vjp(model, x, parts, w * resid), -1.0)

    def gradient(self, model, data, *, rng):
        """Draw ``n_corruptions`` corruptions per row and return :meth:`objective_gradient`.

        Parameters
        ----------
        model : RBM
        data : array_like of shape (n_samples, n_visible)
        rng : numpy.random.Generator or int

        Returns
        -------
        Gradient
        """
        _check_gaussian_model(model, "DenoisingScoreMatching")
        x = np.repeat(_rows(model, data), self.n_corruptions, axis=0)
        eps = check_rng(rng).standard_normal(x.shape)
        return self.objective_gradient(model, x, eps)


# -- full-batch fitting -----------------------------------------------------------------

def _flat(model):
    return np.concatenate([p.ravel() for p in model.parameters().values()])


def _set_flat(model, theta):
    start = 0
    for p in model.parameters().values():
        p[...] = theta[start:start + p.size].reshape(p.shape)
        start += p.size


def fit(model, data, principle, *, rng=None, max_iter=1000, gtol=1e-9):
    r"""Maximise a principle's objective on `data` by L-BFGS (full batch), from `model`.

    The estimate :math:`\hat\theta_N` of the principle on a sample of `N`
    rows: the local maximum of its objective that L-BFGS reaches from the
    starting model.  The random parts of an objective are drawn once, with
    `rng`, and held fixed: the noise of :class:`NoiseContrastive`
    (:math:`\lceil\nu N\rceil` draws; :math:`\log Z` is optimised jointly and
    stored in ``principle.log_z``) and the corruptions of
    :class:`DenoisingScoreMatching` (``n_corruptions`` per row).

    Parameters
    ----------
    model : RBM
        The starting point (not changed).
    data : array_like of shape (n_samples, n_visible)
    principle : object
        One of this module's principles: :class:`PseudoLikelihood`,
        :class:`RatioMatching`, :class:`MinimumProbabilityFlow`,
        :class:`NoiseContrastive`, :class:`ScoreMatching` or
        :class:`DenoisingScoreMatching`.
    rng : numpy.random.Generator or int, optional
        Needed by NoiseContrastive and DenoisingScoreMatching.
    max_iter : int, default 1000
    gtol : float, default 1e-9
        L-BFGS stops when the largest entry of the projected gradient is below it.

    Returns
    -------
    model : RBM
        The fitted copy.
    result : scipy.optimize.OptimizeResult
        ``fun`` is minus the objective at the estimate, ``nit`` the iterations.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.principles import PseudoLikelihood, fit
    >>> from rbm import RBM, exact
    >>> truth = RBM.random(4, 2, scale=1.0, bias_scale=0.5, rng=0)
    >>> data = exact.sample(truth, 2000, rng=1)
    >>> fitted, result = fit(truth, data, PseudoLikelihood())
    >>> kl = exact.kl_divergence(exact.visible_distribution(truth), fitted)
    >>> bool(result.success), bool(kl < 0.01)  # about 7 / N
    (True, True)
    """
    from scipy.optimize import minimize  # scipy is a dependency; imported where it is used

    kinds = (_NeighbourPrinciple, NoiseContrastive, ScoreMatching, DenoisingScoreMatching)
    if not isinstance(principle, kinds):
        raise TypeError(f"principle must be one of this module's principles, got "
                        f"{type(principle).__name__}")
    check_model(model)
    max_iter = check_positive_int(max_iter, "max_iter")
    gtol = check_positive_float(gtol, "gtol")
    work = model.copy()
    x = _rows(work, data)
    n_rows, w = x.shape[0], None
    if isinstance(principle, NoiseContrastive):
        principle._check(work, x)  # fits the noise to the data, if not given
    if work.visible.discrete:  # repeated rows: one row each, weighted by its count (exact)
        x, counts = np.unique(x, axis=0, return_counts=True)
        w = counts / counts.sum()
    if isinstance(principle, NoiseContrastive):
        rng = check_rng(rng)
        y = principle.sample_noise(int(np.ceil(principle.noise_ratio * n_rows)), rng=rng)
        u = None
        if work.visible.discrete:
            y, counts_y = np.unique(y, axis=0, return_counts=True)
            u = counts_y / counts_y.sum()
        if principle.log_z is None:
            ratio = -work.free_energy(y) - principle.log_noise(y)
            principle.log_z = float(logsumexp(ratio + (0.0 if u is None else np.log(u)))
                                    - (np.log(y.shape[0]) if u is None else 0.0))

        def objective(theta):
            _set_flat(work, theta[:-1])
            kw = dict(log_z=theta[-1], weights=w, noise_weights=u)
            g, dc = principle.objective_gradient(work, x, y, **kw)
            return -principle.value(work, x, y, **kw), -np.append(g.flat(), dc)

        start = np.append(_flat(work), principle.log_z)
    else:
        if isinstance(principle, DenoisingScoreMatching):
            x = np.repeat(x, principle.n_corruptions, axis=0)
            eps = check_rng(rng).standard_normal(x.shape)
            args = (x, eps)
            grad_of = principle.objective_gradient
        else:
            args = (x,)
            grad_of = principle.gradient

        def objective(theta):
            _set_flat(work, theta)
            return (-principle.value(work, *args, weights=w),
                    -grad_of(work, *args, weights=w).flat())

        start = _flat(work)
    result = minimize(objective, start, jac=True, method="L-BFGS-B",
                      options={"maxiter": max_iter, "gtol": gtol, "ftol": 1e-15})
    if isinstance(principle, NoiseContrastive):
        _set_flat(work, result.x[:-1])
        principle.log_z = float(result.x[-1])
    else:
        _set_flat(work, result.x)
    return work, result
