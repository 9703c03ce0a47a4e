r"""Mini-batch gradient ascent on the log-likelihood, with any gradient estimator.

An *estimator* is an object with a method ``gradient(model, batch, *, rng) ->
Gradient`` that returns an estimate of the gradient of the mean
log-likelihood of the batch (the ascent direction):
:class:`rbm.estimators.CD`, :class:`rbm.estimators.PCD`,
:class:`rbm.estimators.ExactGradient`, or one of your own.

Each update, with learning rate :math:`\eta`, momentum :math:`\mu` and
weight decay :math:`\lambda` (on ``W`` only; the biases are not decayed),

.. math::
    u_W \leftarrow \mu\, u_W + \eta\,(\hat g_W - \lambda W),\qquad W \leftarrow W + u_W,

and likewise for ``b`` and ``c`` with :math:`\lambda = 0`.

:func:`train` has one loop over epochs and batches; what an update does is
behind a *stepper* with three methods (``begin_epoch``, ``step``, ``sync``):
the general stepper asks the estimator for a gradient and applies the rule
above, to every parameter of the model (any two layers); for this
package's :class:`~rbm.estimators.CD` and :class:`~rbm.estimators.PCD` on a
model of two {0,1} layers (``model.is_binary``) the fused stepper (the
private module ``rbm._fused``) makes the same updates from the same draws
with far fewer array operations.
"""

from dataclasses import dataclass, field

import numpy as np

from rbm._validation import (
    check_bool,
    check_positive_float,
    check_positive_int,
    check_rng,
)
from rbm._fused import FusedTrainer
from rbm.estimators import CD, PCD
from rbm.exact import enumerated_side, log_likelihood
from rbm.model import Gradient, check_model, parameter_names

__all__ = ["MAX_TRACKING_BITS", "History", "SparsityPenalty", "reconstruction_error", "train"]

# Tracking evaluates the exact log-likelihood, enumerating the smaller layer:
# 2**20 states take about a second per evaluation.
MAX_TRACKING_BITS = 20


@dataclass
class History:
    """What :func:`train` measured, at the same points of training.

    Attributes
    ----------
    updates : list of int
        Number of parameter updates made before the measurement (0 is the
        initial model).
    log_likelihood : list of float
        Exact mean log-likelihood of the full training data.
    reconstruction_error : list of float
        :func:`reconstruction_error` of the full training data.
    """

    updates: list = field(default_factory=list)
    log_likelihood: list = field(default_factory=list)
    reconstruction_error: list = field(default_factory=list)


class _GeneralStepper:
    """Updates from any estimator's gradient, by the rule of the module docstring."""

    def __init__(self, estimator, model, learning_rate, momentum, weight_decay):
        self.estimator = estimator
        self.model = model
        self.learning_rate, self.momentum, self.weight_decay = learning_rate, momentum, weight_decay
        self.params = model.parameters()
        self.velocity = {name: np.zeros_like(p) for name, p in self.params.items()}

    @staticmethod
    def shuffle(data, order):
        return data[order]

    def begin_epoch(self, shuffled, batch_size, rng):
        pass

    def step(self, batch, rng):
        grad = self.estimator.gradient(self.model, batch, rng=rng)
        if not isinstance(grad, Gradient):
            raise TypeError(f"estimator.gradient must return an rbm.Gradient, got "
                            f"{type(grad).__name__}")
        steps = grad.fields
        shapes = {name: np.shape(step) for name, step in steps.items()}
        if shapes != {name: p.shape for name, p in self.params.items()}:
            raise ValueError(f"estimator returned a Gradient with W of shape "
                             f"{np.shape(steps.get('W'))}, but the model's W has shape "
                             f"{self.model.W.shape}"
                             if shapes.get("W") != self.model.W.shape else
                             f"estimator returned a gradient with fields {shapes}, but the "
                             f"model's parameters are {list(self.params)}")
        if self.weight_decay:
            steps = dict(steps, W=steps["W"] - self.weight_decay * self.model.W)
        for name, param in self.params.items():
            u, step = self.velocity[name], steps[name]
            if self.momentum:
                u *= self.momentum
                u += self.learning_rate * step
                param += u
            else:
                param += self.learning_rate * step

    def sync(self):
        pass  # the model's arrays are updated in place at every step


