r"""Annealed importance sampling (AIS) estimates of an RBM's :math:`\log Z`.

Following Salakhutdinov & Murray (2008), a tractable *base-rate* model
:math:`A` (visible biases :math:`b_A`, zero weights, zero hidden biases,
the same number of hidden units as the target) is annealed into the target
RBM :math:`B` (``W``, ``b``, ``c``) through the intermediate joint
distributions

.. math::
    p_k(v, h^A, h^B) \propto
    \exp\big(-(1-\beta_k)\,E_A(v, h^A) - \beta_k\,E_B(v, h^B)\big),
    \qquad 0 = \beta_0 < \beta_1 < \dots < \beta_K = 1.

Summing out both hidden layers gives the unnormalised marginal on ``v``

.. math::
    p_k^*(v) = 2^{n_\text{hidden}}\, e^{(1-\beta_k)\, b_A^\top v}
    \; e^{\beta_k\, b^\top v} \prod_j \big(1 + e^{\beta_k (c_j + (v^\top W)_j)}\big),

where :math:`2^{n_\text{hidden}}` is the base model's hidden factor:
with zero weights and biases its hidden units do not depend on ``v``.
At :math:`\beta_0 = 0` this is :math:`2^{n_\text{hidden}} p_A^*(v)`
(the target's hidden units contribute :math:`\prod_j (1 + e^0)`), and at
:math:`\beta_K = 1` it is :math:`2^{n_\text{hidden}} p_B^*(v)`; the common
factor cancels in every ratio, so :math:`Z_K / Z_0 = Z_B / Z_A` exactly.
This tempers the *energies*, not the free energies: the intermediate models
are RBMs themselves, so a Gibbs sweep leaves each one invariant.

The base model's partition function is in closed form,

.. math:: \log Z_A = \sum_i \operatorname{softplus}(b_{A,i}) + n_\text{hidden} \log 2.

**Any two layers.**  For a model of other layers (:mod:`rbm.layers`) the
base model has no weights and the base layers of :func:`base_layers` (zero
fields for discrete units, the uniform distribution; the layer itself for
continuous units, so that only the weights are annealed), and the
intermediate model at :math:`\beta` is the RBM with weights :math:`\beta W`
and layers whose energies are :math:`(1-\beta)E_A + \beta E`
(``layer.anneal``).  :math:`\log Z_A` is the sum of the base layers'
log-normalisers at zero input, and a Gibbs sweep of the intermediate model is
the transition.  For two {0,1} layers this is the scheme above, and the
binary model keeps its own loop (the same draws as before).

References
----------
.. [1] R. Salakhutdinov and I. Murray, "On the quantitative analysis of deep
   belief networks", ICML 2008.
.. [2] R. M. Neal, "Annealed importance sampling", Statistics and Computing
   11, 125-139 (2001).
.. [3] Y. Burda, R. Grosse and R. Salakhutdinov, "Accurate and conservative
   estimates of MRF log-likelihood using reverse annealing", AISTATS 2015.
"""

import numbers
from dataclasses import dataclass

import numpy as np

from rbm._validation import (
    as_float_array,
    check_array_size,
    check_binary,
    check_finite_parameter,
    check_positive_float,
    check_positive_int,
    check_rng,
)
from rbm._kernels import discrete_bits, gibbs_steps
from rbm.exact import all_states
from rbm.model import RBM, check_model
from rbm.special import logsumexp, sigmoid, softplus
from rbm.transition import MAX_TRANSITION_BITS, gibbs_transition_matrix

__all__ = [
    "AISResult",
    "default_betas",
    "base_rate_biases",
    "base_rate_model",
    "base_log_partition",
    "log_mean_weight",
    "intermediate_model",
    "base_layers",
    "exact_weight_moments",
    "ais_log_partition",
    "reverse_ais_log_partition",
    "inverse_temperatures",
]

# Salakhutdinov & Murray's schedule: 500 steps on [0, 0.5], 4,000 on
# [0.5, 0.9] and 10,000 on [0.9, 1], i.e. the proportions 1 : 8 : 20.
_PAPER_PIECES = ((0.0, 0.5, 1), (0.5, 0.9, 8), (0.9, 1.0, 20))
_PAPER_STEPS = 14_500


