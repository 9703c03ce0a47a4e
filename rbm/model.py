r"""The restricted Boltzmann machine over any two layers, and its parameter-shaped container.

One model type, :class:`RBM`: a weight array ``W`` between a visible and a
hidden layer (:mod:`rbm.layers`), with energy

.. math::
    E(v, h) = E_\text{v}(v) + E_\text{h}(h) - s_\text{v}(v) \cdot W \cdot s_\text{h}(h).

``RBM(W, b, c)`` with two bias vectors is the binary model used everywhere in
the book,

.. math::
    E(v, h) = -b^\top v - c^\top h - v^\top W h,
    \qquad v \in \{0,1\}^{n_\text{visible}},\ h \in \{0,1\}^{n_\text{hidden}},

with ``W`` of shape ``(n_visible, n_hidden)``, ``b`` of shape
``(n_visible,)`` and ``c`` of shape ``(n_hidden,)``: two
:class:`~rbm.layers.Binary` layers.  ``RBM(W, visible, hidden)`` takes any
two layers, ``W`` of shape ``visible.shape + hidden.shape``.

Every parameter has a name: ``W``; the visible layer's bias is ``b`` and its
other parameters carry the suffix ``_v`` (``log_sigma_v``); the hidden
layer's bias is ``c`` and its others carry ``_h`` (``gamma_plus_h``).
:class:`Gradient` holds one array per name.
"""

import numpy as np

from rbm._validation import (
    as_float_array,
    as_real_array,
    check_array_size,
    check_finite_parameter,
    check_parameter_values,
    check_positive_float,
    check_positive_int,
    check_rng,
)
from rbm.layers import Binary, Layer

__all__ = ["RBM", "Gradient", "check_model", "parameter_names", "zero_sum_gauge"]


def parameter_names(side, layer):
    """The model's name for each of `layer`'s parameters on `side` ("visible" or "hidden")."""
    bias, suffix = ("b", "_v") if side == "visible" else ("c", "_h")
    return {k: (bias if k == "bias" else k + suffix) for k in layer.parameters()}