def _stepper(estimator, model, learning_rate, momentum, weight_decay):
    """The fused stepper for this package's CD and PCD on two {0,1} layers, else the general."""
    if type(estimator) in (CD, PCD) and model.is_binary:
        return FusedTrainer(model, estimator, learning_rate, momentum, weight_decay)
    return _GeneralStepper(estimator, model, learning_rate, momentum, weight_decay)


class SparsityPenalty:
    r"""Wrap a gradient estimator and add a sparsity penalty on the hidden units.

    The penalty of Hinton's practical guide (section 11): each hidden unit
    :math:`j` keeps a running estimate of its mean activation,
    :math:`q_j \leftarrow \delta\, q_j + (1 - \delta)\, \bar p_j` with
    :math:`\bar p_j` the batch mean of :math:`p(h_j{=}1 \mid v)` (the first
    batch sets :math:`q_j = \bar p_j`), and the cross-entropy between the
    target :math:`\rho` and :math:`q_j`, whose derivative with respect to the
    unit's total input is :math:`q_j - \rho`, is subtracted, times `cost`,
    from the hidden bias and (times the batch mean of :math:`v_i`) from the
    weights:

    .. math::
        \hat g_{c_j} \leftarrow \hat g_{c_j} - \kappa\, (q_j - \rho), \qquad
        \hat g_{W_{ij}} \leftarrow \hat g_{W_{ij}} - \kappa\, \bar v_i\, (q_j - \rho).

    Any hidden layer has the same rule with :math:`\bar p_j` the batch mean of
    :math:`\mathbb E[h_j \mid v]` (for Potts units, of each category's
    probability), :math:`\bar v_i` that of the visible statistic
    :math:`s(v)_i`, and the push on the unit's input applied to the
    parameters that set its field (``input_shift`` of :mod:`rbm.layers`: the
    bias of {0,1}, ±1, Potts and Gaussian units, :math:`\theta` of (d)ReLU
    units): since a unit's mean rises with its input, the push moves the mean
    towards :math:`\rho`.

    Parameters
    ----------
    estimator : object
        Any estimator with ``gradient(model, batch, *, rng) -> Gradient``.
    target : float
        :math:`\rho`, the desired mean activation: inside the range of the
        hidden unit's mean, :math:`(0, 1)` for {0,1} and Potts units,
        :math:`(-1, 1)` for ±1 units (checked when the model is seen).
    cost : float
        :math:`\kappa \ge 0`, the weight of the penalty.
    decay : float, default 0.9
        :math:`\delta \in [0, 1)`, the decay of the running estimate.

    Raises
    ------
    ValueError
        If `target`, `cost` or `decay` is out of range (`target` for the
        model's hidden layer at :meth:`gradient`).
    TypeError
        If `estimator` has no ``gradient`` method.

    Examples
    --------
    >>> from rbm import RBM
    >>> from rbm.estimators import ExactGradient
    >>> model = RBM(W=np.zeros((2, 1)), b=np.zeros(2), c=np.zeros(1))
    >>> sparse = SparsityPenalty(ExactGradient(), target=0.1, cost=1.0)
    >>> g = sparse.gradient(model, [[1, 0], [0, 1]], rng=0)
    >>> g.c.tolist()  # exact gradient 0; q = 0.5, so -(0.5 - 0.1)
    [-0.4]
    >>> g.W.tolist()  # times the mean visible activity 0.5
    [[-0.2], [-0.2]]
    """

    def __init__(self, estimator, *, target, cost, decay=0.9):
        if not callable(getattr(estimator, "gradient", None)):
            raise TypeError(f"estimator must have a method gradient(model, batch, *, rng); got "
                            f"{type(estimator).__name__}")
        if not (isinstance(target, (int, float, np.floating)) and np.isfinite(target)):
            raise ValueError(f"target must be a finite number, got {target!r}")
        decay = check_positive_float(decay, "decay", allow_zero=True)
        if decay >= 1:
            raise ValueError(f"decay must be in [0, 1), got {decay}")
        self.estimator = estimator
        self.target = target
        self.cost = check_positive_float(cost, "cost", allow_zero=True)
        self.decay = decay
        self.q = None

    def gradient(self, model, batch, *, rng):
        """The wrapped estimator's gradient with the penalty added (see the class)."""
        check_model(model)
        hidden = model.hidden
        if hidden.discrete:  # the mean of a discrete unit lies strictly inside its range
            low, high = (hidden.values[0], hidden.values[-1]) if hidden.bits else (0.0, 1.0)
            if not low < self.target < high:
                raise ValueError(f"target must be in ({low:g}, {high:g}), the range of the mean "
                                 f"of model.hidden ({hidden!r}), got {self.target}")
        batch, _ = model.visible.check_states(batch, "batch", allow_1d=False)
        g = self.estimator.gradient(model, batch, rng=rng)
        now = model.prob_h_given_v(batch).mean(axis=0)
        self.q = now if self.q is None else self.decay * self.q + (1 - self.decay) * now
        push = self.cost * (self.q - self.target)
        fields = dict(g.fields)
        fields["W"] = g.W - np.multiply.outer(model.visible.statistic(batch).mean(axis=0), push)
        names = parameter_names("hidden", hidden)
        for key, change in hidden.input_shift(push).items():
            fields[names[key]] = fields[names[key]] - change
        return Gradient.from_fields(fields)


