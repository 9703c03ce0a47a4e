r"""Layers of units: {0,1}, ±1, Potts, Gaussian, ReLU and dReLU, behind one interface.

A model (:class:`rbm.model.RBM`) is two layers and a weight array ``W``;
its energy is

.. math::
    E(v, h) = E_\text{v}(v) + E_\text{h}(h) - s_\text{v}(v) \cdot W \cdot s_\text{h}(h),

the exponential-family harmonium of Welling, Rosen-Zvi and Hinton (2005).
Every algorithm of the package is written once against the layer interface
below; a layer is a handful of per-unit formulas.

**The interface.**  A layer of ``n_units`` units has a statistic of shape
``shape`` per state (``(n_units,)``, or ``(n_units, q)`` for Potts units);
``W`` has shape ``visible.shape + hidden.shape``.  States are float arrays of
shape ``(n_samples, n_units)`` (a Potts unit holds its category 0 .. q-1).
An *input* ``I`` has shape ``(n_samples,) + shape``: the field the other
layer exerts, :math:`I = s_\text{v}(v) \cdot W` on the hidden layer.  Given
its input, every unit is independent, with density

.. math::
    p_\beta(x \mid I) \propto e^{\beta(-E(x) + I \cdot s(x))},

where :math:`\beta` is an inverse temperature (as in Tubiana's PGM: one
Markov step serves tempering and annealing alike).  Methods:

``energy(x)``
    :math:`E(x)`, summed over the units: one number per row.
``statistic(x)``
    :math:`s(x)`, what meets the weights, shape ``(n,) + shape``.
``log_normaliser(I, beta=1)``
    The cumulant generating function
    :math:`A_\beta(I) = \log \int e^{\beta(-E(x) + I\cdot s(x))}\,dx` (a sum
    for discrete units), summed over units: one number per row, in closed form.
``mean_statistic(I, beta=1)``, ``mean(I, beta=1)``
    :math:`\mathbb E[s(x) \mid I]` and :math:`\mathbb E[x \mid I]` (for Potts
    units ``mean`` is the probability of each category, as ``embed``).
``sample(I, *, rng, beta=1)``
    Independent draws of :math:`p_\beta(x \mid I)`.
``potential_gradient(x, I)``, ``normaliser_gradient(I)``
    Per row and parameter: :math:`\partial_\theta[-E(x) + I\cdot s(x)]` and
    :math:`\partial_\theta A_1(I) = \mathbb E[\partial_\theta(-E + I\cdot s)\mid I]`;
    the log-likelihood gradient is data minus model averages of these.
    ``conditional_statistics(I)`` returns ``mean_statistic(I)`` and
    ``normaliser_gradient(I)`` at once, for the sampling estimators.
``discrete``, ``n_states``, ``values``, ``states(start, stop)``, ``states_at(index)``, ``index_of(x)``
    Whether the layer can be enumerated; the number and the values of the
    states of one unit; states ``start .. stop - 1`` (or numbered `index`) of
    the layer in order (first unit most significant), and the numbers of
    given states.  ``bits`` is ``(alpha, beta)`` when the statistic is
    ``alpha * x + beta`` of a {0,1} bit (Binary, Spin), which lets the fast
    engines of :mod:`rbm.exact` and :mod:`rbm.training` run; else ``None``.
``input_shift(delta)``
    The change of parameters equivalent to adding `delta` (of shape ``shape``) to
    every input: ``bias`` by `delta` for discrete units, by :math:`\sigma\delta`
    for Gaussian ones, ``theta`` by :math:`-\delta` for ReLU units (dReLU:
    :math:`\theta_\pm` by :math:`\mp\delta`).
``random_states(n, *, rng)``, ``base()``, ``anneal(base, beta)``
    Starting states for chains; the base layer of annealed importance
    sampling; the layer whose energy is :math:`(1-\beta)E_\text{base} + \beta E`.

**The layers** (per unit; :math:`t` denotes an input):

* :class:`Binary`: :math:`x \in \{0,1\}`, :math:`E = -b x`, :math:`s = x`,
  :math:`A = \operatorname{softplus}(\beta(b + t))`;
* :class:`Spin`: :math:`x \in \{-1,1\}`, :math:`E = -b x`, :math:`s = x`,
  :math:`A = \log 2\cosh(\beta(b + t))`;
* :class:`Potts`: :math:`x \in \{0..q-1\}`, :math:`E = -b_{x}`, :math:`s` the
  one-hot vector, :math:`A = \log\sum_a e^{\beta(b_a + t_a)}`;
* :class:`Gaussian`: :math:`E = (x - b)^2/2\sigma^2`, :math:`s = x/\sigma`,
  :math:`A = \tfrac12\log(2\pi\sigma^2/\beta) + \beta(b t/\sigma + t^2/2)`;
* :class:`ReLU`: :math:`x \ge 0`, :math:`E = \gamma x^2/2 + \theta x`,
  :math:`s = x`, :math:`A = L(\beta\gamma, \beta(t - \theta))`;
* :class:`DReLU`: :math:`E = \gamma_+ x_+^2/2 + \theta_+ x_+ + \gamma_- x_-^2/2
  + \theta_- x_-` with :math:`x_+ = \max(x, 0)`, :math:`x_- = \max(-x, 0)`,
  :math:`s = x`, :math:`A = \log(e^{L(\beta\gamma_+, \beta(t - \theta_+))}
  + e^{L(\beta\gamma_-, \beta(-t - \theta_-))})`;

with the half-Gaussian integral, exact in closed form,

.. math::
    L(g, t) &= \log\int_0^\infty e^{-g x^2/2 + t x}\,dx \\
    &= \tfrac12\log\frac{\pi}{2g} + \log\operatorname{erfcx}\Big(\frac{-t}{\sqrt{2g}}\Big) \\
    &= \tfrac12\log\frac{2\pi}{g} + \frac{z^2}{2} + \log\Phi(z),\quad z = \frac{t}{\sqrt g},

the first form for :math:`t < 0` and the second for :math:`t \ge 0`, so that
no term cancels another (:func:`log_half_gaussian`; tested against mpmath
to 1e-12 relative).
"""