@dataclass(frozen=True)
class AISResult:
    r"""An AIS estimate of :math:`\log Z` and what it was computed from.

    Attributes
    ----------
    log_z : float
        The estimate :math:`\log \hat Z`.
    std_error : float
        Delta-method standard error of ``log_z``,
        :math:`\hat\sigma_w / (\sqrt{n_\text{runs}}\,\bar w)`, where
        :math:`\bar w` and :math:`\hat\sigma_w` are the mean and standard
        deviation (``ddof=1``) of the importance weights
        (see :func:`log_mean_weight`).
    log_weights : ndarray of shape (n_runs,)
        Log importance weight of each run.
    log_z_base : float
        Exact :math:`\log Z_A` of the base-rate model.
    final_states : ndarray of shape (n_runs, n_visible)
        The visible state of each run at the end of the annealing:
        approximate samples of the target model (forward AIS) or of the base
        model (reverse AIS).
    """

    log_z: float
    std_error: float
    log_weights: np.ndarray
    log_z_base: float
    final_states: np.ndarray

    def interval(self, n_std=3.0):
        r"""The bounds :math:`\log(\hat Z \pm k\,\hat\sigma_{\hat Z})` reported in the paper.

        With :math:`\hat\sigma_{\hat Z} / \hat Z` equal to ``std_error``,
        these are ``log_z + log1p(-k * std_error)`` and
        ``log_z + log1p(k * std_error)``.  They describe the spread of
        :math:`\hat Z`, not a guaranteed bound: with heavy-tailed weights
        the sample standard deviation itself underestimates the spread.

        Parameters
        ----------
        n_std : float, default 3.0
            The multiple ``k`` of the standard error.

        Returns
        -------
        (float, float)
            Lower and upper bound; the lower one is ``-inf`` when
            ``k * std_error >= 1``.
        """
        n_std = check_positive_float(n_std, "n_std", allow_zero=True)
        spread = n_std * self.std_error
        lower = self.log_z + np.log1p(-spread) if spread < 1.0 else -np.inf
        return float(lower), float(self.log_z + np.log1p(spread))


def default_betas(n_steps):
    r"""The inverse temperatures :math:`0 = \beta_0 < \dots < \beta_K = 1` for `n_steps` = K.

    Three linear pieces with the step counts in the proportions of
    Salakhutdinov & Murray's 14,500-step schedule: 1/29 of the steps on
    :math:`[0, 0.5]`, 8/29 on :math:`[0.5, 0.9]` and 20/29 on
    :math:`[0.9, 1]` (each piece at least one step), so the temperatures
    are densest near :math:`\beta = 1`, where the distributions change
    fastest.  Fewer than three steps are spaced linearly.

    Parameters
    ----------
    n_steps : int
        Number of annealing steps K (the result has K + 1 entries); 1 gives
        ``[0, 1]``, plain importance sampling from the base model.

    Returns
    -------
    ndarray of shape (n_steps + 1,)

    Examples
    --------
    >>> default_betas(29).round(3).tolist()[:3], default_betas(29).round(3).tolist()[-3:]
    ([0.0, 0.5, 0.55], [0.99, 0.995, 1.0])
    >>> default_betas(1).tolist()
    [0.0, 1.0]
    """
    n_steps = check_positive_int(n_steps, "n_steps")
    check_array_size(n_steps + 1, f"n_steps={n_steps}")
    if n_steps < len(_PAPER_PIECES):
        return np.linspace(0.0, 1.0, n_steps + 1)
    total_weight = sum(weight for _, _, weight in _PAPER_PIECES)
    counts = [max(1, round(n_steps * weight / total_weight)) for _, _, weight in _PAPER_PIECES[:-1]]
    counts.append(n_steps - sum(counts))
    pieces = [np.linspace(lo, hi, count, endpoint=False)
              for (lo, hi, _), count in zip(_PAPER_PIECES, counts)]
    return np.concatenate(pieces + [np.ones(1)])


def base_rate_biases(data, *, pseudo_count=1.0):
    r"""Visible biases of the base-rate model fitted to data: :math:`b_{A,i} = \log\frac{\bar p_i}{1 - \bar p_i}`.

    The smoothed marginal :math:`\bar p_i = (\sum_n v^{(n)}_i + \alpha) / (N + 2\alpha)`
    (``alpha`` = `pseudo_count`) keeps the biases finite for units that
    are always on or always off in the data.  The base model is then the
    maximum-likelihood product of independent Bernoullis (up to the
    smoothing), a good starting point for annealing towards a model
    trained on the same data.

    Parameters
    ----------
    data : array_like of shape (n_samples, n_visible)
        Zeros and ones.
    pseudo_count : float, default 1.0
        The smoothing :math:`\alpha > 0` (1 is Laplace's rule).

    Returns
    -------
    ndarray of shape (n_visible,)

    Examples
    --------
    >>> base_rate_biases([[1, 0], [1, 0], [1, 1]]).round(4).tolist()  # p = 4/5, 2/5
    [1.3863, -0.4055]
    """
    arr = as_float_array(data, "data")
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise ValueError(f"data must have shape (n_samples, n_visible), got {arr.shape}")
    data, _ = check_binary(arr, "data", arr.shape[1], allow_1d=False)
    pseudo_count = check_positive_float(pseudo_count, "pseudo_count")
    p = (data.sum(axis=0) + pseudo_count) / (data.shape[0] + 2 * pseudo_count)
    return np.log(p) - np.log1p(-p)


