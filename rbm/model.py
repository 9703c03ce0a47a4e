r"""The binary restricted Boltzmann machine and its parameter-shaped gradient.

Convention used everywhere in the package and the book:

.. math::

    E(v, h) = -b^\top v - c^\top h - v^\top W h,
    \qquad v \in \{0,1\}^{n_\text{visible}},\ h \in \{0,1\}^{n_\text{hidden}},

with ``W`` of shape ``(n_visible, n_hidden)``, ``b`` of shape
``(n_visible,)`` and ``c`` of shape ``(n_hidden,)``.
"""

from dataclasses import dataclass

import numpy as np

from rbm._validation import (
    check_array_size,
    check_binary,
    check_parameter_values,
    check_finite_parameter,
    check_positive_float,
    check_positive_int,
    check_rng,
    as_float_array,
    as_real_array,
)
from rbm.special import sigmoid, softplus

__all__ = ["RBM", "Gradient", "check_model"]


class RBM:
    r"""A binary restricted Boltzmann machine.

    Parameters
    ----------
    W : array_like of shape (n_visible, n_hidden)
        Weights between visible unit ``i`` and hidden unit ``j``.
    b : array_like of shape (n_visible,)
        Visible biases.
    c : array_like of shape (n_hidden,)
        Hidden biases.

    Notes
    -----
    The energy of a joint state is

    .. math:: E(v, h) = -b^\top v - c^\top h - v^\top W h,

    and the model distribution is :math:`p(v, h) = e^{-E(v, h)} / Z`.
    The parameters are copied to float64 arrays; they may be updated in
    place (training does), but their shapes are fixed.

    Examples
    --------
    >>> model = RBM(W=[[1.0, -1.0]], b=[0.5], c=[0.0, 0.25])
    >>> model.n_visible, model.n_hidden
    (1, 2)
    >>> float(model.energy([1], [1, 0]))
    -1.5
    """

    def __init__(self, W, b, c):
        W_arr = as_float_array(W, "W")
        if W_arr.ndim != 2 or W_arr.shape[0] < 1 or W_arr.shape[1] < 1:
            raise ValueError(
                f"W must be a 2-d array of shape (n_visible, n_hidden) with both sizes >= 1, "
                f"got shape {W_arr.shape}"
            )
        n_visible, n_hidden = W_arr.shape
        self.W = check_finite_parameter(W_arr, "W", (n_visible, n_hidden))
        self.b = check_finite_parameter(b, "b", (n_visible,))
        self.c = check_finite_parameter(c, "c", (n_hidden,))

    @classmethod
    def random(cls, n_visible, n_hidden, *, rng, scale=0.01, bias_scale=0.0,
               distribution="normal"):
        """A model with random parameters.

        Parameters
        ----------
        n_visible, n_hidden : int
            Layer sizes, each at least 1.
        rng : numpy.random.Generator or int
            Source of randomness (an int is used as a seed).
        scale : float, default 0.01
            Scale of the weights: the standard deviation for
            ``distribution="normal"``, the half-width for ``"uniform"``.
        bias_scale : float, default 0.0
            Scale of both bias vectors, in the same distribution (zero biases
            by default, the usual initialisation).
        distribution : {"normal", "uniform"}
            ``"normal"`` draws N(0, scale**2); ``"uniform"`` draws U(-scale, scale).

        Examples
        --------
        >>> model = RBM.random(6, 4, scale=1.0, distribution="uniform", rng=0)
        >>> bool(np.all(np.abs(model.W) <= 1.0)), bool(np.all(model.b == 0))
        (True, True)
        """
        n_visible = check_positive_int(n_visible, "n_visible")
        n_hidden = check_positive_int(n_hidden, "n_hidden")
        check_array_size(n_visible * n_hidden, f"W of n_visible={n_visible} x n_hidden={n_hidden}")
        scale = check_positive_float(scale, "scale", allow_zero=True)
        bias_scale = check_positive_float(bias_scale, "bias_scale", allow_zero=True)
        rng = check_rng(rng)
        if distribution == "normal":
            draw = rng.standard_normal
        elif distribution == "uniform":
            def draw(size):
                return rng.uniform(-1.0, 1.0, size=size)
        else:
            raise ValueError(
                f"distribution must be 'normal' or 'uniform', got {distribution!r}"
            )
        W = scale * draw((n_visible, n_hidden))
        b = bias_scale * draw(n_visible)
        c = bias_scale * draw(n_hidden)
        return cls(W, b, c)

    @property
    def n_visible(self):
        """Number of visible units."""
        return self.W.shape[0]

    @property
    def n_hidden(self):
        """Number of hidden units."""
        return self.W.shape[1]

    def __repr__(self):
        return f"RBM(n_visible={self.n_visible}, n_hidden={self.n_hidden})"

    def copy(self):
        """An independent copy of the model."""
        return RBM(self.W, self.b, self.c)

    def transpose(self):
        r"""The model with the layers swapped: :math:`W \to W^\top`, :math:`b \leftrightarrow c`.

        It has the same energy with the roles of `v` and `h` exchanged, and
        so the same partition function.
        """
        return RBM(self.W.T, self.c, self.b)

    # -- energies ---------------------------------------------------------

    def energy(self, v, h):
        r"""Energy :math:`E(v, h) = -b^\top v - c^\top h - v^\top W h`.

        Parameters
        ----------
        v : array_like of shape (n_visible,) or (n_samples, n_visible)
        h : array_like of shape (n_hidden,) or (n_samples, n_hidden)
            Binary states; two-dimensional inputs must have the same number
            of rows.

        Returns
        -------
        float or ndarray of shape (n_samples,)
        """
        check_model(self)
        v2, v_single = check_binary(v, "v", self.n_visible)
        h2, h_single = check_binary(h, "h", self.n_hidden)
        if v2.shape[0] != h2.shape[0]:
            raise ValueError(
                f"v and h must have the same number of rows, got {v2.shape[0]} and {h2.shape[0]}"
            )
        e = -(v2 @ self.b) - (h2 @ self.c) - np.einsum("ni,ij,nj->n", v2, self.W, h2)
        return e[0] if (v_single and h_single) else e

    def free_energy(self, v):
        r"""Free energy :math:`F(v) = -\log \sum_h e^{-E(v, h)}`, in closed form.

        The sum over ``h`` factorises over the hidden units:

        .. math::
            F(v) = -b^\top v - \sum_j \operatorname{softplus}\big(c_j + (v^\top W)_j\big).

        Parameters
        ----------
        v : array_like of shape (n_visible,) or (n_samples, n_visible)

        Returns
        -------
        float or ndarray of shape (n_samples,)

        Examples
        --------
        >>> model = RBM(W=[[0.0]], b=[0.0], c=[0.0])
        >>> float(model.free_energy([1]))  # -log(e^0 + e^0)
        -0.693147...
        """
        check_model(self)
        v2, single = check_binary(v, "v", self.n_visible)
        f = -(v2 @ self.b) - softplus(v2 @ self.W + self.c).sum(axis=1)
        return f[0] if single else f

    # -- conditionals -----------------------------------------------------

    def prob_h_given_v(self, v):
        r""":math:`p(h_j = 1 \mid v) = \sigma(c_j + \sum_i W_{ij} v_i)` for every hidden unit.

        Parameters
        ----------
        v : array_like of shape (n_visible,) or (n_samples, n_visible)

        Returns
        -------
        ndarray of shape (n_hidden,) or (n_samples, n_hidden)
        """
        check_model(self)
        v2, single = check_binary(v, "v", self.n_visible)
        p = sigmoid(v2 @ self.W + self.c)
        return p[0] if single else p

    def prob_v_given_h(self, h):
        r""":math:`p(v_i = 1 \mid h) = \sigma(b_i + \sum_j W_{ij} h_j)` for every visible unit.

        Parameters
        ----------
        h : array_like of shape (n_hidden,) or (n_samples, n_hidden)

        Returns
        -------
        ndarray of shape (n_visible,) or (n_samples, n_visible)
        """
        check_model(self)
        h2, single = check_binary(h, "h", self.n_hidden)
        p = sigmoid(h2 @ self.W.T + self.b)
        return p[0] if single else p

    def sample_h_given_v(self, v, *, rng):
        """Draw ``h ~ p(h | v)``, each hidden unit independently.

        Parameters
        ----------
        v : array_like of shape (n_visible,) or (n_samples, n_visible)
        rng : numpy.random.Generator or int

        Returns
        -------
        ndarray of shape (n_hidden,) or (n_samples, n_hidden)
            Zeros and ones (float64).
        """
        p = self.prob_h_given_v(v)
        return (check_rng(rng).random(p.shape) < p).astype(float)

    def sample_v_given_h(self, h, *, rng):
        """Draw ``v ~ p(v | h)``, each visible unit independently.

        Parameters
        ----------
        h : array_like of shape (n_hidden,) or (n_samples, n_hidden)
        rng : numpy.random.Generator or int

        Returns
        -------
        ndarray of shape (n_visible,) or (n_samples, n_visible)
            Zeros and ones (float64).
        """
        p = self.prob_v_given_h(h)
        return (check_rng(rng).random(p.shape) < p).astype(float)