import copy as _copy

import numpy as np
from scipy.special import erfcx, log_ndtr, ndtri_exp

from rbm._validation import (
    as_float_array,
    check_finite_parameter,
    check_parameter_values,
    check_rng,
)
from rbm.special import logsumexp, sigmoid, sigmoid_inplace, softplus

__all__ = ["Layer", "Binary", "Spin", "Potts", "Gaussian", "ReLU", "DReLU", "MIN_SIGMA",
           "log_half_gaussian", "half_gaussian_moments"]

_LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)
_SQRT2 = np.sqrt(2.0)
_SQRT_2_OVER_PI = np.sqrt(2.0 / np.pi)
# Standard deviations are kept within this factor of one (log sigma within +-230): beyond it
# sigma**2 and its inverse leave the float64 range.
MIN_SIGMA = 1e-100


def log_half_gaussian(g, t):
    r""":math:`L(g, t) = \log\int_0^\infty e^{-g x^2/2 + t x}\,dx` for :math:`g > 0`, elementwise.

    Exact in closed form: with :math:`z = t/\sqrt g`, :math:`\tfrac12\log(\pi/2g)
    + \log\operatorname{erfcx}(-z/\sqrt2)` for :math:`z < 0` and
    :math:`\tfrac12\log(2\pi/g) + z^2/2 + \log\Phi(z)` otherwise; neither
    subtracts nearly equal numbers, so the result is accurate to a few units
    of rounding wherever it is not itself near zero.

    Examples
    --------
    >>> round(float(log_half_gaussian(1.0, 0.0)), 12)  # log(sqrt(pi / 2))
    0.225791352645
    """
    g, t = np.broadcast_arrays(np.asarray(g, dtype=float), np.asarray(t, dtype=float))
    z = t / np.sqrt(g)
    neg = z < 0
    out = np.empty(z.shape)
    zn = z[neg]
    out[neg] = 0.5 * np.log(np.pi / (2.0 * g[neg])) + np.log(erfcx(-zn / _SQRT2))
    zp = z[~neg]
    out[~neg] = (0.5 * np.log(2.0 * np.pi / g[~neg]) + 0.5 * zp * zp + log_ndtr(zp))
    return out


def half_gaussian_moments(g, t):
    r"""Mean and second moment of :math:`p(x) \propto e^{-g x^2/2 + t x}` on :math:`x \ge 0`.

    With :math:`\sigma = 1/\sqrt g`, :math:`z = t\sigma` and the inverse Mills
    ratio :math:`\lambda(z) = \varphi(z)/\Phi(z) = \sqrt{2/\pi}/\operatorname{erfcx}(-z/\sqrt2)`:
    :math:`\mathbb E[x] = \sigma(z + \lambda)` and :math:`\mathbb E[x^2] = \mu\,\mathbb E[x]
    + \sigma^2` with :math:`\mu = t/g`.  (Far in the left tail, :math:`z < -10^3`, they lose
    relative accuracy to cancellation; the log-normaliser does not.)

    Returns
    -------
    (ndarray, ndarray)
    """
    g, t = np.broadcast_arrays(np.asarray(g, dtype=float), np.asarray(t, dtype=float))
    sigma = 1.0 / np.sqrt(g)
    z = t * sigma
    lam = _SQRT_2_OVER_PI / erfcx(-z / _SQRT2)
    mean = sigma * (z + lam)
    second = (t / g) * mean + sigma * sigma
    return mean, second