def base_rate_model(base_biases, n_hidden):
    """The base-rate RBM: visible biases `base_biases`, zero weights and hidden biases.

    Parameters
    ----------
    base_biases : array_like of shape (n_visible,)
    n_hidden : int

    Returns
    -------
    RBM

    Examples
    --------
    >>> base_rate_model([0.5, -1.0], 3)
    RBM(n_visible=2, n_hidden=3)
    """
    b_A = _check_base_biases(base_biases, None)
    n_hidden = check_positive_int(n_hidden, "n_hidden")
    return RBM(np.zeros((b_A.size, n_hidden)), b_A, np.zeros(n_hidden))


def base_log_partition(base_biases, n_hidden):
    r"""Exact :math:`\log Z_A = \sum_i \operatorname{softplus}(b_{A,i}) + n_\text{hidden}\log 2` of :func:`base_rate_model`.

    Every unit is independent: each visible unit contributes
    :math:`1 + e^{b_{A,i}}` and each hidden unit :math:`1 + e^0 = 2`.

    Parameters
    ----------
    base_biases : array_like of shape (n_visible,)
    n_hidden : int

    Returns
    -------
    float

    Examples
    --------
    >>> bool(np.isclose(base_log_partition([0.0, 0.0], 1), 3 * np.log(2)))  # 2**3 states
    True
    """
    b_A = _check_base_biases(base_biases, None)
    n_hidden = check_positive_int(n_hidden, "n_hidden")
    return float(softplus(b_A).sum() + n_hidden * np.log(2.0))


def log_mean_weight(log_weights):
    r"""Log of the mean importance weight and the delta-method standard error of it.

    With weights :math:`w_r = e^{\ell_r}`, returns

    .. math::
        \log \bar w = \operatorname{logsumexp}(\ell) - \log n,
        \qquad
        \mathrm{se} = \frac{\hat\sigma_w}{\sqrt{n}\,\bar w},

    :math:`\hat\sigma_w` the sample standard deviation (``ddof=1``).  By
    the delta method, :math:`\mathrm{se}` is the standard error of
    :math:`\log \bar w` (and the relative standard error of
    :math:`\bar w`).  Both are computed from :math:`e^{\ell_r - \max \ell}`,
    which lie in :math:`(0, 1]`, so they are finite for log-weights of any
    size; the ratio does not depend on the shift.

    Parameters
    ----------
    log_weights : array_like of shape (n_runs,)
        At least two finite values.

    Returns
    -------
    (float, float)
        :math:`\log \bar w` and :math:`\mathrm{se}`.

    Notes
    -----
    :math:`\bar w` is unbiased for its target, so by Jensen's inequality
    :math:`\log \bar w` is biased *low*; the standard error is itself an
    estimate, and underestimates the spread when the weights are heavy
    tailed (a few runs dominating the mean).

    Examples
    --------
    >>> log_mean, se = log_mean_weight([1000.0, 1000.0 + np.log(3.0)])
    >>> round(log_mean - 1000.0, 6), round(se, 6)  # mean weight 2, sd sqrt(2)
    (0.693147, 0.5)
    """
    ell = as_float_array(log_weights, "log_weights")
    if ell.ndim != 1 or ell.size < 2:
        raise ValueError(f"log_weights must be a 1-d array of at least 2 values, got shape "
                         f"{ell.shape}")
    if not np.all(np.isfinite(ell)):
        raise ValueError("log_weights must be finite")
    n = ell.size
    scaled = np.exp(ell - ell.max())
    std_error = np.std(scaled, ddof=1) / (np.sqrt(n) * scaled.mean())
    return float(logsumexp(ell) - np.log(n)), float(std_error)