class RBM:
    r"""A restricted Boltzmann machine: weights ``W`` between a visible and a hidden layer.

    Parameters
    ----------
    W : array_like of shape ``visible.shape + hidden.shape``
        Weights; ``(n_visible, n_hidden)`` for layers of scalar units.
    visible, hidden : rbm.layers.Layer or array_like
        A layer, or (for the binary model) the biases: of shape (n_visible,) for
        `visible`, (n_hidden,) for `hidden`.
        The layers (copied), or the biases ``b`` and ``c`` of the binary model
        (two :class:`~rbm.layers.Binary` layers).

    Notes
    -----
    The energy of a joint state is
    :math:`E(v, h) = E_\text{v}(v) + E_\text{h}(h) - s_\text{v}(v)\cdot W\cdot s_\text{h}(h)`
    (for the binary model :math:`-b^\top v - c^\top h - v^\top W h`), and
    :math:`p(v, h) = e^{-E(v, h)} / Z`.  The parameters are copied to
    float64 arrays; they may be updated in place (training does), but their
    shapes are fixed.

    Examples
    --------
    >>> model = RBM(W=[[1.0, -1.0]], b=[0.5], c=[0.0, 0.25])
    >>> model.n_visible, model.n_hidden
    (1, 2)
    >>> float(model.energy([1], [1, 0]))
    -1.5
    >>> from rbm.layers import Gaussian, Binary
    >>> RBM(np.zeros((2, 3)), Gaussian(np.zeros(2)), Binary(np.zeros(3)))
    RBM(Gaussian(n_units=2), Binary(n_units=3))
    """

    def __init__(self, W=None, visible=None, hidden=None, *, b=None, c=None):
        if b is not None or c is not None:  # the binary model's keywords, RBM(W=, b=, c=)
            if visible is not None or hidden is not None:
                raise TypeError("give the biases b and c, or the layers visible and hidden, "
                                "not both")
            visible, hidden = b, c
        W_arr = as_float_array(W, "W")
        if not isinstance(visible, Layer) or not isinstance(hidden, Layer):
            if isinstance(visible, Layer) or isinstance(hidden, Layer):
                raise TypeError("visible and hidden must both be layers (rbm.layers), or both "
                                "bias vectors of the binary model")
            if W_arr.ndim != 2 or W_arr.shape[0] < 1 or W_arr.shape[1] < 1:
                raise ValueError(
                    f"W must be a 2-d array of shape (n_visible, n_hidden) with both sizes "
                    f">= 1, got shape {W_arr.shape}")
            n_visible, n_hidden = W_arr.shape
            visible = Binary(check_finite_parameter(visible, "b", (n_visible,)))
            hidden = Binary(check_finite_parameter(hidden, "c", (n_hidden,)))
        else:
            visible, hidden = visible.copy().check("visible"), hidden.copy().check("hidden")
        shape = visible.shape + hidden.shape
        if W_arr.shape != shape:
            raise ValueError(f"W must have shape visible.shape + hidden.shape = {shape}, got "
                             f"{W_arr.shape}")
        self.W = check_finite_parameter(W_arr, "W", shape)
        self.visible, self.hidden = visible, hidden

    @classmethod
    def random(cls, n_visible, n_hidden, *, rng, scale=0.01, bias_scale=0.0,
               distribution="normal"):
        """A model with random weights (and, for the binary model, random biases).

        Parameters
        ----------
        n_visible, n_hidden : int or rbm.layers.Layer
            Layer sizes, each at least 1 (the binary model), or two layers
            (copied, their parameters kept) between which weights are drawn.
        rng : numpy.random.Generator or int
            Source of randomness (an int is used as a seed).
        scale : float, default 0.01
            Scale of the weights: the standard deviation for
            ``distribution="normal"``, the half-width for ``"uniform"``.
        bias_scale : float, default 0.0
            Scale of both bias vectors of the binary model, in the same
            distribution (zero biases by default, the usual initialisation).
        distribution : {"normal", "uniform"}
            ``"normal"`` draws N(0, scale**2); ``"uniform"`` draws U(-scale, scale).

        Examples
        --------
        >>> model = RBM.random(6, 4, scale=1.0, distribution="uniform", rng=0)
        >>> bool(np.all(np.abs(model.W) <= 1.0)), bool(np.all(model.b == 0))
        (True, True)
        >>> from rbm.layers import Potts, DReLU
        >>> RBM.random(Potts(np.zeros((5, 4))), DReLU(np.zeros(2), np.zeros(2)), rng=0).W.shape
        (5, 4, 2)
        """
        layered = isinstance(n_visible, Layer) and isinstance(n_hidden, Layer)
        if layered:
            shape = n_visible.shape + n_hidden.shape
            check_array_size(int(np.prod(shape)), f"W of shape {shape}")
        else:
            n_visible = check_positive_int(n_visible, "n_visible")
            n_hidden = check_positive_int(n_hidden, "n_hidden")
            shape = (n_visible, n_hidden)
            check_array_size(n_visible * n_hidden,
                             f"W of n_visible={n_visible} x n_hidden={n_hidden}")
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
        W = scale * draw(shape)
        if layered:
            if bias_scale:
                raise ValueError("bias_scale applies to the binary model; set the layers' "
                                 "parameters instead")
            return cls(W, n_visible, n_hidden)
        b = bias_scale * draw(n_visible)
        c = bias_scale * draw(n_hidden)
        return cls(W, b, c)

    # -- sizes, parameters, checks ---------------------------------------------------

    @property
    def n_visible(self):
        """Number of visible units."""
        return self.visible.n_units

    @property
    def n_hidden(self):
        """Number of hidden units."""
        return self.hidden.n_units

    def _bias(self, side):
        layer = getattr(self, side)
        if "bias" not in layer.parameters():
            raise AttributeError(f"the {side} layer {layer!r} has no bias")
        return layer.bias

    def _set_bias(self, side, value):
        # no shape check here: every use checks the model again, by name
        getattr(self, side).bias = as_float_array(value, "b" if side == "visible" else "c")

    b = property(lambda self: self._bias("visible"),
                 lambda self, value: self._set_bias("visible", value),
                 doc="The visible layer's bias (``visible.bias``).")
    c = property(lambda self: self._bias("hidden"),
                 lambda self, value: self._set_bias("hidden", value),
                 doc="The hidden layer's bias (``hidden.bias``).")

    @property
    def is_binary(self):
        """Whether both layers are {0,1} layers (the binary model of the book)."""
        return self.visible.bits == (1.0, 0.0) and self.hidden.bits == (1.0, 0.0)

    def parameters(self):
        """Every parameter array by name (``W``, ``b``, ``c``, ``log_sigma_v``...): the arrays
        themselves, so that training can update them in place."""
        out = {"W": self.W}
        for side in ("visible", "hidden"):
            layer = getattr(self, side)
            names = parameter_names(side, layer)
            out.update({names[k]: v for k, v in layer.parameters().items()})
        return out

    def check(self, name="model"):
        """Require consistent shapes and finite parameters (they may change after creation)."""
        W = self.W
        if type(W) is not np.ndarray or W.dtype != np.float64:
            raise TypeError(f"{name}.W must be a float64 numpy array, got "
                            f"{type(W).__name__} of dtype {getattr(W, 'dtype', None)}")
        for side in ("visible", "hidden"):
            layer = getattr(self, side)
            layer.check(f"{name}.{side}", {k: f"{name}.{v}"
                                           for k, v in parameter_names(side, layer).items()})
        if W.shape != self.visible.shape + self.hidden.shape:
            if self.is_binary:
                raise ValueError(
                    f"{name} has inconsistent shapes: W {W.shape}, b {self.b.shape}, c "
                    f"{self.c.shape}; W must be (n_visible, n_hidden), b (n_visible,) and c "
                    "(n_hidden,)")
            raise ValueError(f"{name} has inconsistent shapes: W {W.shape}, layers "
                             f"{self.visible.shape} and {self.hidden.shape}")
        check_parameter_values(W, f"{name}.W",
                               " (changed after the model was made, or training diverged)")
        return self

    def __repr__(self):
        if self.is_binary:
            return f"RBM(n_visible={self.n_visible}, n_hidden={self.n_hidden})"
        return f"RBM({self.visible!r}, {self.hidden!r})"

    def copy(self):
        """An independent copy of the model."""
        return RBM(self.W, self.visible, self.hidden)

    def transpose(self):
        r"""The model with the layers swapped (:math:`W \to W^\top`, :math:`b \leftrightarrow c`).

        It has the same energy with the roles of `v` and `h` exchanged, and
        so the same partition function.
        """
        nv = len(self.visible.shape)
        axes = tuple(range(nv, self.W.ndim)) + tuple(range(nv))
        return RBM(self.W.transpose(axes), self.hidden, self.visible)

    def to_binary(self):
        r"""The binary RBM with the same distribution over the layers' bits, and the constant
        between the energies.

        Each unit of a {0,1} or ±1 layer has statistic :math:`s = \alpha x + \beta` of a
        bit :math:`x` (:math:`\alpha = 2, \beta = -1` for a spin), so

        .. math::
            -E(v, h) = b'^\top x + c'^\top y + x^\top W' y + \kappa,\quad
            W' = \alpha_v \alpha_h W,

        with :math:`b' = \alpha_v (b + W\beta_h 1)`, :math:`c' = \alpha_h (c + W^\top\beta_v 1)`
        and :math:`\kappa = \beta_v b^\top 1 + \beta_h c^\top 1 + \beta_v\beta_h 1^\top W 1`.
        Hence :math:`\log Z = \log Z' + \kappa` and :math:`p(v) = p'(x)`; for two {0,1}
        layers the map is the identity, exactly.

        Returns
        -------
        (RBM, float)
            The binary model and :math:`\kappa`.

        Raises
        ------
        ValueError
            If a layer is not a {0,1} or ±1 layer.

        Examples
        --------
        >>> from rbm.layers import Spin
        >>> binary, kappa = RBM(np.zeros((1, 1)), Spin([0.5]), Spin([0.0])).to_binary()
        >>> binary.b.tolist(), binary.c.tolist(), kappa
        ([1.0], [0.0], -0.5)
        """
        self.check()
        for side in ("visible", "hidden"):
            if getattr(self, side).bits is None:
                raise ValueError(f"to_binary needs {{0,1}} or ±1 layers; model.{side} is "
                                 f"{getattr(self, side)!r}")
        (av, bv), (ah, bh) = self.visible.bits, self.hidden.bits
        W, b, c = self.W, self.b, self.c
        if (av, bv, ah, bh) == (1.0, 0.0, 1.0, 0.0):
            return RBM(W, b, c), 0.0
        binary = RBM((av * ah) * W, av * (b + W @ np.full(W.shape[1], bh)),
                     ah * (c + W.T @ np.full(W.shape[0], bv)))
        kappa = float(bv * b.sum() + bh * c.sum() + bv * bh * W.sum())
        return binary, kappa

    # -- inputs, energies ---------------------------------------------------------------

    def coupling_matrix(self):
        r"""The weights as one matrix, a row per visible and a column per hidden statistic.

        For layers of one statistic per unit this is ``W`` itself; a Potts layer's
        ``(n_units, q)`` statistic is flattened (row-major) into ``n_units * q`` rows or columns.

        Returns
        -------
        ndarray of shape (n_visible_statistics, n_hidden_statistics)
            A view of ``W``, not a copy.

        Examples
        --------
        >>> model = RBM.random(3, 2, rng=0)
        >>> model.coupling_matrix().shape
        (3, 2)
        """
        return self.W.reshape(int(np.prod(self.visible.shape)), int(np.prod(self.hidden.shape)))

    def input_hidden(self, v):
        r"""The hidden layer's input :math:`s_\text{v}(v)\cdot W`, for checked rows `v`."""
        s = self.visible.statistic(v)
        if len(self.visible.shape) == 1 and len(self.hidden.shape) == 1:
            return s @ self.W
        out = s.reshape(s.shape[0], -1) @ self.coupling_matrix()
        return out.reshape((s.shape[0],) + self.hidden.shape)

    def input_visible(self, h):
        r"""The visible layer's input :math:`W\cdot s_\text{h}(h)`, for checked rows `h`."""
        s = self.hidden.statistic(h)
        if len(self.visible.shape) == 1 and len(self.hidden.shape) == 1:
            return s @ self.W.T
        out = s.reshape(s.shape[0], -1) @ self.coupling_matrix().T
        return out.reshape((s.shape[0],) + self.visible.shape)

    def input_visible_from_statistic(self, S):
        """The visible layer's input from hidden statistics `S` of shape ``(n, hidden size)``."""
        out = S @ self.coupling_matrix().T
        return out.reshape((S.shape[0],) + self.visible.shape)

    def _pair(self, v, h):
        self.check()
        v2, v1 = self.visible.check_states(v, "v")
        h2, h1 = self.hidden.check_states(h, "h")
        if v2.shape[0] != h2.shape[0]:
            raise ValueError(f"v and h must have the same number of rows, got {v2.shape[0]} "
                             f"and {h2.shape[0]}")
        return v2, h2, v1 and h1

    def energy(self, v, h):
        r"""Energy :math:`E(v, h)` (binary model: :math:`-b^\top v - c^\top h - v^\top W h`).

        Parameters
        ----------
        v : array_like of shape (n_visible,) or (n_samples, n_visible)
        h : array_like of shape (n_hidden,) or (n_samples, n_hidden)
            States; two-dimensional inputs must have the same number of rows.

        Returns
        -------
        float or ndarray of shape (n_samples,)
        """
        v2, h2, single = self._pair(v, h)
        sv = self.visible.statistic(v2).reshape(v2.shape[0], -1)
        sh = self.hidden.statistic(h2).reshape(h2.shape[0], -1)
        coupling = np.einsum("ni,ij,nj->n", sv, self.coupling_matrix(), sh)
        e = self.visible.energy(v2) + self.hidden.energy(h2) - coupling
        return e[0] if single else e

    def free_energy(self, v):
        r"""Free energy :math:`F(v) = -\log \sum_h e^{-E(v, h)}`, in closed form.

        The sum (or integral) over ``h`` factorises over the hidden units:
        :math:`F(v) = E_\text{v}(v) - A_\text{h}(s_\text{v}(v)\cdot W)`; for the binary model

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
        self.check()
        v2, single = self.visible.check_states(v, "v")
        f = self.visible.energy(v2) - self.hidden.log_normaliser(self.input_hidden(v2))
        return f[0] if single else f

    def free_energy_hidden(self, h):
        r""":math:`F(h) = -\log \sum_v e^{-E(v, h)} = E_\text{h}(h) - A_\text{v}(W\cdot s_\text{h}(h))`.

        Parameters
        ----------
        h : array_like of shape (n_hidden,) or (n_samples, n_hidden)

        Returns
        -------
        float or ndarray of shape (n_samples,)
        """
        self.check()
        h2, single = self.hidden.check_states(h, "h")
        f = self.hidden.energy(h2) - self.visible.log_normaliser(self.input_visible(h2))
        return f[0] if single else f

    # -- conditionals -----------------------------------------------------

    def _given(self, x, side, op):
        """``op(layer, input)`` for the other layer, given rows `x` of `side` (checked)."""
        self.check()
        source = getattr(self, side)
        x2, single = source.check_states(x, "v" if side == "visible" else "h")
        if side == "visible":
            out = op(self.hidden, self.input_hidden(x2))
        else:
            out = op(self.visible, self.input_visible(x2))
        return out[0] if single else out

    def mean_h_given_v(self, v):
        r""":math:`\mathbb E[h \mid v]` for every hidden unit (binary: :math:`\sigma(c + W^\top v)`).

        Parameters
        ----------
        v : array_like of shape (n_visible,) or (n_samples, n_visible)

        Returns
        -------
        ndarray of shape (n_hidden,) or (n_samples, n_hidden)
            (for Potts hidden units, the probability of each category).
        """
        return self._given(v, "visible", lambda layer, I: layer.mean(I))

    def mean_v_given_h(self, h):
        r""":math:`\mathbb E[v \mid h]` for every visible unit (binary: :math:`\sigma(b + W h)`).

        Parameters
        ----------
        h : array_like of shape (n_hidden,) or (n_samples, n_hidden)

        Returns
        -------
        ndarray of shape (n_visible,) or (n_samples, n_visible)
            (for Potts visible units, the probability of each category).
        """
        return self._given(h, "hidden", lambda layer, I: layer.mean(I))

    def prob_h_given_v(self, v):
        r""":math:`p(h_j = 1 \mid v) = \sigma(c_j + \sum_i W_{ij} v_i)`: :meth:`mean_h_given_v`.

        Parameters
        ----------
        v : array_like of shape (n_visible,) or (n_samples, n_visible)

        Returns
        -------
        ndarray of shape (n_hidden,) or (n_samples, n_hidden)
        """
        return self.mean_h_given_v(v)

    def prob_v_given_h(self, h):
        r""":math:`p(v_i = 1 \mid h) = \sigma(b_i + \sum_j W_{ij} h_j)`: :meth:`mean_v_given_h`.

        Parameters
        ----------
        h : array_like of shape (n_hidden,) or (n_samples, n_hidden)

        Returns
        -------
        ndarray of shape (n_visible,) or (n_samples, n_visible)
        """
        return self.mean_v_given_h(h)

    def sample_h_given_v(self, v, *, rng, beta=1.0):
        r"""Draw ``h ~ p(h | v)`` (at inverse temperature `beta`), each hidden unit independently.

        Parameters
        ----------
        v : array_like of shape (n_visible,) or (n_samples, n_visible)
        rng : numpy.random.Generator or int
        beta : float, default 1.0

        Returns
        -------
        ndarray of shape (n_hidden,) or (n_samples, n_hidden)
            States as float64 (zeros and ones for the binary model).
        """
        return self._given(v, "visible",
                           lambda layer, I: layer.sample(I, rng=check_rng(rng), beta=beta))

    def sample_v_given_h(self, h, *, rng, beta=1.0):
        r"""Draw ``v ~ p(v | h)`` (at inverse temperature `beta`), each visible unit independently.

        Parameters
        ----------
        h : array_like of shape (n_hidden,) or (n_samples, n_hidden)
        rng : numpy.random.Generator or int
        beta : float, default 1.0

        Returns
        -------
        ndarray of shape (n_visible,) or (n_samples, n_visible)
        """
        return self._given(h, "hidden",
                           lambda layer, I: layer.sample(I, rng=check_rng(rng), beta=beta))


class Gradient:
    r"""A quantity shaped like the parameters of an :class:`RBM`: one array per name.

    Used for the gradient of the mean log-likelihood (the ascent direction)
    and for its estimates.  The binary model's fields are ``W``, ``b`` and
    ``c``; other layers add theirs (``log_sigma_v``, ``gamma_h``...), in
    the order of :meth:`RBM.parameters`.  Each field is an attribute.
    Supports ``+``, ``-``, multiplication and division by a scalar, so that
    estimates can be averaged.

    Parameters
    ----------
    W, b, c : array_like, optional
    **fields : array_like
        The other fields, by name.

    Examples
    --------
    >>> g = Gradient(W=np.ones((2, 1)), b=np.zeros(2), c=np.ones(1))
    >>> (2 * g - g).flat().tolist()
    [1.0, 1.0, 0.0, 0.0, 1.0]
    >>> Gradient(W=np.ones((1, 1)), b=np.zeros(1), gamma_h=np.ones(1)).names
    ('W', 'b', 'gamma_h')
    """

    def __init__(self, W=None, b=None, c=None, **fields):
        given = {"W": W, "b": b, "c": c}
        given.update(fields)
        # Real arrays; float64 arrays are kept as they are (no copy).
        self.fields = {k: as_real_array(v, k) for k, v in given.items() if v is not None}
        if set(self.fields) == {"W", "b", "c"}:
            W, b, c = self.fields["W"], self.fields["b"], self.fields["c"]
            if b.ndim == 1 and c.ndim == 1 and (
                    W.ndim != 2 or b.shape != (W.shape[0],) or c.shape != (W.shape[1],)):
                raise ValueError(f"a Gradient needs W of shape (n_visible, n_hidden), b "
                                 f"(n_visible,) and c (n_hidden,), got W {W.shape}, b "
                                 f"{b.shape}, c {c.shape}")

    @classmethod
    def from_fields(cls, fields):
        """A Gradient of the fields of a dict, in its order."""
        new = cls(**dict(fields))
        new.fields = {k: new.fields[k] for k in fields}
        return new

    @property
    def names(self):
        """The fields' names, in order."""
        return tuple(self.fields)

    def __getattr__(self, name):
        fields = self.__dict__.get("fields", {})
        if name in fields:
            return fields[name]
        raise AttributeError(f"this Gradient has no field {name!r}; it has "
                             f"{list(fields)}")

    def __repr__(self):
        return f"Gradient({', '.join(self.fields)})"

    def flat(self):
        """All entries in one vector: the fields in order, each row-major (``W``, ``b``, ``c``)."""
        return np.concatenate([np.ravel(v) for v in self.fields.values()])

    @classmethod
    def from_flat(cls, x, n_visible, n_hidden):
        """Inverse of :meth:`flat` for the binary model."""
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
        if {k: v.shape for k, v in self.fields.items()} != {
                k: v.shape for k, v in other.fields.items()}:
            raise ValueError(f"Gradients of different shapes or fields cannot be combined: "
                             f"W {self.fields.get('W', np.empty(0)).shape} and "
                             f"{other.fields.get('W', np.empty(0)).shape}, fields "
                             f"{list(self.fields)} and {list(other.fields)}")
        return Gradient.from_fields({k: op(v, other.fields[k]) for k, v in self.fields.items()})

    def __add__(self, other):
        return self._combine(other, np.add)

    def __sub__(self, other):
        return self._combine(other, np.subtract)

    def __neg__(self):
        return Gradient.from_fields({k: -v for k, v in self.fields.items()})

    def __mul__(self, scalar):
        if not np.isscalar(scalar):
            return NotImplemented
        return Gradient.from_fields({k: v * scalar for k, v in self.fields.items()})

    __rmul__ = __mul__

    def __truediv__(self, scalar):
        if not np.isscalar(scalar):
            return NotImplemented
        return Gradient.from_fields({k: v / scalar for k, v in self.fields.items()})

    def max_abs(self):
        """The largest absolute entry over every field."""
        return float(np.max(np.abs(self.flat())))


