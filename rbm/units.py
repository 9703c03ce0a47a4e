r"""Other unit types: {0,1}, ±1 and Gaussian layers, and a two-layer model made of any two.

A layer of units :math:`x` has parameters :math:`\theta`, a self-energy
:math:`E_\theta(x)` and a statistic :math:`s_\theta(x)` through which it meets
the weights.  A model is two layers and a weight matrix ``W`` of shape
``(n_visible, n_hidden)``, with energy

.. math::
    E(v, h) = E_\text{v}(v) + E_\text{h}(h) - s_\text{v}(v)^\top W s_\text{h}(h)

(the exponential-family harmonium of Welling, Rosen-Zvi and Hinton, 2005).
Given an input :math:`u` from the other layer, every unit is independent, and
its log-normaliser (the cumulant of the exponential family)

.. math:: A_\theta(u) = \log \int e^{-E_\theta(x) + u^\top s_\theta(x)}\, dx

(a sum for discrete units) gives the free energy and the exact partition
function in closed form once one layer is enumerated.  The layers:

* :class:`Bernoulli`: :math:`E_\theta(x) = -b x`, :math:`s(x) = x \in \{0, 1\}`,
  :math:`A_\theta(u) = \operatorname{softplus}(b + u)`;
* :class:`Spin`: :math:`E_\theta(x) = -b x`, :math:`s(x) = x \in \{-1, 1\}`,
  :math:`A_\theta(u) = \log 2\cosh(b + u)`;
* :class:`Gaussian`: :math:`E_\theta(x) = (x - b)^2 / 2\sigma^2`,
  :math:`s(x) = x / \sigma`,
  :math:`A_\theta(u) = \log\sqrt{2\pi}\sigma + b u / \sigma + u^2 / 2`;

each per unit, summed over the units of the layer.

The Gaussian convention divides the coupling by :math:`\sigma` (not
:math:`\sigma^2`): then :math:`p(v_i \mid h) = \mathcal N(b_i + \sigma_i (Wh)_i,
\sigma_i^2)`, and a hidden unit sees :math:`\sum_i W_{ij} v_i / \sigma_i`, the
data in units of its own standard deviation.  The standard deviation is
stored and learned as :math:`\log\sigma` (``log_sigma``), which keeps it
positive.

**Exact values.**  :func:`log_partition`, :func:`log_likelihood` and
:func:`gradient` enumerate a discrete layer (the smaller, when both are):
when both layers are {0,1} or ±1 the model is mapped exactly onto a binary
:class:`~rbm.model.RBM` (:meth:`LayeredRBM.to_binary`) and summed by the
package's fast engine; with a Gaussian layer the Gaussian is integrated in
closed form and the discrete layer enumerated in blocks of bounded memory.
Enumerations beyond :math:`2^{30}` states are refused with a
:class:`ValueError`.
"""

import numpy as np

from rbm._enumeration import CHUNK_ELEMENTS, enumerate_layer
from rbm._enumeration import states as _binary_states
from rbm._validation import (
    as_float_array,
    as_real_array,
    check_array_size,
    check_enumeration_size,
    check_finite_parameter,
    check_parameter_values,
    check_positive_float,
    check_positive_int,
    check_rng,
)
from rbm.model import RBM
from rbm.special import logsumexp, sigmoid, softplus

__all__ = ["MIN_SIGMA", "Bernoulli", "Spin", "Gaussian", "LayeredRBM", "LayeredGradient",
           "log_partition", "log_prob", "log_likelihood", "gradient", "model_means",
           "hidden_marginal",
           "reconstruction_error", "gibbs_chain", "sample_model"]

_LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)
# Standard deviations are kept within this factor of one (log sigma within +-230): beyond it
# sigma**2 and its inverse leave the float64 range.
MIN_SIGMA = 1e-100


def _as_vector(x, name):
    """A 1-d, finite float64 parameter vector with at least one entry (copied)."""
    arr = as_float_array(x, name)
    if arr.ndim != 1 or arr.shape[0] < 1:
        raise ValueError(f"{name} must be a 1-d array with at least one entry, got shape "
                         f"{arr.shape}")
    return check_finite_parameter(arr, name, arr.shape)