def intermediate_model(model, beta, *, base_biases=None):
    r"""The RBM :math:`(\beta W,\ (1-\beta)\, b_A + \beta b,\ \beta c)` whose marginal is the AIS distribution :math:`p_\beta(v)`.

    Tempering the joint energy, :math:`(1-\beta) E_A + \beta E_B`, gives a
    distribution on :math:`(v, h^A, h^B)` whose marginal on ``v`` is

    .. math::
        p_\beta^*(v) = 2^{n_\text{hidden}}\, e^{((1-\beta) b_A + \beta b)^\top v}
        \prod_j \big(1 + e^{\beta (c_j + (v^\top W)_j)}\big)
        = 2^{n_\text{hidden}}\, e^{-F_\beta(v)},

    with :math:`F_\beta` the free energy of the returned model: the base
    model's hidden units contribute only the constant :math:`2^{n_\text{hidden}}`.
    So :math:`p_\beta(v)` is exactly the visible marginal of an ordinary
    RBM, the one a Gibbs sweep at :math:`\beta` in :func:`ais_log_partition`
    samples; :math:`\beta = 1` gives `model` back and :math:`\beta = 0` the
    base-rate model.

    Parameters
    ----------
    model : RBM
        The target model :math:`B`.
    beta : float
        Inverse temperature in :math:`[0, 1]`.
    base_biases : array_like of shape (n_visible,), optional
        :math:`b_A`; zeros (the uniform base) when omitted.

    Returns
    -------
    RBM

    Examples
    --------
    >>> model = RBM.random(3, 2, scale=1.0, bias_scale=1.0, rng=0)
    >>> half = intermediate_model(model, 0.5, base_biases=[1.0, 1.0, 1.0])
    >>> bool(np.allclose(half.W, 0.5 * model.W) and np.allclose(half.b, 0.5 + 0.5 * model.b))
    True
    >>> bool(np.all(intermediate_model(model, 0.0).W == 0))
    True
    """
    model = check_model(model)
    beta = check_positive_float(beta, "beta", allow_zero=True)
    if beta > 1.0:
        raise ValueError(f"beta must be in [0, 1], got {beta}")
    if model.is_binary:
        b_A = _base_biases_from(model, None, base_biases)
        return RBM(beta * model.W, (1.0 - beta) * b_A + beta * model.b, beta * model.c)
    base_v, base_h = base_layers(model, base_biases=base_biases)
    return _intermediate(model, base_v, base_h, beta)


def _intermediate(model, base_v, base_h, beta):
    """The intermediate model at `beta` between the base layers and `model` (no checks)."""
    return RBM(beta * model.W, model.visible.anneal(base_v, beta),
               model.hidden.anneal(base_h, beta))


def base_layers(model, *, data=None, base_biases=None):
    r"""The base model of annealed importance sampling for any two layers: its two layers.

    The base model has no weights, so its log Z is the sum of its layers'
    log-normalisers at zero input, in closed form.  Each layer's base is
    ``layer.base()``: zero fields for discrete units (the uniform
    distribution), the layer itself for continuous ones (annealing then
    moves only the weights).  A discrete visible layer may instead take its
    base-rate fields from `data` (smoothed frequencies, as
    :func:`base_rate_biases` for {0,1} units) or `base_biases`.

    Parameters
    ----------
    model : RBM
    data : array_like of shape (n_samples, n_visible), optional
    base_biases : array_like of the shape of ``model.visible.bias``, optional

    Returns
    -------
    (rbm.layers.Layer, rbm.layers.Layer)
    """
    check_model(model)
    if data is not None and base_biases is not None:
        raise ValueError("give at most one of data and base_biases, not both")
    base_v, base_h = model.visible.base(), model.hidden.base()
    if base_biases is not None or data is not None:
        if "bias" not in base_v.parameters() or not model.visible.discrete:
            raise ValueError(f"base_biases and data set the base fields of a discrete visible "
                             f"layer; model.visible is {model.visible!r}")
        if base_biases is not None:
            base_v.bias[...] = check_finite_parameter(base_biases, "base_biases",
                                                      base_v.bias.shape)
        else:
            data, _ = model.visible.check_states(data, "data", allow_1d=False)
            counts = model.visible.embed(data).sum(axis=0) if base_v.bias.ndim == 2 else None
            if counts is not None:  # Potts: log of the smoothed frequencies
                base_v.bias[...] = np.log(counts + 1.0) - np.log(data.shape[0] + base_v.q)
            else:
                low, high = model.visible.states(0, 2)[:, -1]
                up = ((data == high).sum(axis=0) + 1.0) / (data.shape[0] + 2.0)
                base_v.bias[...] = (np.log(up) - np.log1p(-up)) / (high - low)
    return base_v, base_h


def _base_log_partition(base_v, base_h):
    """log Z of the base model: its layers' log-normalisers at zero input."""
    return float(base_v.log_normaliser(np.zeros((1,) + base_v.shape))[0]
                 + base_h.log_normaliser(np.zeros((1,) + base_h.shape))[0])


def _anneal_layers(model, base_v, base_h, betas, v, rng):
    r"""The general counterpart of :func:`_anneal`: intermediate models built per step."""
    log_weights = np.zeros(v.shape[0])
    n_steps = len(betas) - 1
    previous = _intermediate(model, base_v, base_h, betas[0])
    for m in range(1, n_steps + 1):
        current = _intermediate(model, base_v, base_h, betas[m])
        log_weights += _log_marginal(current, v) - _log_marginal(previous, v)
        if m < n_steps:
            v = gibbs_steps(current, v, 1, rng)
        previous = current
    return log_weights, v