def check_model(model, name="model", *, binary=None, discrete=None):
    """Require an :class:`RBM` whose parameters are still consistent and finite.

    The parameters may be changed after the model was made (training does, in
    place), so their shapes and values are checked again on every use: a NaN
    written into ``W``, or a bias of the wrong length, fails here, by name.

    Parameters
    ----------
    model : RBM
    name : str
    binary : str, optional
        If given, the name of an algorithm that needs two {0,1} layers: any
        other layer is refused with a ValueError naming it and the property.
    discrete : str, optional
        If given, the name of an algorithm that needs a discrete visible
        layer (one it can enumerate or flip unit by unit).
    """
    if not isinstance(model, RBM):
        raise TypeError(f"{name} must be an rbm.RBM, got {type(model).__name__}")
    model.check(name)
    if binary is not None:
        for side in ("visible", "hidden"):
            layer = getattr(model, side)
            if layer.bits != (1.0, 0.0):
                raise ValueError(f"{binary} needs {{0,1}} units in both layers (rbm.layers."
                                 f"Binary); {name}.{side} is {layer!r}")
    if discrete is not None and not model.visible.discrete:
        raise ValueError(f"{discrete} needs a discrete visible layer; {name}.visible is "
                         f"{model.visible!r}, which is continuous")
    return model