class _Layer:
    """What every layer shares: a bias vector, its parameters by name, and state checks."""

    discrete = True
    values = None  # the two values of a discrete unit

    def __init__(self, bias):
        self.bias = _as_vector(bias, "bias")

    @property
    def n_units(self):
        """Number of units."""
        return self.bias.shape[0]

    def parameters(self):
        """The parameter arrays by name (the arrays themselves: training updates them)."""
        return {"bias": self.bias}

    def __repr__(self):
        return f"{type(self).__name__}(n_units={self.n_units})"

    def check_states(self, x, name, allow_1d=True):
        """States of this layer: shape ``(n_units,)`` or ``(n, n_units)``, valid values.

        Returns the 2-d float64 array and whether the input was one vector.
        """
        arr = as_float_array(x, name)
        if arr.ndim == 1 and allow_1d:
            arr2, single = arr[None, :], True
        elif arr.ndim == 2:
            arr2, single = arr, False
        else:
            expected = (f"({self.n_units},) or (n_samples, {self.n_units})" if allow_1d
                        else f"(n_samples, {self.n_units})")
            raise ValueError(f"{name} must have shape {expected}, got {arr.shape}")
        if arr2.shape[1] != self.n_units:
            raise ValueError(f"{name} must have {self.n_units} columns (one per unit), got "
                             f"shape {arr.shape}")
        if arr2.shape[0] == 0:
            raise ValueError(f"{name} is empty: it needs at least one row")
        self._check_values(arr2, name)
        return arr2, single

    def _check_values(self, arr, name):
        low, high = self.values
        bad = ~((arr == low) | (arr == high))
        if bad.any():
            row, col = np.argwhere(bad)[0]
            raise ValueError(f"{name} must hold only {low:g} and {high:g} ({type(self).__name__}"
                             f" units), found {float(arr[row, col]):g} at row {row}, "
                             f"column {col}")

    # The affine map s = alpha * x + beta from {0,1} bits x to the statistic of a discrete unit.
    def states(self, start, stop):
        """States ``start .. stop - 1`` of the layer, ordered as binary numbers."""
        alpha, beta = self._affine()
        return alpha * _binary_states(start, stop, self.n_units) + beta

    def random_states(self, n, *, rng):
        """`n` independent states with every value equally likely (each unit a fair coin)."""
        alpha, beta = self._affine()
        return alpha * (check_rng(rng).random((n, self.n_units)) < 0.5) + beta

    def statistic(self, x):
        r"""The statistic :math:`s(x)` that meets the weights: the states themselves."""
        return x

    def self_energy(self, x):
        r""":math:`E_\theta(x) = -b^\top x`, one number per row."""
        return -(x @ self.bias)

    def potential_gradient(self, x, u):
        r""":math:`\partial/\partial\theta` of :math:`-E_\theta(x) + u^\top s_\theta(x)`, per unit."""
        return {"bias": x}

    def normaliser_gradient(self, u):
        r""":math:`\partial A_\theta(u) / \partial\theta`, per unit: the conditional mean of `x`."""
        return {"bias": self.mean(u)}

    def mean_statistic(self, u):
        r""":math:`\partial A_\theta(u)/\partial u = \mathbb E[s(x) \mid u]`, per unit."""
        return self.mean(u)


class Bernoulli(_Layer):
    r"""A layer of {0,1} units with biases :math:`b`: :math:`p(x_i{=}1 \mid u) = \sigma(b_i + u_i)`.

    Parameters
    ----------
    bias : array_like of shape (n_units,)

    Examples
    --------
    >>> layer = Bernoulli([0.0, 1.0])
    >>> layer.mean(np.array([[0.0, -1.0]])).tolist()
    [[0.5, 0.5]]
    """

    values = (0.0, 1.0)

    @staticmethod
    def _affine():
        return 1.0, 0.0

    def copy(self):
        """An independent copy."""
        return Bernoulli(self.bias)

    def log_normaliser(self, u):
        r""":math:`A(u) = \sum_i \operatorname{softplus}(b_i + u_i)`, one number per row of `u`."""
        return softplus(u + self.bias).sum(axis=1)

    def mean(self, u):
        r""":math:`\mathbb E[x_i \mid u] = \sigma(b_i + u_i)`."""
        return sigmoid(u + self.bias)

    def sample(self, u, *, rng):
        """Independent draws given the inputs `u` of shape ``(n, n_units)``."""
        return (check_rng(rng).random(u.shape) < self.mean(u)).astype(float)


class Spin(_Layer):
    r"""A layer of ±1 units with biases :math:`b`: :math:`\mathbb E[x_i \mid u] = \tanh(b_i + u_i)`.

    Parameters
    ----------
    bias : array_like of shape (n_units,)

    Examples
    --------
    >>> layer = Spin([0.0])
    >>> round(float(layer.log_normaliser(np.zeros((1, 1)))[0]), 6)  # log(e^0 + e^0)
    0.693147
    """

    values = (-1.0, 1.0)

    @staticmethod
    def _affine():
        return 2.0, -1.0

    def copy(self):
        """An independent copy."""
        return Spin(self.bias)

    def log_normaliser(self, u):
        r""":math:`A(u) = \sum_i \log(e^{b_i + u_i} + e^{-b_i - u_i})`, one number per row."""
        a = u + self.bias
        return np.logaddexp(a, -a).sum(axis=1)

    def mean(self, u):
        r""":math:`\mathbb E[x_i \mid u] = \tanh(b_i + u_i)`."""
        return np.tanh(u + self.bias)

    def sample(self, u, *, rng):
        """Independent ±1 draws: :math:`p(x_i{=}1 \\mid u) = \\sigma(2(b_i + u_i))`."""
        p_up = sigmoid(2.0 * (u + self.bias))
        return np.where(check_rng(rng).random(u.shape) < p_up, 1.0, -1.0)