def _sample_half_gaussian(g, t, u):
    r"""Draws of :math:`p(x) \propto e^{-g x^2/2 + t x}`, :math:`x \ge 0`, from uniforms `u`.

    Inverse CDF in log space: :math:`x = \sigma(z - \Phi^{-1}(u\,\Phi(z)))`.
    """
    sigma = 1.0 / np.sqrt(g)
    z = t * sigma
    with np.errstate(divide="ignore"):
        y = ndtri_exp(np.log(u) + log_ndtr(z))
    return np.maximum(sigma * (z - y), 0.0)


def _vector(x, name, n=None):
    """A 1-d finite float64 parameter vector (copied), of length `n` if given."""
    arr = as_float_array(x, name)
    if n is not None and arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.ndim != 1 or arr.shape[0] < 1 or (n is not None and arr.shape[0] != n):
        want = f"({n},) or a number" if n is not None else "(n_units,) with n_units >= 1"
        raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
    return check_finite_parameter(arr, name, arr.shape)


class Layer:
    """What every layer shares: parameters by name, copies, checks of states and parameters.

    Subclasses set ``_names`` (their parameters, in order), ``discrete`` and
    the per-unit formulas of the module docstring.
    """

    _names = ("bias",)
    discrete = True
    bits = None
    n_states = None

    @property
    def n_units(self):
        """Number of units."""
        return getattr(self, self._names[0]).shape[0]

    @property
    def shape(self):
        """The shape of one state's statistic, ``(n_units,)`` (``(n_units, q)`` for Potts)."""
        return (self.n_units,)

    def parameters(self):
        """The parameter arrays by name (the arrays themselves: training updates them)."""
        return {name: getattr(self, name) for name in self._names}

    def copy(self):
        """An independent copy."""
        new = _copy.copy(self)
        for name in self._names:
            setattr(new, name, getattr(self, name).copy())
        return new

    def __repr__(self):
        return f"{type(self).__name__}(n_units={self.n_units})"

    def check(self, name="layer", labels=None):
        """Require float64 parameters of consistent shapes and valid values (after training).

        `labels` maps parameter names to the names the messages use (the model's).
        """
        labels = labels or {}
        for key, value in self.parameters().items():
            label = labels.get(key, f"{name}.{key}")
            if type(value) is not np.ndarray or value.dtype != np.float64:
                raise TypeError(f"{label} must be a float64 numpy array, got "
                                f"{type(value).__name__} of dtype {getattr(value, 'dtype', None)}")
            if value.shape != self._param_shape(key):
                raise ValueError(f"{name} has inconsistent shapes: {label} {value.shape}, "
                                 f"expected {self._param_shape(key)}")
            check_parameter_values(value, label,
                                   " (changed after the model was made, or training diverged)")
        return self

    def _param_shape(self, key):
        return self.shape

    def _unit_count(self):
        return getattr(self, self._names[0]).shape[0]

    def check_states(self, x, name, allow_1d=True):
        """States of this layer, shape ``(n_units,)`` or ``(n, n_units)``, with valid values.

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
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} must be finite, but it holds NaN or infinity")

    def statistic(self, x):
        r""":math:`s(x) = x`."""
        return x

    def input_shift(self, delta):
        r"""The parameter changes (by name) equivalent to adding `delta` to every input.

        For units with energy :math:`-b\cdot s(x)` ({0,1}, ±1, Potts), ``bias`` by `delta`.
        """
        return {"bias": delta}

    def conditional_statistics(self, I):
        """``mean_statistic`` and ``normaliser_gradient`` at once, for the sampling
        estimators (a layer may compute them faster, to rounding)."""
        return self.mean_statistic(I), self.normaliser_gradient(I)

    def embed(self, x):
        """The states in the representation of ``mean``: the states themselves."""
        return x

    def random_states(self, n, *, rng):
        """`n` independent states: uniform for a discrete layer, else drawn with zero input."""
        return self.sample(np.zeros((n,) + self.shape), rng=rng)

    def base(self):
        """The base layer of annealed importance sampling: zero fields for discrete units."""
        new = self.copy()
        for arr in new.parameters().values():
            arr[...] = 0.0
        return new

    def anneal(self, base, beta):
        r"""The layer with energy :math:`(1-\beta)E_\text{base} + \beta E` (linear parameters)."""
        new = self.copy()
        for key, arr in new.parameters().items():
            arr[...] = (1.0 - beta) * getattr(base, key) + beta * arr
        return new

    @property
    def values(self):
        """The values of one unit of a discrete layer, in order (None for a continuous one)."""
        return self.states_at(np.arange(self.n_states))[:, -1] if self.discrete else None

    def states(self, start, stop):
        """States ``start .. stop - 1`` of the layer in order, first unit most significant."""
        return self.states_at(np.arange(start, stop, dtype=np.int64))

    def index_of(self, x):
        """The number of each row of states `x` in the order of :meth:`states` (int64)."""
        digits = np.searchsorted(self.values, x).astype(np.int64)
        return digits @ (self.n_states ** np.arange(self.n_units - 1, -1, -1, dtype=np.int64))

    def states_at(self, index):
        """The states numbered `index` (an int64 array) in the order of :meth:`states`."""
        q = self.n_states
        index = np.asarray(index, dtype=np.int64)
        # Place values q**e that exceed int64 belong to digits that are 0 for any int64 index.
        exponents = range(self.n_units - 1, -1, -1)
        fits = np.array([q**e <= np.iinfo(np.int64).max for e in exponents])
        powers = np.array([q**e if ok else 1 for e, ok in zip(exponents, fits)], dtype=np.int64)
        digits = np.where(fits, (index[:, None] // powers) % q, 0)
        return self._values[digits] if self._values is not None else digits.astype(float)

    _values = None


class _TwoState(Layer):
    """Units with two values, ``_values = (low, high)``, and energy :math:`-b x`."""

    n_states = 2

    def __init__(self, bias):
        self.bias = _vector(bias, "bias")

    def _check_values(self, arr, name):
        low, high = self._values
        bad = ~((arr == low) | (arr == high))
        if bad.any():
            row, col = np.argwhere(bad)[0]
            raise ValueError(f"{name} must hold only {low:g} and {high:g}, found "
                             f"{float(arr[row, col]):g} at row {row}, column {col}")

    def energy(self, x):
        r""":math:`E(x) = -b^\top x`, one number per row."""
        return -(x @ self.bias)

    def _field(self, I, beta):
        a = I + self.bias
        if beta != 1.0:
            a *= beta
        return a

    def potential_gradient(self, x, I):
        """Per row: ``bias`` gets the states themselves."""
        return {"bias": x}

    def normaliser_gradient(self, I):
        """Per row: ``bias`` gets the conditional mean."""
        return {"bias": self.mean_statistic(I)}

    def mean(self, I, beta=1.0):
        r""":math:`\mathbb E[x \mid I]`."""
        return self.mean_statistic(I, beta)

    def random_states(self, n, *, rng):
        """`n` states with every unit a fair coin."""
        low, high = self._values
        u = check_rng(rng).random((n, self.n_units)) < 0.5
        return np.where(u, high, low) if low != 0.0 else u.astype(float)


class Binary(_TwoState):
    r"""{0,1} units with biases :math:`b`: :math:`p(x_i{=}1 \mid I) = \sigma(\beta(b_i + I_i))`.

    Parameters
    ----------
    bias : array_like of shape (n_units,)

    Examples
    --------
    >>> layer = Binary([0.0, 1.0])
    >>> layer.mean(np.array([[0.0, -1.0]])).tolist()
    [[0.5, 0.5]]
    """

    _values = np.array([0.0, 1.0])
    bits = (1.0, 0.0)

    def log_normaliser(self, I, beta=1.0):
        r""":math:`\sum_i \operatorname{softplus}(\beta(b_i + I_i))`, one number per row."""
        return softplus(self._field(I, beta)).sum(axis=1)

    def mean_statistic(self, I, beta=1.0):
        r""":math:`\sigma(\beta(b + I))`."""
        return sigmoid(self._field(I, beta))

    def conditional_statistics(self, I):
        """The conditional means by the sampling kernel's sigmoid (tanh, to 2.3e-16)."""
        p = sigmoid_inplace(self._field(I, 1.0))
        return p, {"bias": p}

    def sample(self, I, *, rng, beta=1.0):
        """Independent 0/1 draws (float64): one uniform per unit, ``u < p``."""
        p = sigmoid_inplace(self._field(I, beta))
        return (check_rng(rng).random(p.shape) < p).astype(float)

    def random_states(self, n, *, rng):
        """`n` states with every unit a fair coin (``u < 0.5``)."""
        return (check_rng(rng).random((n, self.n_units)) < 0.5).astype(float)