def reconstruction_error(model, data):
    r"""Mean squared error of one deterministic pass :math:`v \to p(h{=}1 \mid v) \to p(v{=}1 \mid \cdot)`.

    For the binary model,

    .. math::
        \frac{1}{N\, n_\text{visible}} \sum_{n, i}
        \Big(v^{(n)}_i - \sigma\big(b_i + \textstyle\sum_j W_{ij}\, p(h_j{=}1 \mid v^{(n)})\big)\Big)^2.

    For any two layers the pass is :math:`v \to \mathbb E[s(h) \mid v] \to
    \mathbb E[v \mid \cdot]`, and the error is taken per entry of the
    layer's ``embed`` (the states; one-hot vectors for Potts units).  A cheap
    diagnostic, not an objective: it can fall while the likelihood does not rise.

    Parameters
    ----------
    model : RBM
    data : array_like of shape (n_samples, n_visible)

    Returns
    -------
    float

    Examples
    --------
    >>> import rbm
    >>> model = rbm.RBM(W=[[0.0], [0.0]], b=[0.0, 0.0], c=[0.0])  # all parameters zero
    >>> reconstruction_error(model, [[0, 1]])  # every reconstruction is 0.5
    0.25
    """
    check_model(model)
    data, _ = model.visible.check_states(data, "data", allow_1d=False)
    # the pass uses the hidden statistics' means themselves, not states
    H = model.hidden.mean_statistic(model.input_hidden(data))
    recon = model.visible.mean(model.input_visible_from_statistic(H.reshape(H.shape[0], -1)))
    return float(np.mean((model.visible.embed(data) - recon) ** 2))