@dataclass(frozen=True)
class Gradient:
    r"""A quantity shaped like the parameters of an :class:`RBM`.

    Used for the gradient of the mean log-likelihood (the ascent direction)
    and for its estimates.  Supports ``+``, ``-``, multiplication and
    division by a scalar, so that estimates can be averaged.

    Attributes
    ----------
    W : ndarray of shape (n_visible, n_hidden)
    b : ndarray of shape (n_visible,)
    c : ndarray of shape (n_hidden,)

    Examples
    --------
    >>> g = Gradient(W=np.ones((2, 1)), b=np.zeros(2), c=np.ones(1))
    >>> (2 * g - g).flat().tolist()
    [1.0, 1.0, 0.0, 0.0, 1.0]
    """

    W: np.ndarray
    b: np.ndarray
    c: np.ndarray

    def __post_init__(self):
        # Real arrays of consistent shapes; float64 arrays are kept as they are (no copy).
        for field in ("W", "b", "c"):
            object.__setattr__(self, field, as_real_array(getattr(self, field), field))
        W, b, c = self.W, self.b, self.c
        if W.ndim != 2 or b.shape != (W.shape[0],) or c.shape != (W.shape[1],):
            raise ValueError(f"a Gradient needs W of shape (n_visible, n_hidden), b (n_visible,) "
                             f"and c (n_hidden,), got W {W.shape}, b {b.shape}, c {c.shape}")

    def flat(self):
        """All entries in one vector: ``W`` (row-major), then ``b``, then ``c``."""
        return np.concatenate([np.ravel(self.W), np.ravel(self.b), np.ravel(self.c)])

    @classmethod
    def from_flat(cls, x, n_visible, n_hidden):
        """Inverse of :meth:`flat`."""
        n_visible = check_positive_int(n_visible, "n_visible")
        n_hidden = check_positive_int(n_hidden, "n_hidden")
        x = as_float_array(x, "x")
        n_w = n_visible * n_hidden
        if x.shape != (n_w + n_visible + n_hidden,):
            raise ValueError(
                f"x must have shape ({n_w + n_visible + n_hidden},), got {x.shape}"
            )
        return cls(x[:n_w].reshape(n_visible, n_hidden), x[n_w:n_w + n_visible].copy(),
                   x[n_w + n_visible:].copy())

    def _combine(self, other, op):
        if not isinstance(other, Gradient):
            return NotImplemented
        if other.W.shape != self.W.shape:
            raise ValueError(f"Gradients of different shapes cannot be combined: "
                             f"W {self.W.shape} and {other.W.shape}")
        return Gradient(op(self.W, other.W), op(self.b, other.b), op(self.c, other.c))

    def __add__(self, other):
        return self._combine(other, np.add)

    def __sub__(self, other):
        return self._combine(other, np.subtract)

    def __neg__(self):
        return Gradient(-self.W, -self.b, -self.c)

    def __mul__(self, scalar):
        if not np.isscalar(scalar):
            return NotImplemented
        return Gradient(self.W * scalar, self.b * scalar, self.c * scalar)

    __rmul__ = __mul__

    def __truediv__(self, scalar):
        if not np.isscalar(scalar):
            return NotImplemented
        return Gradient(self.W / scalar, self.b / scalar, self.c / scalar)

    def max_abs(self):
        """The largest absolute entry over ``W``, ``b`` and ``c``."""
        return float(np.max(np.abs(self.flat())))