def _log_marginal(model, v):
    r""":math:`-F(v)` of checked rows `v` (no checks)."""
    return model.hidden.log_normaliser(model.input_hidden(v)) - model.visible.energy(v)


def exact_weight_moments(model, betas, *, base_biases=None, transitions=None):
    r"""Exact :math:`\log \mathbb{E}[w]` and :math:`\mathbb{E}[\log w]` of the forward AIS weight, by enumeration.

    The forward run of :func:`ais_log_partition` draws :math:`v_1 \sim p_0`
    and :math:`v_{k+1} \sim T_k(v_k, \cdot)` for :math:`k = 1, \dots, K-1`,
    and its weight is :math:`w = \prod_{k=1}^K r_k(v_k)` with
    :math:`r_k = p_k^* / p_{k-1}^*`.  Over the :math:`2^{n_\text{visible}}`
    visible states both moments follow from forward recursions,

    .. math::
        \begin{aligned}
        \alpha_1 &= p_0 \odot r_1, & \alpha_{k+1} &= (\alpha_k T_k) \odot r_{k+1}, &
        \mathbb{E}[w] &= \textstyle\sum_v \alpha_K(v), \\
        q_1 &= p_0, & q_{k+1} &= q_k T_k, &
        \mathbb{E}[\log w] &= \textstyle\sum_k q_k^\top \log r_k .
        \end{aligned}

    When every :math:`T_k` leaves :math:`p_k` invariant,
    :math:`\mathbb{E}[w] = Z_B / Z_A` exactly, and by Jensen's inequality
    :math:`\mathbb{E}[\log w] \le \log(Z_B / Z_A)`.

    Parameters
    ----------
    model : RBM
        The target model, with ``n_visible <= rbm.transition.MAX_TRANSITION_BITS``;
        any two discrete layers ({0,1}, ±1, Potts: a layer of :math:`q^n` states
        counts :math:`n \log_2 q` units), with the base model of :func:`base_layers`.
        A continuous layer is refused with a ValueError naming it.
    betas : int or array_like of shape (K + 1,)
        As in :func:`ais_log_partition`.
    base_biases : array_like of the shape of ``model.visible.bias``, optional
        :math:`b_A`; zeros (the uniform base) when omitted.
    transitions : sequence of K - 1 ndarrays of shape (2**n_visible, 2**n_visible), optional
        Row-stochastic matrices :math:`T_1, \dots, T_{K-1}` (states ordered as
        in :func:`rbm.exact.all_states`, or the visible layer's ``states``).  By default the exact Gibbs sweep
        at :math:`\beta_k`, :func:`rbm.transition.gibbs_transition_matrix`
        of :func:`intermediate_model`, which is what :func:`ais_log_partition`
        applies.  Other transitions let one see what breaks unbiasedness.
        The default matrices are made one at a time, as the recursion needs
        them: memory holds one ``(2**n_visible, 2**n_visible)`` matrix and
        about 50 MiB besides (180 MiB at 12 visible units), whatever the
        number of temperatures.

    Returns
    -------
    (float, float)
        :math:`\log \mathbb{E}[w]` and :math:`\mathbb{E}[\log w]`.

    Examples
    --------
    >>> from rbm import exact
    >>> model = RBM.random(3, 2, scale=1.0, bias_scale=1.0, rng=0)
    >>> log_mean, mean_log = exact_weight_moments(model, 4)
    >>> log_ratio = exact.log_partition(model) - base_log_partition(np.zeros(3), 2)
    >>> bool(np.isclose(log_mean, log_ratio, rtol=0, atol=1e-12)), bool(mean_log < log_ratio)
    (True, True)
    """
    bits = discrete_bits(model, "exact_weight_moments")  # None for two {0,1} layers
    n_bits = model.n_visible if bits is None else bits[0]
    if n_bits > MAX_TRANSITION_BITS + 1e-9:
        raise ValueError(f"exact_weight_moments holds distributions over all visible states; "
                         f"n_visible must be at most {MAX_TRANSITION_BITS} (bits of states), "
                         f"got {model.n_visible} ({n_bits:g} bits)")
    betas = inverse_temperatures(betas)
    base_v, _ = base_layers(model, base_biases=base_biases)
    n_steps = len(betas) - 1
    n_states = model.visible.n_states ** model.n_visible
    if transitions is not None:
        transitions = list(transitions)
        if len(transitions) != n_steps - 1:
            raise ValueError(f"transitions must hold K - 1 = {n_steps - 1} matrices, "
                             f"got {len(transitions)}")
    V = model.visible.states(0, n_states)

    def log_p(beta):  # log p_k^*(v), -F of the intermediate model (the base's constants cancel)
        return -intermediate_model(model, beta, base_biases=base_biases).free_energy(V)

    def transition(k):  # T_k, made (or checked) when needed: one is held at a time
        if transitions is None:
            return gibbs_transition_matrix(intermediate_model(model, betas[k],
                                                              base_biases=base_biases))
        return _check_transition(transitions[k - 1], n_states, k)

    previous, current = log_p(betas[0]), log_p(betas[1])
    log_ratio = current - previous  # log r_1
    # p_0 = p_A, exactly: the base model's visible layer on its own
    q = np.exp(-base_v.energy(V) - base_v.log_normaliser(np.zeros((1,) + base_v.shape))[0])
    log_alpha = np.log(q) + log_ratio
    mean_log = float(q @ log_ratio)
    for k in range(1, n_steps):
        T = transition(k)
        previous, current = current, log_p(betas[k + 1])
        log_ratio = current - previous  # log r_{k+1}
        q = q @ T
        shift = log_alpha.max()
        with np.errstate(divide="ignore"):  # a state T cannot reach has weight 0
            log_alpha = np.log(np.exp(log_alpha - shift) @ T) + shift + log_ratio
        mean_log += float(q @ log_ratio)
        del T  # before the next one is made
    return float(logsumexp(log_alpha)), mean_log