def train(model, data, estimator, *, learning_rate, epochs, batch_size, rng,
          momentum=0.0, weight_decay=0.0, track_every=None, progress=False):
    r"""Train `model` in place by mini-batch gradient ascent with a gradient `estimator`.

    Every epoch shuffles the data with `rng` and visits it in batches of
    `batch_size` rows (the last batch of an epoch may be smaller); each
    batch makes one update, as in the module docstring.

    Parameters
    ----------
    model : RBM
        Updated in place, every parameter (``log_sigma_v``, ``gamma_h``...
        included) by the same rule.
    data : array_like of shape (n_samples, n_visible)
        Valid states of the visible layer (zeros and ones for the binary model).
    estimator : object
        Anything with a method ``gradient(model, batch, *, rng) -> Gradient``:
        :class:`~rbm.estimators.CD`, :class:`~rbm.estimators.PCD`,
        :class:`~rbm.estimators.ExactGradient` or your own.
    learning_rate : float
        :math:`\eta > 0`.
    epochs : int
        Passes over the data, at least 1.
    batch_size : int
        Rows per update, at least 1 (larger than the data: one batch).
    rng : numpy.random.Generator or int
        Used for the shuffling and passed to the estimator.
    momentum : float, default 0.0
        :math:`\mu \in [0, 1)`.
    weight_decay : float, default 0.0
        :math:`\lambda \ge 0`, applied to ``W`` only.
    track_every : int, optional
        Measure the exact log-likelihood and the reconstruction error of
        the full data before training, every `track_every` updates and
        after the last update.  Needs ``min(n_visible, n_hidden) <=
        MAX_TRACKING_BITS``.
    progress : bool, default False
        Print one line per epoch; nothing is printed otherwise.

    Returns
    -------
    History
        Empty lists when `track_every` is ``None``.

    Raises
    ------
    ValueError
        For bad arguments, and when tracking is asked of a model whose
        smaller layer has more than ``MAX_TRACKING_BITS`` units.
    TypeError
        If `estimator` has no ``gradient`` method or it does not return a Gradient,
        or if `progress` is not a bool.

    Examples
    --------
    >>> from rbm import RBM
    >>> from rbm.datasets import bars_and_stripes
    >>> from rbm.estimators import ExactGradient
    >>> data = bars_and_stripes(2)
    >>> model = RBM.random(4, 4, scale=0.1, rng=0)
    >>> history = train(model, data, ExactGradient(), learning_rate=0.5, epochs=50,
    ...                 batch_size=6, rng=0, track_every=25)
    >>> history.updates
    [0, 25, 50]
    >>> bool(history.log_likelihood[-1] > history.log_likelihood[0])
    True
    """
    check, measure_ll, measure_recon = check_model, log_likelihood, reconstruction_error
    check_model(model)
    data, _ = model.visible.check_states(data, "data", allow_1d=False)
    if not callable(getattr(estimator, "gradient", None)):
        raise TypeError(f"estimator must have a method gradient(model, batch, *, rng), such as "
                        f"rbm.estimators.CD(1); got {type(estimator).__name__}")
    learning_rate = check_positive_float(learning_rate, "learning_rate")
    epochs = check_positive_int(epochs, "epochs")
    batch_size = check_positive_int(batch_size, "batch_size")
    rng = check_rng(rng)
    momentum = check_positive_float(momentum, "momentum", allow_zero=True)
    if momentum >= 1:
        raise ValueError(f"momentum must be in [0, 1), got {momentum}")
    weight_decay = check_positive_float(weight_decay, "weight_decay", allow_zero=True)
    progress = check_bool(progress, "progress")
    if track_every is not None:
        track_every = check_positive_int(track_every, "track_every")
        side = enumerated_side(model)
        layer = getattr(model, side)
        enumerated = layer.n_units * np.log2(layer.n_states)
        if enumerated > MAX_TRACKING_BITS + 1e-9:
            raise ValueError(
                f"track_every needs the exact log-likelihood, limited to models with "
                f"min(n_visible, n_hidden) <= {MAX_TRACKING_BITS}; got n_visible="
                f"{model.n_visible}, n_hidden={model.n_hidden}"
            )

    history = History()

    def record(update):
        history.updates.append(update)
        history.log_likelihood.append(measure_ll(model, data))
        history.reconstruction_error.append(measure_recon(model, data))

    if track_every is not None:
        record(0)
    stepper = _stepper(estimator, model, learning_rate, momentum, weight_decay)
    n = data.shape[0]
    update = 0
    try:
        for epoch in range(epochs):
            # batches below are views of `shuffled`, not copies
            shuffled = stepper.shuffle(data, rng.permutation(n))
            stepper.begin_epoch(shuffled, batch_size, rng)
            for start in range(0, n, batch_size):
                stepper.step(shuffled[start:start + batch_size], rng)
                update += 1
                if track_every is not None and update % track_every == 0:
                    stepper.sync()
                    record(update)
            stepper.sync()
            try:
                check(model)
            except ValueError as err:
                raise ValueError(
                    f"training diverged in epoch {epoch + 1}: {err}; use a smaller "
                    "learning_rate (or weight_decay, or momentum), or check what the "
                    "estimator returns") from err
            if progress:
                tracked = (f", log-likelihood {history.log_likelihood[-1]:.4f}"
                           if history.updates else "")
                print(f"epoch {epoch + 1}/{epochs}: {update} updates{tracked}")
    finally:
        stepper.sync()  # also when interrupted: the model holds the last update
    if track_every is not None and history.updates[-1] != update:
        record(update)
    return history