def check_model(model, name="model"):
    """Require an :class:`~rbm.model.RBM` whose parameters are still consistent and finite.

    The parameters may be changed after the model was made (training does, in
    place), so their shapes and values are checked again on every use: a NaN
    written into ``W``, or a bias of the wrong length, fails here, by name.
    """
    if not isinstance(model, RBM):
        raise TypeError(f"{name} must be an rbm.RBM, got {type(model).__name__}")
    W, b, c = model.W, model.b, model.c
    for field, value in (("W", W), ("b", b), ("c", c)):
        # Exactly ndarray: np.matrix is a subclass whose products have other shapes.
        if type(value) is not np.ndarray or value.dtype != np.float64:
            raise TypeError(f"{name}.{field} must be a float64 numpy array, got "
                            f"{type(value).__name__} of dtype {getattr(value, 'dtype', None)}")
    if W.ndim != 2 or b.shape != (W.shape[0],) or c.shape != (W.shape[1],):
        raise ValueError(f"{name} has inconsistent shapes: W {W.shape}, b {b.shape}, c {c.shape}; "
                         "W must be (n_visible, n_hidden), b (n_visible,) and c (n_hidden,)")
    for field, value in (("W", W), ("b", b), ("c", c)):
        check_parameter_values(value, f"{name}.{field}",
                                " (changed after the model was made, or training diverged)")
    return model