class Gaussian(_Layer):
    r"""A layer of real units: :math:`p(x_i \mid u) = \mathcal N(b_i + \sigma_i u_i, \sigma_i^2)`.

    Self-energy :math:`\sum_i (x_i - b_i)^2 / 2\sigma_i^2` and statistic
    :math:`x_i / \sigma_i`.

    Parameters
    ----------
    bias : array_like of shape (n_units,)
        :math:`b`, the mean of each unit when its input is zero.
    sigma : float or array_like of shape (n_units,), default 1.0
        Standard deviations, positive; stored as ``log_sigma``.

    Examples
    --------
    >>> layer = Gaussian([0.0, 1.0], sigma=[1.0, 2.0])
    >>> layer.mean(np.array([[1.0, 1.0]])).tolist()
    [[1.0, 3.0]]
    """

    discrete = False

    def __init__(self, bias, sigma=1.0):
        super().__init__(bias)
        sigma = as_float_array(sigma, "sigma")
        if sigma.ndim == 0:
            sigma = np.full(self.n_units, float(sigma))
        if sigma.shape != (self.n_units,):
            raise ValueError(f"sigma must be a number or have shape ({self.n_units},), got "
                             f"{sigma.shape}")
        if not (np.isfinite(sigma).all() and (sigma > 0).all()):
            raise ValueError(f"sigma must be finite and > 0, got {sigma.min():g} at index "
                             f"{int(np.argmin(np.where(np.isfinite(sigma), sigma, -np.inf)))}")
        if not (sigma >= MIN_SIGMA).all() or not (sigma <= 1 / MIN_SIGMA).all():
            raise ValueError(f"sigma must lie between {MIN_SIGMA:g} and {1 / MIN_SIGMA:g}, got "
                             f"{sigma.min():g} to {sigma.max():g}")
        self.log_sigma = np.log(sigma)

    @property
    def sigma(self):
        """The standard deviations, :math:`e^{\\log\\sigma}`."""
        return np.exp(self.log_sigma)

    def parameters(self):
        """``bias`` and ``log_sigma`` (the arrays themselves: training updates them)."""
        return {"bias": self.bias, "log_sigma": self.log_sigma}

    def copy(self):
        """An independent copy."""
        return Gaussian(self.bias, self.sigma)

    def _check_values(self, arr, name):
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} must be finite, but it holds NaN or infinity")

    def states(self, start, stop):
        """Not defined: a Gaussian layer is integrated, never enumerated (ValueError)."""
        raise ValueError("a Gaussian layer has no states to enumerate")

    def random_states(self, n, *, rng):
        """`n` independent draws of :math:`\\mathcal N(b, \\sigma^2)` (the units with no input)."""
        return self.bias + self.sigma * check_rng(rng).standard_normal((n, self.n_units))

    def statistic(self, x):
        r""":math:`s(x) = x / \sigma`."""
        return x / self.sigma

    def self_energy(self, x):
        r""":math:`E(x) = \sum_i (x_i - b_i)^2 / 2\sigma_i^2`, one number per row."""
        return 0.5 * (((x - self.bias) / self.sigma) ** 2).sum(axis=1)

    def log_normaliser(self, u):
        r""":math:`A(u) = \sum_i \log(\sqrt{2\pi}\sigma_i) + b_i u_i / \sigma_i + u_i^2 / 2`."""
        return (_LOG_SQRT_2PI + self.log_sigma + u * (self.bias / self.sigma)
                + 0.5 * u * u).sum(axis=1)

    def mean(self, u):
        r""":math:`\mathbb E[x_i \mid u] = b_i + \sigma_i u_i`."""
        return self.bias + self.sigma * u

    def mean_statistic(self, u):
        r""":math:`\mathbb E[x_i/\sigma_i \mid u] = b_i/\sigma_i + u_i`."""
        return self.bias / self.sigma + u

    def sample(self, u, *, rng):
        """Independent normal draws given the inputs `u` of shape ``(n, n_units)``."""
        return self.mean(u) + self.sigma * check_rng(rng).standard_normal(u.shape)

    def potential_gradient(self, x, u):
        r"""Per unit: :math:`(x - b)/\sigma^2` for ``bias``, :math:`(x - b)^2/\sigma^2 - u x/\sigma`
        for ``log_sigma``."""
        z = (x - self.bias) / self.sigma
        return {"bias": z / self.sigma, "log_sigma": z * z - u * x / self.sigma}

    def normaliser_gradient(self, u):
        r"""Per unit: :math:`u/\sigma` for ``bias``, :math:`1 - b u/\sigma` for ``log_sigma``."""
        return {"bias": u / self.sigma, "log_sigma": 1.0 - u * self.bias / self.sigma}


_LAYERS = (Bernoulli, Spin, Gaussian)
# The model's names for each layer's parameters.
_NAMES = {"visible": {"bias": "b", "log_sigma": "log_sigma"},
          "hidden": {"bias": "c", "log_sigma": "log_sigma_h"}}