def zero_sum_gauge(model):
    r"""The equivalent model whose Potts visible layer has zero-sum weights and fields.

    :math:`W_{i,a,\mu} \to W_{i,a,\mu} - \bar W_{i,\mu}` and
    :math:`b_{i,a} \to b_{i,a} - \bar b_i` (bars: means over the categories
    :math:`a`); the hidden input loses :math:`\sum_i \bar W_{i,\mu}` for every
    visible state, which the hidden layer's field regains.  :math:`p(v, h)` is
    unchanged; :math:`\log Z` changes by :math:`-\sum_i \bar b_i` (for a Gaussian
    hidden layer also by the change of its energy's constant :math:`b^2/2\sigma^2`).

    Parameters
    ----------
    model : RBM
        With a Potts visible layer and any hidden layer (its ``input_shift``
        moves its field).

    Returns
    -------
    RBM
    """
    check_model(model)
    if model.visible.n_states is None or len(model.visible.shape) != 2:
        raise ValueError(f"zero_sum_gauge needs a Potts visible layer, got {model.visible!r}")
    W_mean = model.W.mean(axis=1, keepdims=True)
    shift = W_mean[:, 0].sum(axis=0)
    visible = model.visible.copy()
    visible.bias -= visible.bias.mean(axis=1, keepdims=True)
    hidden = model.hidden.copy()
    for key, change in hidden.input_shift(shift).items():
        getattr(hidden, key)[...] += change
    return RBM(model.W - W_mean, visible, hidden)
