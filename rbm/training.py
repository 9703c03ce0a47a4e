r"""Mini-batch gradient ascent on the log-likelihood, with any gradient estimator.

An *estimator* is a callable ``estimator(model, batch, rng) -> Gradient``
returning an estimate of the gradient of the mean log-likelihood of the
batch (the ascent direction).  The factories :func:`cd`, :func:`pcd` and
:func:`exact` build the three used in the package.

Each update, with learning rate :math:`\eta`, momentum :math:`\mu` and
weight decay :math:`\lambda` (on ``W`` only; the biases are not decayed),

.. math::
    u_W \leftarrow \mu\, u_W + \eta\,(\hat g_W - \lambda W),\qquad W \leftarrow W + u_W,

and likewise for ``b`` and ``c`` with :math:`\lambda = 0`.
"""

from dataclasses import dataclass, field

import numpy as np

from rbm._validation import (
    check_binary,
    check_bool,
    check_model,
    check_positive_float,
    check_positive_int,
    check_rng,
)
from rbm._fused import FusedTrainer
from rbm.estimators import PersistentCD, _check_init, cd_gradient
from rbm.exact import gradient as exact_gradient
from rbm.exact import log_likelihood
from rbm.model import Gradient
from rbm.special import sigmoid

__all__ = ["MAX_TRACKING_BITS", "History", "cd", "pcd", "exact", "reconstruction_error", "train"]

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


def cd(k, use_probabilities=True):
    """A CD-k estimator: ``cd_gradient(model, batch, k, rng, use_probabilities=...)``.

    Examples
    --------
    >>> from rbm import RBM
    >>> estimate = cd(1)
    >>> estimate(RBM.random(3, 2, rng=0), [[1, 0, 1]], rng=0).W.shape
    (3, 2)
    """
    return _CDEstimator(check_positive_int(k, "k"),
                        check_bool(use_probabilities, "use_probabilities"))


class _CDEstimator:
    """The callable returned by :func:`cd`."""

    def __init__(self, k, use_probabilities):
        self.k = k
        self.use_probabilities = use_probabilities

    def __call__(self, model, batch, rng):
        return cd_gradient(model, batch, self.k, rng, use_probabilities=self.use_probabilities)


class _PersistentEstimator:
    """The callable returned by :func:`pcd`: one :class:`PersistentCD`, created on the first call."""

    def __init__(self, n_chains, k, use_probabilities, init):
        # Checked here so that a bad argument fails at once, not at the first update.
        self._args = dict(n_chains=check_positive_int(n_chains, "n_chains"),
                          k=check_positive_int(k, "k"),
                          use_probabilities=check_bool(use_probabilities, "use_probabilities"),
                          init=_check_init(init))
        self.persistent = None

    def __call__(self, model, batch, rng):
        return self._chains(rng).gradient(model, batch)

    def _chains(self, rng):
        """The :class:`PersistentCD`, created on the first call with that call's `rng`."""
        if self.persistent is None:
            self.persistent = PersistentCD(rng=rng, **self._args)
        return self.persistent


def pcd(n_chains, k, *, use_probabilities=True, init="data"):
    """A persistent-CD estimator that keeps its chains across calls.

    The chains (a :class:`rbm.estimators.PersistentCD`, available as the
    estimator's ``persistent`` attribute once it has been called) are
    created on the first call and draw from the random generator passed in
    that call; :func:`train` passes its own, so a seeded run is
    reproducible.  Use a new estimator for each training run.

    Parameters
    ----------
    n_chains, k, use_probabilities, init
        As in :class:`rbm.estimators.PersistentCD`.

    Examples
    --------
    >>> from rbm import RBM
    >>> estimate = pcd(n_chains=4, k=1)
    >>> _ = estimate(RBM.random(3, 2, rng=0), [[1, 0, 1]], rng=0)
    >>> estimate.persistent.chains.shape
    (4, 3)
    """
    return _PersistentEstimator(n_chains, k, use_probabilities, init)


def exact():
    """The exact-gradient "estimator", :func:`rbm.exact.gradient` (the `rng` is unused).

    Examples
    --------
    >>> from rbm import RBM
    >>> exact()(RBM.random(3, 2, rng=0), [[1, 0, 1]], rng=0).b.shape
    (3,)
    """

    def estimator(model, batch, rng):
        return exact_gradient(model, batch)

    return estimator


def _fused_trainer(estimator, model, rng, learning_rate, momentum, weight_decay):
    """A :class:`rbm._fused.FusedTrainer` for the package's CD and PCD estimators, else None."""
    if type(estimator) is _CDEstimator:
        k, use_probabilities, persistent = estimator.k, estimator.use_probabilities, None
    elif type(estimator) is _PersistentEstimator:
        persistent = estimator._chains(rng)
        k, use_probabilities = persistent.k, persistent.use_probabilities
    else:
        return None
    return FusedTrainer(model, k, use_probabilities, persistent,
                        learning_rate, momentum, weight_decay)