class LayeredGradient:
    r"""A quantity shaped like the parameters of a :class:`LayeredRBM`: one array per name.

    The names are ``W``, ``b`` (visible biases), ``c`` (hidden biases), and
    ``log_sigma`` (``log_sigma_h``) for a Gaussian visible (hidden) layer;
    each is also an attribute.  Supports ``+``, ``-``, and multiplication and
    division by a scalar.

    Examples
    --------
    >>> g = LayeredGradient({"W": np.ones((1, 1)), "b": np.zeros(1), "c": np.ones(1)})
    >>> (2 * g - g).flat().tolist()
    [1.0, 0.0, 1.0]
    >>> g.W.shape
    (1, 1)
    """

    def __init__(self, fields):
        self.fields = {name: as_real_array(value, name) for name, value in fields.items()}

    def __getattr__(self, name):
        fields = self.__dict__.get("fields", {})
        if name in fields:
            return fields[name]
        raise AttributeError(name)

    def __repr__(self):
        return f"LayeredGradient({', '.join(self.fields)})"

    def flat(self):
        """All entries in one vector, the fields in order (each row-major)."""
        return np.concatenate([np.ravel(v) for v in self.fields.values()])

    def max_abs(self):
        """The largest absolute entry."""
        return float(np.max(np.abs(self.flat())))

    def _combine(self, other, op):
        if not isinstance(other, LayeredGradient):
            return NotImplemented
        if {k: v.shape for k, v in self.fields.items()} != {
                k: v.shape for k, v in other.fields.items()}:
            raise ValueError("LayeredGradients of different fields or shapes cannot be combined")
        return LayeredGradient({k: op(v, other.fields[k]) for k, v in self.fields.items()})

    def __add__(self, other):
        return self._combine(other, np.add)

    def __sub__(self, other):
        return self._combine(other, np.subtract)

    def __mul__(self, scalar):
        if not np.isscalar(scalar):
            return NotImplemented
        return LayeredGradient({k: v * scalar for k, v in self.fields.items()})

    __rmul__ = __mul__

    def __truediv__(self, scalar):
        if not np.isscalar(scalar):
            return NotImplemented
        return LayeredGradient({k: v / scalar for k, v in self.fields.items()})