class Spin(_TwoState):
    r"""±1 units with biases :math:`b`: :math:`\mathbb E[x_i \mid I] = \tanh(\beta(b_i + I_i))`.

    Parameters
    ----------
    bias : array_like of shape (n_units,)

    Examples
    --------
    >>> layer = Spin([0.0])
    >>> round(float(layer.log_normaliser(np.zeros((1, 1)))[0]), 6)  # log(e^0 + e^0)
    0.693147
    """

    _values = np.array([-1.0, 1.0])
    bits = (2.0, -1.0)

    def log_normaliser(self, I, beta=1.0):
        r""":math:`\sum_i \log(e^{a_i} + e^{-a_i})`, :math:`a = \beta(b + I)`."""
        a = self._field(I, beta)
        return np.logaddexp(a, -a).sum(axis=1)

    def mean_statistic(self, I, beta=1.0):
        r""":math:`\tanh(\beta(b + I))`."""
        return np.tanh(self._field(I, beta))

    def sample(self, I, *, rng, beta=1.0):
        r"""Independent ±1 draws, :math:`p(x_i{=}1) = \sigma(2\beta(b_i + I_i))`."""
        p_up = sigmoid(2.0 * self._field(I, beta))
        return np.where(check_rng(rng).random(p_up.shape) < p_up, 1.0, -1.0)