def reconstruction_error(model, data):
    r"""Mean squared error of one deterministic pass :math:`v \to p(h{=}1 \mid v) \to p(v{=}1 \mid \cdot)`.

    .. math::
        \frac{1}{N\, n_\text{visible}} \sum_{n, i}
        \Big(v^{(n)}_i - \sigma\big(b_i + \textstyle\sum_j W_{ij}\, p(h_j{=}1 \mid v^{(n)})\big)\Big)^2.

    A cheap diagnostic, not an objective: it can fall while the
    likelihood does not rise.

    Parameters
    ----------
    model : RBM
    data : array_like of shape (n_samples, n_visible)

    Returns
    -------
    float

    Examples
    --------
    >>> from rbm import RBM
    >>> model = RBM(W=np.zeros((2, 1)), b=np.zeros(2), c=np.zeros(1))
    >>> reconstruction_error(model, [[0, 1]])  # every reconstruction is 0.5
    0.25
    """
    check_model(model)
    data, _ = check_binary(data, "data", model.n_visible, allow_1d=False)
    # prob_v_given_h wants binary h; the pass uses the probabilities themselves.
    recon = sigmoid(model.prob_h_given_v(data) @ model.W.T + model.b)
    return float(np.mean((data - recon) ** 2))


def train(model, data, estimator, *, learning_rate, epochs, batch_size, rng,
          momentum=0.0, weight_decay=0.0, track_every=None, progress=False):
    r"""Train `model` in place by mini-batch gradient ascent with a gradient `estimator`.

    Every epoch shuffles the data with `rng` and visits it in batches of
    `batch_size` rows (the last batch of an epoch may be smaller); each
    batch makes one update, as in the module docstring.

    Parameters
    ----------
    model : RBM
        Updated in place.
    data : array_like of shape (n_samples, n_visible)
        Zeros and ones.
    estimator : callable
        ``estimator(model, batch, rng) -> Gradient``, e.g. :func:`cd`,
        :func:`pcd` or :func:`exact`.
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
        If `estimator` is not callable or does not return a Gradient.

    Examples
    --------
    >>> from rbm import RBM
    >>> from rbm.datasets import bars_and_stripes
    >>> data = bars_and_stripes(2)
    >>> model = RBM.random(4, 4, scale=0.1, rng=0)
    >>> history = train(model, data, exact(), learning_rate=0.5, epochs=50,
    ...                 batch_size=6, rng=0, track_every=25)
    >>> history.updates
    [0, 25, 50]
    >>> bool(history.log_likelihood[-1] > history.log_likelihood[0])
    True
    """
    check_model(model)
    data, _ = check_binary(data, "data", model.n_visible, allow_1d=False)
    if not callable(estimator):
        raise TypeError(f"estimator must be callable, got {type(estimator).__name__}")
    learning_rate = check_positive_float(learning_rate, "learning_rate")
    epochs = check_positive_int(epochs, "epochs")
    batch_size = check_positive_int(batch_size, "batch_size")
    rng = check_rng(rng)
    momentum = check_positive_float(momentum, "momentum", allow_zero=True)
    if momentum >= 1:
        raise ValueError(f"momentum must be in [0, 1), got {momentum}")
    weight_decay = check_positive_float(weight_decay, "weight_decay", allow_zero=True)
    if track_every is not None:
        track_every = check_positive_int(track_every, "track_every")
        if min(model.n_visible, model.n_hidden) > MAX_TRACKING_BITS:
            raise ValueError(
                f"track_every needs the exact log-likelihood, limited to models with "
                f"min(n_visible, n_hidden) <= {MAX_TRACKING_BITS}; got n_visible="
                f"{model.n_visible}, n_hidden={model.n_hidden}"
            )

    history = History()

    def record(update):
        history.updates.append(update)
        history.log_likelihood.append(log_likelihood(model, data))
        history.reconstruction_error.append(reconstruction_error(model, data))

    if track_every is not None:
        record(0)
    # CD and PCD from this package run fused (rbm._fused: same chains, a few array
    # operations per update); any other estimator runs through the general loop.
    fused = _fused_trainer(estimator, model, rng, learning_rate, momentum, weight_decay)
    n = data.shape[0]
    if fused is not None:
        rows = fused.augment(data)
    else:
        rows = data
        params = (model.W, model.b, model.c)
        velocity = tuple(np.zeros_like(p) for p in params)
    update = 0
    try:
        for epoch in range(epochs):
            shuffled = rows[rng.permutation(n)]  # batches below are views, not copies
            if fused is not None:
                fused.begin_epoch(shuffled, batch_size, rng)
            for start in range(0, n, batch_size):
                batch = shuffled[start:start + batch_size]
                if fused is not None:
                    fused.update(batch)
                else:
                    _general_update(estimator(model, batch, rng), model, params, velocity,
                                    learning_rate, momentum, weight_decay)
                update += 1
                if track_every is not None and update % track_every == 0:
                    if fused is not None:
                        fused.write_back()
                    record(update)
            if fused is not None:
                fused.write_back()
            try:
                check_model(model)
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
        if fused is not None:  # also when interrupted: the model holds the last update
            fused.write_back()
    if track_every is not None and history.updates[-1] != update:
        record(update)
    return history


def _general_update(grad, model, params, velocity, learning_rate, momentum, weight_decay):
    """One update of :func:`train` from an estimated gradient (any estimator)."""
    if not isinstance(grad, Gradient):
        raise TypeError(f"estimator must return an rbm.Gradient, got {type(grad).__name__}")
    if grad.W.shape != model.W.shape:
        raise ValueError(f"estimator returned a Gradient with W of shape {grad.W.shape}, "
                         f"but the model's W has shape {model.W.shape}")
    step_W = grad.W - weight_decay * model.W if weight_decay else grad.W
    for param, u, step in zip(params, velocity, (step_W, grad.b, grad.c)):
        if momentum:
            u *= momentum
            u += learning_rate * step
            param += u
        else:
            param += learning_rate * step