class LayeredRBM:
    r"""A restricted Boltzmann machine whose two layers are any of :class:`Bernoulli`,
    :class:`Spin` and :class:`Gaussian`.

    .. math:: E(v, h) = E_\text{v}(v) + E_\text{h}(h) - s_\text{v}(v)^\top W s_\text{h}(h).

    With two :class:`Bernoulli` layers it is the binary :class:`~rbm.model.RBM`;
    with a :class:`Gaussian` visible layer the Gaussian-Bernoulli RBM

    .. math::
        E(v, h) = \sum_i \frac{(v_i - b_i)^2}{2\sigma_i^2} - c^\top h
        - \sum_{ij} \frac{v_i}{\sigma_i} W_{ij} h_j.

    Parameters
    ----------
    W : array_like of shape (n_visible, n_hidden)
    visible, hidden : Bernoulli, Spin or Gaussian
        The layers (copied), with ``n_units`` equal to the rows and columns of `W`.

    Examples
    --------
    >>> model = LayeredRBM(np.zeros((2, 1)), Gaussian(np.zeros(2)), Bernoulli(np.zeros(1)))
    >>> model
    LayeredRBM(Gaussian(n_units=2), Bernoulli(n_units=1))
    >>> sorted(model.parameters())
    ['W', 'b', 'c', 'log_sigma']
    """

    def __init__(self, W, visible, hidden):
        for name, layer in (("visible", visible), ("hidden", hidden)):
            if not isinstance(layer, _LAYERS):
                raise TypeError(f"{name} must be an rbm.units Bernoulli, Spin or Gaussian "
                                f"layer, got {type(layer).__name__}")
        W_arr = as_float_array(W, "W")
        shape = (visible.n_units, hidden.n_units)
        if W_arr.shape != shape:
            raise ValueError(f"W must have shape (visible.n_units, hidden.n_units) = {shape}, "
                             f"got {W_arr.shape}")
        self.W = check_finite_parameter(W_arr, "W", shape)
        self.visible, self.hidden = visible.copy(), hidden.copy()

    @classmethod
    def random(cls, visible, hidden, *, rng, scale=0.01):
        """A model with weights drawn from N(0, scale**2) between copies of the given layers."""
        scale = check_positive_float(scale, "scale", allow_zero=True)
        check_array_size(visible.n_units * hidden.n_units, "W")
        W = scale * check_rng(rng).standard_normal((visible.n_units, hidden.n_units))
        return cls(W, visible, hidden)

    @classmethod
    def from_binary(cls, model):
        """The binary :class:`~rbm.model.RBM` `model` as two :class:`Bernoulli` layers."""
        if not isinstance(model, RBM):
            raise TypeError(f"model must be an rbm.RBM, got {type(model).__name__}")
        return cls(model.W, Bernoulli(model.b), Bernoulli(model.c))

    @property
    def n_visible(self):
        """Number of visible units."""
        return self.W.shape[0]

    @property
    def n_hidden(self):
        """Number of hidden units."""
        return self.W.shape[1]

    def __repr__(self):
        return f"LayeredRBM({self.visible!r}, {self.hidden!r})"

    def copy(self):
        """An independent copy."""
        return LayeredRBM(self.W, self.visible, self.hidden)

    def parameters(self):
        """Every parameter array by name (``W``, ``b``, ``c``, ``log_sigma``...): the arrays
        themselves, so that training can update them in place."""
        out = {"W": self.W}
        for side, layer in (("visible", self.visible), ("hidden", self.hidden)):
            out.update({_NAMES[side][k]: v for k, v in layer.parameters().items()})
        return out

    def check(self, name="model"):
        """Require consistent shapes and finite parameters (they may change after creation)."""
        for key, value in self.parameters().items():
            if type(value) is not np.ndarray or value.dtype != np.float64:
                raise TypeError(f"{name}.{key} must be a float64 numpy array")
            check_parameter_values(value, f"{name}.{key}",
                                   " (changed after the model was made, or training diverged)")
            if key.startswith("log_sigma") and np.abs(value).max() > -np.log(MIN_SIGMA):
                raise ValueError(f"{name}.{key} must lie within +-{-np.log(MIN_SIGMA):.1f} "
                                 f"(sigma between {MIN_SIGMA:g} and {1 / MIN_SIGMA:g}), got "
                                 f"{value[np.argmax(np.abs(value))]:g}; training diverged?")
        shapes = {side: {k: v.shape for k, v in layer.parameters().items()}
                  for side, layer in (("visible", self.visible), ("hidden", self.hidden))}
        if (self.W.ndim != 2
                or any(shape != (self.W.shape[0],) for shape in shapes["visible"].values())
                or any(shape != (self.W.shape[1],) for shape in shapes["hidden"].values())):
            raise ValueError(f"{name} has inconsistent shapes: W {self.W.shape}, visible "
                             f"{shapes['visible']}, hidden {shapes['hidden']}")
        return self

    # -- energies and conditionals ---------------------------------------------------

    def energy(self, v, h):
        r""":math:`E(v, h)`, one number per row (a float for single vectors)."""
        self.check()
        v2, v1 = self.visible.check_states(v, "v")
        h2, h1 = self.hidden.check_states(h, "h")
        if v2.shape[0] != h2.shape[0]:
            raise ValueError(f"v and h must have the same number of rows, got {v2.shape[0]} "
                             f"and {h2.shape[0]}")
        coupling = np.einsum("ni,ij,nj->n", self.visible.statistic(v2), self.W,
                             self.hidden.statistic(h2))
        e = self.visible.self_energy(v2) + self.hidden.self_energy(h2) - coupling
        return e[0] if (v1 and h1) else e

    def free_energy(self, v):
        r""":math:`F(v) = E_\text{v}(v) - A_\text{h}(W^\top s_\text{v}(v))`, one number per row."""
        self.check()
        v2, single = self.visible.check_states(v, "v")
        f = self.visible.self_energy(v2) - self.hidden.log_normaliser(self._input_h(v2))
        return f[0] if single else f

    def _input_h(self, v):
        return self.visible.statistic(v) @ self.W

    def _input_v(self, h):
        return self.hidden.statistic(h) @ self.W.T

    def mean_h_given_v(self, v):
        r""":math:`\mathbb E[h \mid v]`: :math:`\sigma`, :math:`\tanh` or :math:`c + \sigma u`
        of the input :math:`u = W^\top s_\text{v}(v)`."""
        self.check()
        v2, single = self.visible.check_states(v, "v")
        m = self.hidden.mean(self._input_h(v2))
        return m[0] if single else m

    def mean_v_given_h(self, h):
        r""":math:`\mathbb E[v \mid h]`, with input :math:`u = W s_\text{h}(h)`."""
        self.check()
        h2, single = self.hidden.check_states(h, "h")
        m = self.visible.mean(self._input_v(h2))
        return m[0] if single else m

    def sample_h_given_v(self, v, *, rng):
        """Draw ``h ~ p(h | v)``, each hidden unit independently."""
        self.check()
        v2, single = self.visible.check_states(v, "v")
        h = self.hidden.sample(self._input_h(v2), rng=rng)
        return h[0] if single else h

    def sample_v_given_h(self, h, *, rng):
        """Draw ``v ~ p(v | h)``, each visible unit independently."""
        self.check()
        h2, single = self.hidden.check_states(h, "h")
        v = self.visible.sample(self._input_v(h2), rng=rng)
        return v[0] if single else v

    # -- the exact map onto a binary RBM -------------------------------------------------

    def to_binary(self):
        r"""The binary RBM with the same distribution, and the constant between the energies.

        Each discrete statistic is affine in a bit, :math:`s = \alpha x + \beta`
        (:math:`\alpha = 2, \beta = -1` for a spin), so

        .. math::
            -E(v, h) = b'^\top x + c'^\top y + x^\top W' y + \kappa,\quad
            W' = \operatorname{diag}(\alpha_v) W \operatorname{diag}(\alpha_h),

        with :math:`b' = \alpha_v \odot (b + W\beta_h)`,
        :math:`c' = \alpha_h \odot (c + W^\top\beta_v)` and
        :math:`\kappa = b^\top\beta_v + c^\top\beta_h + \beta_v^\top W\beta_h`.
        Hence :math:`\log Z = \log Z' + \kappa` and :math:`p(v) = p'(x)`.

        Returns
        -------
        (RBM, float)
            The binary model and :math:`\kappa`.

        Raises
        ------
        TypeError
            If a layer is Gaussian.
        """
        self.check()
        if not (self.visible.discrete and self.hidden.discrete):
            raise TypeError("to_binary needs two discrete layers (Bernoulli or Spin), got "
                            f"{self!r}")
        (av, bv), (ah, bh) = self.visible._affine(), self.hidden._affine()
        b, c, W = self.visible.bias, self.hidden.bias, self.W
        beta_v, beta_h = np.full(self.n_visible, bv), np.full(self.n_hidden, bh)
        binary = RBM(av * ah * W, av * (b + W @ beta_h), ah * (c + W.T @ beta_v))
        kappa = float(b @ beta_v + c @ beta_h + beta_v @ W @ beta_h)
        return binary, kappa