class Potts(Layer):
    r"""Categorical (Potts) units with ``q`` states each and fields :math:`b_{i,a}`.

    A unit's state is its category :math:`x_i \in \{0, \dots, q-1\}`; its
    statistic is the one-hot vector :math:`s(x_i)_a = [x_i = a]`, so ``W``
    of a Potts visible layer has shape ``(n_units, q, n_hidden...)`` and the
    input to hidden unit :math:`\mu` is :math:`\sum_i W_{i, x_i, \mu}`.
    :math:`E(x) = -\sum_i b_{i, x_i}` and
    :math:`p_\beta(x_i = a \mid I) = \operatorname{softmax}_a(\beta(b_{i,a} + I_{i,a}))`.

    **Gauge.**  Adding a constant to :math:`b_{i,:}` changes no probability,
    and adding :math:`k_{i\mu}` to :math:`W_{i,:,\mu}` is undone by
    :math:`-\sum_i k_{i\mu}` on the hidden unit's input.  The package does not
    constrain the parameters (every algorithm is gauge-invariant, and
    the exact gradient of the bias sums to zero over categories, so training
    never moves the bias off its gauge); :func:`rbm.model.zero_sum_gauge` maps a
    model with a Potts visible layer to the equivalent one with
    :math:`\sum_a W_{i,a,\mu} = 0` and :math:`\sum_a b_{i,a} = 0`, the gauge
    of smallest :math:`\|W\|_2` (the one an L2 penalty on ``W`` selects, and
    the one in which weights are compared and plotted).

    Parameters
    ----------
    bias : array_like of shape (n_units, q)
        With ``q >= 2``.

    Examples
    --------
    >>> layer = Potts(np.zeros((2, 3)))
    >>> layer.shape, layer.n_states
    ((2, 3), 3)
    >>> layer.statistic(np.array([[2.0, 0.0]])).astype(int).tolist()
    [[[0, 0, 1], [1, 0, 0]]]
    """

    def __init__(self, bias):
        arr = as_float_array(bias, "bias")
        if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 2:
            raise ValueError(f"bias must have shape (n_units, q) with n_units >= 1 and q >= 2, "
                             f"got {arr.shape}")
        self.bias = check_finite_parameter(arr, "bias", arr.shape)

    @property
    def q(self):
        """Number of states of each unit."""
        return self.bias.shape[1]

    @property
    def n_states(self):
        """Number of states of each unit, ``q``."""
        return self.bias.shape[1]

    @property
    def shape(self):
        return self.bias.shape

    def __repr__(self):
        return f"Potts(n_units={self.n_units}, q={self.q})"

    def _check_values(self, arr, name):
        bad = ~((arr == np.round(arr)) & (arr >= 0) & (arr < self.q))
        if bad.any():
            row, col = np.argwhere(bad)[0]
            raise ValueError(f"{name} must hold categories 0 .. {self.q - 1} (Potts units), "
                             f"found {float(arr[row, col]):g} at row {row}, column {col}")

    def statistic(self, x):
        """One-hot vectors, shape ``(n, n_units, q)``."""
        return (x[:, :, None] == np.arange(self.q)).astype(float)

    embed = statistic

    def energy(self, x):
        r""":math:`-\sum_i b_{i, x_i}`, one number per row."""
        return -np.take_along_axis(self.bias[None], x.astype(np.int64)[:, :, None],
                                   axis=2)[:, :, 0].sum(axis=1)

    def _field(self, I, beta):
        a = I + self.bias
        if beta != 1.0:
            a *= beta
        return a

    def log_normaliser(self, I, beta=1.0):
        r""":math:`\sum_i \log\sum_a e^{\beta(b_{i,a} + I_{i,a})}`, one number per row."""
        return logsumexp(self._field(I, beta), axis=2).sum(axis=1)

    def mean_statistic(self, I, beta=1.0):
        r""":math:`p(x_i = a \mid I)`, shape ``(n, n_units, q)``."""
        a = self._field(I, beta)
        a = a - a.max(axis=2, keepdims=True)
        e = np.exp(a)
        return e / e.sum(axis=2, keepdims=True)

    mean = mean_statistic

    def sample(self, I, *, rng, beta=1.0):
        """One uniform per unit, mapped through the cumulative probabilities."""
        p = self.mean_statistic(I, beta)
        u = check_rng(rng).random(p.shape[:2])
        cum = np.cumsum(p, axis=2)
        return np.minimum((u[:, :, None] >= cum).sum(axis=2), self.q - 1).astype(float)

    def potential_gradient(self, x, I):
        """Per row: ``bias`` gets the one-hot states."""
        return {"bias": self.statistic(x)}

    def normaliser_gradient(self, I):
        """Per row: ``bias`` gets the category probabilities."""
        return {"bias": self.mean_statistic(I)}

    def random_states(self, n, *, rng):
        """`n` states with every category of every unit equally likely."""
        return check_rng(rng).integers(0, self.q, size=(n, self.n_units)).astype(float)