def _check_transition(T, n_states, k):
    arr = as_float_array(T, f"transitions[{k - 1}]")
    if arr.shape != (n_states, n_states):
        raise ValueError(f"transitions[{k - 1}] must have shape ({n_states}, {n_states}), "
                         f"got {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or not np.allclose(arr.sum(axis=1), 1.0):
        raise ValueError(f"transitions[{k - 1}] must be row-stochastic")
    return arr


def ais_log_partition(model, *, n_runs=100, betas=_PAPER_STEPS, rng, data=None,
                      base_biases=None):
    r"""Estimate :math:`\log Z` of `model` by annealed importance sampling from a base-rate model.

    Each of the `n_runs` independent runs draws :math:`v_1 \sim p_A`
    exactly, then moves it with one Gibbs sweep per intermediate
    distribution (:math:`v_{k+1} \sim T_k(\cdot \mid v_k)`, which leaves
    :math:`p_k` invariant), accumulating the log importance weight

    .. math::
        \log w = \sum_{k=1}^{K} \big[\log p_k^*(v_k) - \log p_{k-1}^*(v_k)\big],
        \qquad
        \hat Z = Z_A \cdot \frac{1}{n_\text{runs}} \sum_r w_r .

    :math:`\hat Z` is unbiased for :math:`Z`, so :math:`\log \hat Z` is,
    in expectation, a lower bound on :math:`\log Z` (Jensen).  The sweep at
    :math:`\beta` samples :math:`h_j \sim \sigma(\beta (c_j + (v^\top W)_j))`,
    then :math:`v_i \sim \sigma((1-\beta) b_{A,i} + \beta (b_i + (W h)_i))`;
    the base model's hidden units are independent of ``v`` and need no
    sampling.  All runs advance together as rows of one array.

    Parameters
    ----------
    model : RBM
        The target model :math:`B`.
    n_runs : int, default 100
        Number of independent runs, at least 2 (a standard error needs two).
    betas : int or array_like of shape (K + 1,), default 14500
        The inverse temperatures, strictly increasing from exactly 0 to
        exactly 1; an int K means :func:`default_betas` ``(K)`` (the
        default is the paper's 14,500 steps).  ``[0, 1]`` is plain
        importance sampling from the base model.
    rng : numpy.random.Generator or int
    data : array_like of shape (n_samples, n_visible), optional
        Training data to fit the base-rate biases to (:func:`base_rate_biases`).
    base_biases : array_like of shape (n_visible,), optional
        The base model's visible biases, given explicitly.  At most one of
        `data` and `base_biases`; with neither, :math:`b_A = 0` (the uniform
        distribution).

    Returns
    -------
    AISResult
        ``log_z`` is :math:`\log \hat Z = \log Z_A + \log \bar w`;
        ``std_error`` is its delta-method standard error from
        :func:`log_mean_weight`.  About 95% of estimates fall within two
        standard errors of :math:`\log Z` when the weights are not heavy
        tailed; see :meth:`AISResult.interval` for the paper's bounds.

    Examples
    --------
    >>> from rbm import exact
    >>> model = RBM.random(8, 5, scale=0.5, bias_scale=0.5, rng=0)
    >>> result = ais_log_partition(model, n_runs=200, betas=500, rng=1)
    >>> bool(abs(result.log_z - exact.log_partition(model)) < 3 * result.std_error)
    True
    """
    model = check_model(model)
    n_runs = check_positive_int(n_runs, "n_runs", minimum=2)
    check_array_size(n_runs * max(model.n_visible, model.n_hidden),
                     f"n_runs={n_runs} chains of {max(model.n_visible, model.n_hidden)} units")
    betas = inverse_temperatures(betas)
    rng = check_rng(rng)
    if not model.is_binary:
        base_v, base_h = base_layers(model, data=data, base_biases=base_biases)
        v = base_v.sample(np.zeros((n_runs,) + base_v.shape), rng=rng)
        log_weights, v = _anneal_layers(model, base_v, base_h, betas, v, rng)
        log_z_base = _base_log_partition(base_v, base_h)
        log_mean, std_error = log_mean_weight(log_weights)
        return AISResult(log_z=log_z_base + log_mean, std_error=std_error,
                         log_weights=log_weights, log_z_base=log_z_base, final_states=v)
    b_A = _base_biases_from(model, data, base_biases)
    v = (rng.random((n_runs, model.n_visible)) < sigmoid(b_A)).astype(float)
    log_weights, v = _anneal(model, b_A, betas, v, rng)
    log_z_base = base_log_partition(b_A, model.n_hidden)
    log_mean, std_error = log_mean_weight(log_weights)
    return AISResult(log_z=log_z_base + log_mean, std_error=std_error, log_weights=log_weights,
                     log_z_base=log_z_base, final_states=v)


def reverse_ais_log_partition(model, v_init, *, betas=_PAPER_STEPS, rng, data=None,
                              base_biases=None):
    r"""Estimate :math:`\log Z` by annealing *from* samples of the model *to* the base-rate model.

    Reverse AIS, the upper half of bidirectional Monte Carlo (Grosse,
    Ghahramani & Adams 2015), runs the same chain backwards: from
    :math:`v_K` = a row of `v_init`, for :math:`k = K-1, \dots, 1` a Gibbs
    sweep at :math:`\beta_k` gives :math:`v_k`, and

    .. math::
        \log w = \sum_{k=1}^{K} \big[\log p_{k-1}^*(v_k) - \log p_k^*(v_k)\big],
        \qquad
        \log \hat Z = \log Z_A - \log \frac{1}{n_\text{runs}} \sum_r w_r .

    The Gibbs sweep is reversible with respect to its :math:`p_k`, so when
    the rows of `v_init` are exact samples of the model, :math:`\bar w` is
    unbiased for :math:`Z_A / Z`, and :math:`\log \hat Z` is, in
    expectation, an *upper* bound on :math:`\log Z` -- the forward
    estimate's counterpart.  Started from data or from an imperfect
    sampler it is only approximate.

    Parameters
    ----------
    model : RBM
    v_init : array_like of shape (n_runs, n_visible)
        Starting states, ideally exact samples of `model`; at least two rows.
    betas : int or array_like of shape (K + 1,), default 14500
        As in :func:`ais_log_partition` (given increasing; traversed from 1 to 0).
    rng : numpy.random.Generator or int
    data, base_biases : optional
        As in :func:`ais_log_partition`.

    Returns
    -------
    AISResult
        ``log_weights`` are the reverse log-weights :math:`\log w_r`;
        ``std_error`` is the delta-method standard error of
        :math:`\log \bar w`, and so of ``log_z``.

    Notes
    -----
    This is not RAISE (Burda, Grosse & Salakhutdinov 2015), which anneals
    backwards from each data vector, needs no exact samples of the model,
    and estimates that vector's log-likelihood conservatively.

    References
    ----------
    .. [4] R. B. Grosse, Z. Ghahramani and R. P. Adams, "Sandwiching the
       marginal likelihood using bidirectional Monte Carlo",
       arXiv:1511.02543 (2015).

    Examples
    --------
    >>> from rbm import exact
    >>> model = RBM.random(6, 4, scale=0.5, bias_scale=0.5, rng=0)
    >>> p = exact.visible_distribution(model)
    >>> states = exact.all_states(6)[np.random.default_rng(2).choice(64, size=200, p=p)]
    >>> result = reverse_ais_log_partition(model, states, betas=300, rng=3)
    >>> bool(abs(result.log_z - exact.log_partition(model)) < 3 * result.std_error)
    True
    """
    model = check_model(model)
    v, _ = model.visible.check_states(v_init, "v_init", allow_1d=False)
    if v.shape[0] < 2:
        raise ValueError(f"v_init must have at least 2 rows (one per run), got {v.shape[0]}")
    betas = inverse_temperatures(betas)
    rng = check_rng(rng)
    if not model.is_binary:
        base_v, base_h = base_layers(model, data=data, base_biases=base_biases)
        log_weights, v = _anneal_layers(model, base_v, base_h, betas[::-1], v.copy(), rng)
        log_z_base = _base_log_partition(base_v, base_h)
        log_mean, std_error = log_mean_weight(log_weights)
        return AISResult(log_z=log_z_base - log_mean, std_error=std_error,
                         log_weights=log_weights, log_z_base=log_z_base, final_states=v)
    b_A = _base_biases_from(model, data, base_biases)
    log_weights, v = _anneal(model, b_A, betas[::-1], v.copy(), rng)
    log_z_base = base_log_partition(b_A, model.n_hidden)
    log_mean, std_error = log_mean_weight(log_weights)
    return AISResult(log_z=log_z_base - log_mean, std_error=std_error, log_weights=log_weights,
                     log_z_base=log_z_base, final_states=v)


def _anneal(model, b_A, betas, v, rng):
    r"""Run all chains through `betas` (in the order given) from the states `v`.

    Step ``m`` adds :math:`\log p^*_{\beta_m}(v) - \log p^*_{\beta_{m-1}}(v)`
    to the log-weights, then (except after the last step) applies one Gibbs
    sweep at :math:`\beta_m`.  Only differences of
    :math:`\log p^*_\beta(v) = (1-\beta) b_A^\top v + \beta b^\top v
    + \sum_j \operatorname{softplus}(\beta (c_j + (v^\top W)_j))` enter,
    so the constant base hidden factor is dropped.
    """
    # Its own Gibbs sweep: the tempered model's conditionals are those of the model with
    # weights and hidden biases scaled by beta and visible biases mixed with b_A, formed here
    # without making a model per temperature (14,500 of them in the paper's schedule). The
    # tests check the sweep's distribution against gibbs_transition_matrix of
    # intermediate_model (tests/test_ais.py).
    W, b, c = model.W, model.b, model.c
    bias_gap = b - b_A
    log_weights = np.zeros(v.shape[0])
    n_steps = len(betas) - 1
    for m in range(1, n_steps + 1):
        beta_prev, beta = betas[m - 1], betas[m]
        pre = v @ W + c
        log_weights += ((beta - beta_prev) * (v @ bias_gap)
                        + softplus(beta * pre).sum(axis=1)
                        - softplus(beta_prev * pre).sum(axis=1))
        if m < n_steps:
            h = (rng.random(pre.shape) < sigmoid(beta * pre)).astype(float)
            field = (1.0 - beta) * b_A + beta * (h @ W.T + b)
            v = (rng.random(v.shape) < sigmoid(field)).astype(float)
    return log_weights, v


def inverse_temperatures(betas):
    """The schedule `betas` checked: an int K gives :func:`default_betas` ``(K)``; an array must
    rise strictly from exactly 0 to exactly 1.

    Parameters
    ----------
    betas : int or array_like of shape (K + 1,)

    Returns
    -------
    ndarray of shape (K + 1,)

    Examples
    --------
    >>> inverse_temperatures([0, 0.5, 1]).tolist()
    [0.0, 0.5, 1.0]
    """
    if isinstance(betas, numbers.Integral) and not isinstance(betas, bool):
        count = check_positive_int(betas, "betas")
        check_array_size(count + 1, f"betas={count}")
        return default_betas(count)
    arr = as_float_array(betas, "betas")
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"betas must be an int or a 1-d array of at least 2 inverse "
                         f"temperatures, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("betas must be finite")
    if arr[0] != 0.0 or arr[-1] != 1.0:
        raise ValueError(f"betas must start at exactly 0 and end at exactly 1, got "
                         f"{arr[0]:g} and {arr[-1]:g}")
    if np.any(np.diff(arr) <= 0):
        k = int(np.argmax(np.diff(arr) <= 0))
        raise ValueError(f"betas must be strictly increasing, but betas[{k + 1}] = "
                         f"{arr[k + 1]:g} <= betas[{k}] = {arr[k]:g}")
    return arr


def _check_base_biases(base_biases, n_visible):
    arr = as_float_array(base_biases, "base_biases")
    if n_visible is None:
        if arr.ndim != 1 or arr.size < 1:
            raise ValueError(f"base_biases must be a non-empty 1-d array, got shape {arr.shape}")
        n_visible = arr.size
    return check_finite_parameter(arr, "base_biases", (n_visible,))


def _base_biases_from(model, data, base_biases):
    if data is not None and base_biases is not None:
        raise ValueError("give at most one of data and base_biases, not both")
    if base_biases is not None:
        return _check_base_biases(base_biases, model.n_visible)
    if data is not None:
        data, _ = check_binary(data, "data", model.n_visible, allow_1d=False)
        return base_rate_biases(data)
    return np.zeros(model.n_visible)