def _check(model, name="model"):
    if not isinstance(model, LayeredRBM):
        raise TypeError(f"{name} must be an rbm.units.LayeredRBM, got {type(model).__name__}")
    return model.check(name)


def _enumerated_side(model):
    """Which layer to enumerate: the discrete one, the smaller if both are."""
    v_ok, h_ok = model.visible.discrete, model.hidden.discrete
    if not (v_ok or h_ok):
        raise ValueError("exact values need a discrete layer (Bernoulli or Spin) to enumerate; "
                         f"{model!r} has none")
    if v_ok and h_ok:
        return "hidden" if model.n_hidden <= model.n_visible else "visible"
    return "visible" if v_ok else "hidden"


def _general_sums(model, moments):
    r"""log Z, and with `moments` the model term of every gradient field and the unit means.

    Enumerates the discrete layer x in blocks; the other layer y is summed or
    integrated through its log-normaliser.  Two passes when `moments`: log Z,
    then the sums weighted by :math:`p(x) \le 1`.
    """
    side = _enumerated_side(model)
    if side == "hidden":
        lx, ly, M = model.hidden, model.visible, model.W.T
    else:
        lx, ly, M = model.visible, model.hidden, model.W
    n_x = lx.n_units
    check_enumeration_size(n_x, f"exact enumeration of the {side} layer")
    rows = max(1, CHUNK_ELEMENTS // (n_x + ly.n_units))
    rows = 2 ** min(n_x, rows.bit_length() - 1)

    def blocks():
        for start in range(0, 2**n_x, rows):
            X = lx.states(start, start + rows)
            U = lx.statistic(X) @ M
            yield X, U, -lx.self_energy(X) + ly.log_normaliser(U)

    parts = [logsumexp(log_w) for _, _, log_w in blocks()]
    log_z = float(logsumexp(np.array(parts)))
    if not moments:
        return log_z, None
    cross = np.zeros(M.shape)
    grad_x = {k: np.zeros(n_x) for k in lx.parameters()}
    grad_y = {k: np.zeros(ly.n_units) for k in ly.parameters()}
    mean_x, mean_y = np.zeros(n_x), np.zeros(ly.n_units)
    for X, U, log_w in blocks():
        p = np.exp(log_w - log_z)
        SY = ly.mean_statistic(U)
        SX = lx.statistic(X)
        cross += (SX * p[:, None]).T @ SY
        for k, g in lx.potential_gradient(X, SY @ M.T).items():
            grad_x[k] += p @ g
        for k, g in ly.normaliser_gradient(U).items():
            grad_y[k] += p @ g
        mean_x += p @ X
        mean_y += p @ ly.mean(U)
    names_x, names_y = (_NAMES["hidden"], _NAMES["visible"]) if side == "hidden" else (
        _NAMES["visible"], _NAMES["hidden"])
    fields = {"W": cross.T if side == "hidden" else cross}
    fields.update({names_x[k]: v for k, v in grad_x.items()})
    fields.update({names_y[k]: v for k, v in grad_y.items()})
    means = (mean_y, mean_x) if side == "hidden" else (mean_x, mean_y)
    return log_z, (fields, means)


def _binary_sums(model, moments):
    """The same as :func:`_general_sums` for two discrete layers, by the binary engine."""
    binary, kappa = model.to_binary()
    if model.n_hidden <= model.n_visible:
        a_x, a_y, M, swapped = binary.c, binary.b, binary.W.T, True
    else:
        a_x, a_y, M, swapped = binary.b, binary.c, binary.W, False
    check_enumeration_size(M.shape[0], "exact enumeration of the "
                           + ("hidden" if swapped else "visible") + " layer")
    log_z, found = enumerate_layer(a_x, a_y, M, moments=moments)
    if not moments:
        return log_z + kappa, None
    s_x, s_y, s_xy = found
    x, y, xy = (s_y, s_x, s_xy.T) if swapped else (s_x, s_y, s_xy)
    (av, bv), (ah, bh) = model.visible._affine(), model.hidden._affine()
    sv, sh = av * x + bv, ah * y + bh
    cross = av * ah * xy + av * np.outer(x, np.full(model.n_hidden, bh)) \
        + ah * np.outer(np.full(model.n_visible, bv), y) + bv * bh
    # a discrete unit's statistic is its value, so the unit means are sv and sh
    return log_z + kappa, ({"W": cross, "b": sv, "c": sh}, (sv, sh))


def _sums(model, moments=False):
    if model.visible.discrete and model.hidden.discrete:
        return _binary_sums(model, moments)
    return _general_sums(model, moments)


def log_partition(model):
    r"""Exact :math:`\log Z`, enumerating a discrete layer.

    For a Gaussian-Bernoulli model (Gaussian integrated per hidden state),

    .. math::
        \log Z = \sum_i \log(\sqrt{2\pi}\sigma_i) + \log \sum_h \exp\Big(c^\top h
        + \sum_i \frac{b_i}{\sigma_i}(Wh)_i + \tfrac12 \|Wh\|^2\Big).

    Parameters
    ----------
    model : LayeredRBM

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If no layer is discrete, or the enumerated layer has more than
        ``MAX_ENUMERATION_BITS`` units.

    Examples
    --------
    >>> model = LayeredRBM(np.zeros((1, 1)), Gaussian([0.0]), Bernoulli([0.0]))
    >>> round(float(log_partition(model) - 0.5 * np.log(2 * np.pi) - np.log(2)), 12)
    0.0
    """
    _check(model)
    return float(_sums(model)[0])


def log_prob(model, v):
    r"""Exact :math:`\log p(v) = -F(v) - \log Z` (a log density for Gaussian units)."""
    _check(model)
    return -model.free_energy(v) - log_partition(model)


def _data(model, data):
    return model.visible.check_states(data, "data", allow_1d=False)[0]


def log_likelihood(model, data):
    r"""Mean log-likelihood :math:`\frac1N\sum_n \log p(v^{(n)})` (per data row).

    Parameters
    ----------
    model : LayeredRBM
    data : array_like of shape (n_samples, n_visible)
    """
    _check(model)
    return float(np.mean(log_prob(model, _data(model, data))))


def _statistics(model, v, h=None):
    r""":math:`\langle -\partial E/\partial\theta\rangle` over the rows of `v`, each with `h`
    drawn (the rows of `h`) or summed out (``h=None``: conditional means)."""
    sv = model.visible.statistic(v)
    u_h = sv @ model.W
    if h is None:
        sh = model.hidden.mean_statistic(u_h)
        grads_h = model.hidden.normaliser_gradient(u_h)
    else:
        sh = model.hidden.statistic(h)
        grads_h = model.hidden.potential_gradient(h, u_h)
    n = v.shape[0]
    fields = {"W": sv.T @ sh / n}
    for k, g in model.visible.potential_gradient(v, sh @ model.W.T).items():
        fields[_NAMES["visible"][k]] = g.mean(axis=0)
    for k, g in grads_h.items():
        fields[_NAMES["hidden"][k]] = g.mean(axis=0)
    return fields


def _ordered(model, fields):
    return LayeredGradient({k: fields[k] for k in model.parameters()})


def gradient(model, data):
    r"""Exact gradient of the mean log-likelihood: data term minus model term, per parameter.

    .. math::
        \frac{\partial \bar\ell}{\partial\theta} = \Big\langle -\frac{\partial E}{\partial\theta}
        \Big\rangle_\text{data} - \Big\langle -\frac{\partial E}{\partial\theta}
        \Big\rangle_\text{model}.

    For a Gaussian visible layer the ``log_sigma`` entry is
    :math:`\langle (v_i - b_i)^2/\sigma_i^2 - (v_i/\sigma_i)(W h)_i\rangle_\text{data}
    - \langle\cdot\rangle_\text{model}`.

    Parameters
    ----------
    model : LayeredRBM
    data : array_like of shape (n_samples, n_visible)

    Returns
    -------
    LayeredGradient
    """
    _check(model)
    pos = _statistics(model, _data(model, data))
    neg = _sums(model, moments=True)[1][0]
    return _ordered(model, {k: pos[k] - neg[k] for k in pos})


def model_means(model):
    r"""Exact :math:`\langle v\rangle_\text{model}` and :math:`\langle h\rangle_\text{model}`.

    Returns
    -------
    (ndarray of shape (n_visible,), ndarray of shape (n_hidden,))
    """
    _check(model)
    return _sums(model, moments=True)[1][1]


MAX_MARGINAL_BITS = 20


def hidden_marginal(model):
    r"""Every hidden state and its exact probability, :math:`p(h) \propto
    e^{-E_\text{h}(h) + A_\text{v}(W s_\text{h}(h))}` (the visible layer summed or integrated out).

    For Gaussian visible units :math:`p(v) = \sum_h p(h)\, p(v \mid h)` is a mixture of
    Gaussians, one per hidden state, with these weights.

    Parameters
    ----------
    model : LayeredRBM
        With a discrete hidden layer of at most ``MAX_MARGINAL_BITS`` units.

    Returns
    -------
    (ndarray of shape (2**n_hidden, n_hidden), ndarray of shape (2**n_hidden,))
        The states, in the order of ``model.hidden.states``, and their probabilities.

    Examples
    --------
    >>> model = LayeredRBM(np.zeros((1, 2)), Gaussian([0.0]), Bernoulli([0.0, np.log(3.0)]))
    >>> H, p = hidden_marginal(model)
    >>> [round(float(x), 12) for x in p]
    [0.125, 0.375, 0.125, 0.375]
    """
    _check(model)
    if not model.hidden.discrete:
        raise TypeError(f"hidden_marginal needs a discrete hidden layer, got {model!r}")
    check_enumeration_size(model.n_hidden, "hidden_marginal", limit=MAX_MARGINAL_BITS)
    H = model.hidden.states(0, 2**model.n_hidden)
    log_w = -model.hidden.self_energy(H) + model.visible.log_normaliser(
        model.hidden.statistic(H) @ model.W.T)
    return H, np.exp(log_w - logsumexp(log_w))


# -- sampling ----------------------------------------------------------------------------------

def _gibbs_steps(model, v, k, rng):
    """`k` block Gibbs steps (h, then v) from checked rows `v`."""
    for _ in range(k):
        h = model.hidden.sample(model._input_h(v), rng=rng)
        v = model.visible.sample(model._input_v(h), rng=rng)
    return v


def gibbs_chain(model, v0, k, *, rng):
    r"""Run block Gibbs chains for `k` steps: :math:`h \sim p(h\mid v)`, :math:`v \sim p(v\mid h)`.

    Parameters
    ----------
    model : LayeredRBM
    v0 : array_like of shape (n_visible,) or (n_chains, n_visible)
    k : int
    rng : numpy.random.Generator or int

    Returns
    -------
    ndarray, the shape of `v0`
    """
    _check(model)
    v2, single = model.visible.check_states(v0, "v0")
    v = _gibbs_steps(model, v2, check_positive_int(k, "k"), check_rng(rng))
    return v[0] if single else v


def sample_model(model, n_chains, n_steps, *, rng):
    r"""Final states of `n_chains` independent Gibbs chains of `n_steps` steps each, started
    from ``model.visible.random_states`` (fair coins, or :math:`\mathcal N(b, \sigma^2)`).

    Returns
    -------
    ndarray of shape (n_chains, n_visible)
    """
    _check(model)
    n_chains = check_positive_int(n_chains, "n_chains")
    n_steps = check_positive_int(n_steps, "n_steps")
    check_array_size(n_chains * max(model.n_visible, model.n_hidden), f"n_chains={n_chains}")
    rng = check_rng(rng)
    return _gibbs_steps(model, model.visible.random_states(n_chains, rng=rng), n_steps, rng)



def reconstruction_error(model, data):
    r"""Mean squared error of one deterministic pass :math:`v \to \mathbb E[s_\text{h} \mid v]
    \to \mathbb E[v \mid \cdot]`, per visible unit and data row.

    A cheap diagnostic, as :func:`rbm.training.reconstruction_error` is for the binary model.

    Parameters
    ----------
    model : LayeredRBM
    data : array_like of shape (n_samples, n_visible)

    Returns
    -------
    float
    """
    _check(model)
    v = _data(model, data)
    recon = model.visible.mean(model.hidden.mean_statistic(model._input_h(v)) @ model.W.T)
    return float(np.mean((v - recon) ** 2))


# -- the estimators' work for this model (rbm.estimators dispatches here) ----------------------

def _contrast(model, v_pos, v_neg, use_probabilities, rng, h_pos=None):
    """Positive minus negative statistics; hidden states summed out (`use_probabilities`) or
    drawn (`h_pos`, if given, for the positive rows)."""
    if use_probabilities:
        pos, neg = _statistics(model, v_pos), _statistics(model, v_neg)
    else:
        if h_pos is None:
            h_pos = model.hidden.sample(model._input_h(v_pos), rng=rng)
        pos = _statistics(model, v_pos, h_pos)
        neg = _statistics(model, v_neg, model.hidden.sample(model._input_h(v_neg), rng=rng))
    return _ordered(model, {k: pos[k] - neg[k] for k in pos})


def _cd_gradient(model, data, k, use_probabilities, rng):
    """The CD-k estimate for a :class:`LayeredRBM` (see :class:`rbm.estimators.CD`)."""
    _check(model)
    v0, rng = _data(model, data), check_rng(rng)
    h0 = model.hidden.sample(model._input_h(v0), rng=rng)
    v = _gibbs_steps(model, model.visible.sample(model._input_v(h0), rng=rng), k - 1, rng)
    return _contrast(model, v0, v, use_probabilities, rng, h_pos=h0)


def _pcd_gradient(model, data, chains, n_chains, k, use_probabilities, init, rng):
    """The PCD estimate and the advanced chains (see :class:`rbm.estimators.PCD`)."""
    _check(model)
    v0, rng = _data(model, data), check_rng(rng)
    if chains is None:
        check_array_size(n_chains * model.n_visible,
                         f"n_chains={n_chains} chains of {model.n_visible} units")
        chains = (v0[rng.integers(0, v0.shape[0], size=n_chains)] if init == "data"
                  else model.visible.random_states(n_chains, rng=rng))
    elif chains.shape[1] != model.n_visible:
        raise ValueError(f"model has n_visible={model.n_visible}, but the persistent chains "
                         f"have {chains.shape[1]} visible units")
    chains = _gibbs_steps(model, chains, k, rng)
    return _contrast(model, v0, chains, use_probabilities, rng), chains


def _enumerated_size(model):
    """Units of the layer that exact values enumerate."""
    return model.n_hidden if _enumerated_side(model) == "hidden" else model.n_visible