class Gaussian(Layer):
    r"""Real units: :math:`p_\beta(x_i \mid I) = \mathcal N(b_i + \sigma_i I_i, \sigma_i^2/\beta)`.

    Energy :math:`\sum_i (x_i - b_i)^2 / 2\sigma_i^2` and statistic
    :math:`x_i / \sigma_i`: the coupling is divided by :math:`\sigma` (not
    :math:`\sigma^2`), so a hidden unit sees the data in units of its
    standard deviation.  The standard deviation is stored and learned as
    ``log_sigma``, which keeps it positive.

    Parameters
    ----------
    bias : array_like of shape (n_units,)
        :math:`b`, the mean of each unit when its input is zero.
    sigma : float or array_like of shape (n_units,), default 1.0
        Standard deviations, between ``MIN_SIGMA`` and ``1 / MIN_SIGMA``.

    Examples
    --------
    >>> layer = Gaussian([0.0, 1.0], sigma=[1.0, 2.0])
    >>> layer.mean(np.array([[1.0, 1.0]])).tolist()
    [[1.0, 3.0]]
    """

    _names = ("bias", "log_sigma")
    discrete = False

    def __init__(self, bias, sigma=1.0):
        self.bias = _vector(bias, "bias")
        sigma = as_float_array(sigma, "sigma")
        if sigma.ndim == 0:
            sigma = np.full(self.n_units, float(sigma))
        if sigma.shape != (self.n_units,):
            raise ValueError(f"sigma must be a number or have shape ({self.n_units},), got "
                             f"{sigma.shape}")
        if not (np.isfinite(sigma).all() and (sigma > 0).all()):
            raise ValueError("sigma must be finite and > 0")
        if not ((sigma >= MIN_SIGMA).all() and (sigma <= 1 / MIN_SIGMA).all()):
            raise ValueError(f"sigma must lie between {MIN_SIGMA:g} and {1 / MIN_SIGMA:g}, got "
                             f"{sigma.min():g} to {sigma.max():g}")
        self.log_sigma = np.log(sigma)

    @property
    def sigma(self):
        r"""The standard deviations, :math:`e^{\log\sigma}`."""
        return np.exp(self.log_sigma)

    def check(self, name="layer", labels=None):
        super().check(name, labels)
        if np.abs(self.log_sigma).max() > -np.log(MIN_SIGMA):
            raise ValueError(f"{name}.log_sigma must lie within +-{-np.log(MIN_SIGMA):.1f} "
                             "(training diverged?)")
        return self

    def statistic(self, x):
        r""":math:`s(x) = x / \sigma`."""
        return x / self.sigma

    def input_shift(self, delta):
        r"""``bias`` by :math:`\sigma\delta`: the energy's :math:`b x/\sigma^2` meets the
        input's :math:`\delta x / \sigma`."""
        return {"bias": self.sigma * delta}

    def energy(self, x):
        r""":math:`\sum_i (x_i - b_i)^2 / 2\sigma_i^2`, one number per row."""
        return 0.5 * (((x - self.bias) / self.sigma) ** 2).sum(axis=1)

    def log_normaliser(self, I, beta=1.0):
        r""":math:`\sum_i \tfrac12\log(2\pi\sigma_i^2/\beta) + \beta(b_i I_i/\sigma_i + I_i^2/2)`."""
        if beta == 1.0:
            out = _LOG_SQRT_2PI + self.log_sigma + I * (self.bias / self.sigma) + 0.5 * I * I
        else:
            out = (_LOG_SQRT_2PI + self.log_sigma - 0.5 * np.log(beta)
                   + beta * (I * (self.bias / self.sigma) + 0.5 * I * I))
        return out.sum(axis=1)

    def mean(self, I, beta=1.0):
        r""":math:`b + \sigma I` (whatever :math:`\beta`)."""
        return self.bias + self.sigma * I

    def mean_statistic(self, I, beta=1.0):
        r""":math:`b/\sigma + I`."""
        return self.bias / self.sigma + I

    def sample(self, I, *, rng, beta=1.0):
        """Independent normal draws."""
        sd = self.sigma if beta == 1.0 else self.sigma / np.sqrt(beta)
        return self.mean(I) + sd * check_rng(rng).standard_normal(I.shape)

    def potential_gradient(self, x, I):
        r"""Per row: :math:`(x - b)/\sigma^2` for ``bias``, :math:`(x-b)^2/\sigma^2 - I x/\sigma`
        for ``log_sigma``."""
        z = (x - self.bias) / self.sigma
        return {"bias": z / self.sigma, "log_sigma": z * z - I * x / self.sigma}

    def normaliser_gradient(self, I):
        r"""Per row: :math:`I/\sigma` for ``bias``, :math:`1 - b I/\sigma` for ``log_sigma``."""
        return {"bias": I / self.sigma, "log_sigma": 1.0 - I * self.bias / self.sigma}

    def base(self):
        """The layer itself: annealing moves only the weights of a Gaussian layer."""
        return self.copy()

    def anneal(self, base, beta):
        """The layer itself; a base with other parameters is refused (ValueError)."""
        if not all(np.array_equal(getattr(base, k), v) for k, v in self.parameters().items()):
            raise ValueError("a Gaussian layer anneals only from itself (base = layer.base()): "
                             "its statistic x / sigma would change with sigma")
        return self.copy()


def _positive(x, name, n):
    arr = _vector(x, name, n)
    if not (arr > 0).all():
        raise ValueError(f"{name} must be > 0, got {arr.min():g}")
    return arr


class ReLU(Layer):
    r"""Rectified Gaussian units :math:`x \ge 0` with energy :math:`\gamma x^2/2 + \theta x`.

    :math:`p_\beta(x_i \mid I)` is a normal of mean :math:`(I_i - \theta_i)/\gamma_i`
    and variance :math:`1/(\beta\gamma_i)` truncated to :math:`x \ge 0`; the
    statistic is :math:`x`.  PGM's ReLU layer has the same energy.

    Parameters
    ----------
    theta : array_like of shape (n_units,)
    gamma : float or array_like of shape (n_units,), default 1.0
        Positive.

    Examples
    --------
    >>> layer = ReLU([0.0])
    >>> round(float(layer.log_normaliser(np.zeros((1, 1)))[0]), 12)  # log sqrt(pi/2)
    0.225791352645
    """

    _names = ("gamma", "theta")
    discrete = False

    @staticmethod
    def input_shift(delta):
        r"""``theta`` by :math:`-\delta` (a unit sees :math:`I - \theta`)."""
        return {"theta": -delta}

    def __init__(self, theta, gamma=1.0):
        self.theta = _vector(theta, "theta")
        self.gamma = _positive(gamma, "gamma", self.theta.shape[0])

    def check(self, name="layer", labels=None):
        super().check(name, labels)
        if not (self.gamma > 0).all():
            raise ValueError(f"{name}.gamma must be > 0, got {self.gamma.min():g} "
                             "(training diverged?)")
        return self

    def energy(self, x):
        r""":math:`\sum_i \gamma_i x_i^2/2 + \theta_i x_i`."""
        return (0.5 * self.gamma * x * x + self.theta * x).sum(axis=1)

    def _check_values(self, arr, name):
        super()._check_values(arr, name)
        if (arr < 0).any():
            raise ValueError(f"{name} must be >= 0 (ReLU units)")

    def log_normaliser(self, I, beta=1.0):
        r""":math:`\sum_i L(\beta\gamma_i, \beta(I_i - \theta_i))`."""
        return log_half_gaussian(beta * self.gamma, beta * (I - self.theta)).sum(axis=1)

    def mean(self, I, beta=1.0):
        r""":math:`\mathbb E[x \mid I]` of the truncated normal."""
        return half_gaussian_moments(beta * self.gamma, beta * (I - self.theta))[0]

    mean_statistic = mean

    def sample(self, I, *, rng, beta=1.0):
        """Truncated-normal draws by the inverse CDF (one uniform per unit)."""
        u = check_rng(rng).random(I.shape)
        return _sample_half_gaussian(beta * self.gamma, beta * (I - self.theta), u)

    def potential_gradient(self, x, I):
        r"""Per row: :math:`-x^2/2` for ``gamma``, :math:`-x` for ``theta``."""
        return {"gamma": -0.5 * x * x, "theta": -x}

    def normaliser_gradient(self, I):
        r"""Per row: :math:`-\mathbb E[x^2]/2` for ``gamma``, :math:`-\mathbb E[x]` for ``theta``."""
        m1, m2 = half_gaussian_moments(self.gamma, I - self.theta)
        return {"gamma": -0.5 * m2, "theta": -m1}

    def base(self):
        """The layer itself: annealing moves only the weights."""
        return self.copy()


class DReLU(Layer):
    r"""Double rectified units (Tubiana & Monasson): a half-Gaussian on each side of zero.

    .. math::
        E(x) = \gamma_+ x_+^2/2 + \theta_+ x_+ + \gamma_- x_-^2/2 + \theta_- x_-,
        \qquad x_+ = \max(x, 0),\ x_- = \max(-x, 0),

    with statistic :math:`x`.  With :math:`\gamma_\pm = \gamma` and
    :math:`\theta_\pm = 0` it is a Gaussian; with :math:`\theta_+ = \theta_- > 0`
    it has a gap around zero.  The log-normaliser is
    :math:`\log(e^{L(\gamma_+, I - \theta_+)} + e^{L(\gamma_-, -I - \theta_-)})`,
    exact in closed form.

    Parameters
    ----------
    theta_plus, theta_minus : array_like of shape (n_units,)
    gamma_plus, gamma_minus : float or array_like of shape (n_units,), default 1.0
        Positive.

    Examples
    --------
    >>> layer = DReLU([0.0], [0.0])  # a standard normal
    >>> round(float(layer.log_normaliser(np.zeros((1, 1)))[0]), 12)  # log sqrt(2 pi)
    0.918938533205
    """

    _names = ("gamma_plus", "theta_plus", "gamma_minus", "theta_minus")
    discrete = False

    @staticmethod
    def input_shift(delta):
        r""":math:`\theta_+` by :math:`-\delta` and :math:`\theta_-` by :math:`+\delta`
        (the two halves see :math:`I - \theta_+` and :math:`-I - \theta_-`)."""
        return {"theta_plus": -delta, "theta_minus": delta}

    def __init__(self, theta_plus, theta_minus, gamma_plus=1.0, gamma_minus=1.0):
        self.theta_plus = _vector(theta_plus, "theta_plus")
        n = self.theta_plus.shape[0]
        self.theta_minus = _vector(theta_minus, "theta_minus", n)
        self.gamma_plus = _positive(gamma_plus, "gamma_plus", n)
        self.gamma_minus = _positive(gamma_minus, "gamma_minus", n)

    def check(self, name="layer", labels=None):
        super().check(name, labels)
        if not ((self.gamma_plus > 0).all() and (self.gamma_minus > 0).all()):
            raise ValueError(f"{name}.gamma_plus and gamma_minus must be > 0 "
                             "(training diverged?)")
        return self

    def energy(self, x):
        r""":math:`\sum_i E(x_i)` as in the class docstring."""
        xp, xm = np.maximum(x, 0.0), np.maximum(-x, 0.0)
        return (0.5 * self.gamma_plus * xp * xp + self.theta_plus * xp
                + 0.5 * self.gamma_minus * xm * xm + self.theta_minus * xm).sum(axis=1)

    def _sides(self, I, beta):
        lp = log_half_gaussian(beta * self.gamma_plus, beta * (I - self.theta_plus))
        lm = log_half_gaussian(beta * self.gamma_minus, beta * (-I - self.theta_minus))
        return lp, lm

    def log_normaliser(self, I, beta=1.0):
        r""":math:`\sum_i \log(e^{L_+} + e^{L_-})`."""
        lp, lm = self._sides(I, beta)
        return np.logaddexp(lp, lm).sum(axis=1)

    def _parts(self, I, beta=1.0):
        lp, lm = self._sides(I, beta)
        # each side's probability from its own logistic: 1 - p_+ would lose p_-'s digits
        p_plus, p_minus = sigmoid(lp - lm), sigmoid(lm - lp)
        mp, sp = half_gaussian_moments(beta * self.gamma_plus, beta * (I - self.theta_plus))
        mm, sm = half_gaussian_moments(beta * self.gamma_minus, beta * (-I - self.theta_minus))
        return p_plus, p_minus, mp, sp, mm, sm

    def mean(self, I, beta=1.0):
        r""":math:`p_+ \mathbb E_+[x_+] - p_- \mathbb E_-[x_-]`."""
        p, q, mp, _, mm, _ = self._parts(I, beta)
        return p * mp - q * mm

    mean_statistic = mean

    def sample(self, I, *, rng, beta=1.0):
        """The side (one uniform per unit), then a truncated normal (one more)."""
        rng = check_rng(rng)
        lp, lm = self._sides(I, beta)
        plus = rng.random(I.shape) < sigmoid(lp - lm)
        u = rng.random(I.shape)
        xp = _sample_half_gaussian(beta * self.gamma_plus, beta * (I - self.theta_plus), u)
        xm = _sample_half_gaussian(beta * self.gamma_minus, beta * (-I - self.theta_minus), u)
        return np.where(plus, xp, -xm)

    def potential_gradient(self, x, I):
        r"""Per row: :math:`-x_\pm^2/2` for ``gamma_±``, :math:`-x_\pm` for ``theta_±``."""
        xp, xm = np.maximum(x, 0.0), np.maximum(-x, 0.0)
        return {"gamma_plus": -0.5 * xp * xp, "theta_plus": -xp,
                "gamma_minus": -0.5 * xm * xm, "theta_minus": -xm}

    def normaliser_gradient(self, I):
        r"""Per row: the conditional means of :meth:`potential_gradient`."""
        p, q, mp, sp, mm, sm = self._parts(I)
        return {"gamma_plus": -0.5 * p * sp, "theta_plus": -p * mp,
                "gamma_minus": -0.5 * q * sm, "theta_minus": -q * mm}

    def base(self):
        """The layer itself: annealing moves only the weights."""
        return self.copy()
