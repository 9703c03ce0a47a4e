r"""Bridge sampling (BAR) and thermodynamic integration (TI) of :math:`\log Z` on AIS's path.

Annealed importance sampling (:mod:`rbm.ais`) connects a base model
:math:`p_0` with known :math:`Z_0` to the target :math:`p_K` through
intermediate distributions :math:`p_k(v) = p_k^*(v) / Z_k` at inverse
temperatures :math:`0 = \beta_0 < \dots < \beta_K = 1`
(:func:`rbm.ais.intermediate_model`).  Samples of every :math:`p_k` can be
used in three ways to estimate
:math:`\log Z_K - \log Z_0 = \sum_k \log(Z_{k+1}/Z_k)`:

* **AIS**: the importance weight of a chain is the product of the ratios
  :math:`p_{k+1}^*/p_k^*` along it;
* **Bennett's acceptance ratio** (BAR; bridge sampling between neighbours):
  each :math:`\log(Z_{k+1}/Z_k)` from samples of *both* :math:`p_k` and
  :math:`p_{k+1}`, the root of Bennett's equation (:func:`bar_log_ratio`);
* **thermodynamic integration** (TI, path sampling):
  :math:`\log Z_1 - \log Z_0 = \int_0^1 \mathbb E_{p_\beta}[\partial_\beta \log p_\beta^*]\,d\beta`,
  the integral by the trapezoid or Simpson rule on the schedule
  (:func:`ti_log_partition`).

:func:`sample_path` runs the samples: the *same* Gibbs chains as AIS, which
pass through the schedule dwelling ``n_sweeps`` sweeps at each temperature,
and records at each :math:`\beta_k` what the three estimators need (not
the states, which would take ``(K + 1) * n_chains * n_visible`` numbers).
All three then come from one set of sweeps.  The chains' states at
:math:`\beta_k` follow :math:`p_k` only approximately (they lag behind the
annealing); AIS is unbiased for :math:`Z` all the same, BAR and TI are
not, and the book measures by how much.

Written against the layer interface (:mod:`rbm.layers`), like AIS: the
intermediate model at :math:`\beta` has weights :math:`\beta W` and layers
``layer.anneal(base, beta)``, the base layers of :func:`rbm.ais.base_layers`.

References
----------
.. [1] C. H. Bennett, "Efficient estimation of free energy differences from
   Monte Carlo data", Journal of Computational Physics 22, 245-268 (1976).
.. [2] M. R. Shirts, E. Bair, G. Hooker and V. S. Pande, "Equilibrium free
   energies from nonequilibrium measurements using maximum-likelihood
   methods", Physical Review Letters 91, 140601 (2003).
.. [3] A. Gelman and X.-L. Meng, "Simulating normalizing constants: from
   importance sampling to bridge sampling to path sampling", Statistical
   Science 13, 163-185 (1998).
.. [4] O. Krause, A. Fischer and C. Igel, "Algorithms for estimating the
   partition function of restricted Boltzmann machines", Artificial
   Intelligence 278, 103195 (2020).
"""

import numbers
from dataclasses import dataclass

import numpy as np
from scipy.integrate import simpson
from scipy.optimize import brentq

from rbm._kernels import gibbs_steps
from rbm._validation import (
    as_float_array,
    check_array_size,
    check_positive_int,
    check_rng,
)
from rbm.ais import AISResult, base_layers, default_betas, log_mean_weight
from rbm.model import RBM, check_model
from rbm.special import logsumexp, softplus

__all__ = [
    "PathSamples",
    "PartitionEstimate",
    "sample_path",
    "log_density_derivative",
    "bar_log_ratio",
    "ais_from_path",
    "bar_log_partition",
    "ti_log_partition",
]


@dataclass(frozen=True)
class PathSamples:
    r"""What :func:`sample_path` recorded at each inverse temperature of the schedule.

    With :math:`\ell_k(v) = \log p_k^*(v)` and :math:`v` a chain's state at
    :math:`\beta_k` (``n_chains`` of them per temperature):

    Attributes
    ----------
    betas : ndarray of shape (K + 1,)
        The schedule :math:`0 = \beta_0 < \dots < \beta_K = 1`.
    log_ratio_up : ndarray of shape (K, n_chains)
        Row k: :math:`\ell_{k+1}(v) - \ell_k(v)` at the states at :math:`\beta_k`.
    log_ratio_down : ndarray of shape (K, n_chains)
        Row k: :math:`\ell_k(v) - \ell_{k+1}(v)` at the states at :math:`\beta_{k+1}`.
    derivative : ndarray of shape (K + 1, n_chains)
        Row k: :math:`\partial_\beta \log p_\beta^*(v)` at :math:`\beta_k`
        (:func:`log_density_derivative`), at the states at :math:`\beta_k`.
    log_z_base : float
        Exact :math:`\log Z_0`.
    n_sweeps : int
        Gibbs sweeps per chain at each of :math:`\beta_1, \dots, \beta_K`.
    final_states : ndarray of shape (n_chains, n_visible)
        The chains' last states: at :math:`\beta_K = 1`, or at
        :math:`\beta_0 = 0` for chains run backwards.
    reverse : bool
        Whether the chains ran from the model to the base (``v_init``).
    """

    betas: np.ndarray
    log_ratio_up: np.ndarray
    log_ratio_down: np.ndarray
    derivative: np.ndarray
    log_z_base: float
    n_sweeps: int
    final_states: np.ndarray
    reverse: bool = False

    @property
    def n_chains(self):
        """Number of chains."""
        return self.derivative.shape[1]

    @property
    def total_sweeps(self):
        r"""Gibbs sweeps of one chain, :math:`K \cdot` ``n_sweeps``, times ``n_chains``."""
        return (len(self.betas) - 1) * self.n_sweeps * self.n_chains


@dataclass(frozen=True)
class PartitionEstimate:
    r"""An estimate of :math:`\log Z` as a sum of :math:`\log(Z_{k+1}/Z_k)` over the schedule.

    Attributes
    ----------
    log_z : float
    std_error : float
        The estimator's standard error from the spread of the samples,
        treating the temperatures as independent and each sample as a draw of
        its :math:`p_k`: neither holds for annealing chains, which is why the
        book compares it with the spread of independent runs.
    log_ratios : ndarray of shape (K,)
        The terms :math:`\log(Z_{k+1}/Z_k)` (for TI, the quadrature's share
        of each interval, for the trapezoid rule).
    log_z_base : float
    """

    log_z: float
    std_error: float
    log_ratios: np.ndarray
    log_z_base: float


def _schedule(betas):
    """An int count (:func:`rbm.ais.default_betas`) or a valid schedule, as a float array."""
    if isinstance(betas, numbers.Integral) and not isinstance(betas, bool):
        return default_betas(check_positive_int(betas, "betas"))
    arr = as_float_array(betas, "betas")
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"betas must be an int or a 1-d array of at least 2 inverse "
                         f"temperatures, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or arr[0] != 0.0 or arr[-1] != 1.0:
        raise ValueError("betas must be finite, start at exactly 0 and end at exactly 1")
    if np.any(np.diff(arr) <= 0):
        raise ValueError("betas must be strictly increasing")
    return arr


class _Path:
    r"""The intermediate models of one target and base, and :math:`\log p_\beta^*` on them."""

    def __init__(self, model, data, base_biases):
        self.model = model
        self.base_v, self.base_h = base_layers(model, data=data, base_biases=base_biases)
        self.log_z_base = float(
            self.base_v.log_normaliser(np.zeros((1,) + self.base_v.shape))[0]
            + self.base_h.log_normaliser(np.zeros((1,) + self.base_h.shape))[0])
        # energy differences of the layers (base minus target) per parameter, for d/dbeta
        self.gap_h = {k: getattr(self.base_h, k) - a
                      for k, a in model.hidden.parameters().items()}
        self._layers = {}

    def layers(self, beta):
        if beta not in self._layers:
            self._layers[beta] = (self.model.visible.anneal(self.base_v, beta),
                                  self.model.hidden.anneal(self.base_h, beta))
        return self._layers[beta]

    def intermediate(self, beta):
        visible, hidden = self.layers(beta)
        return RBM(beta * self.model.W, visible, hidden)

    def log_p(self, v, I, beta):
        r""":math:`\log p_\beta^*(v) = A_{h,\beta}(\beta I) - E_{v,\beta}(v)`, `I` the target's input."""
        visible, hidden = self.layers(beta)
        return hidden.log_normaliser(beta * I) - visible.energy(v)

    def derivative(self, v, I, beta):
        r""":math:`\partial_\beta \log p_\beta^*(v)`; energies are linear in the annealed parameters."""
        _, hidden = self.layers(beta)
        J = beta * I
        axes = tuple(range(1, I.ndim))
        out = (hidden.mean_statistic(J) * I).sum(axis=axes)
        for key, grad in hidden.normaliser_gradient(J).items():
            gap = self.gap_h[key]
            if np.any(gap):  # d/dbeta of theta_beta is -gap; dA/dtheta is grad
                out -= (grad * gap).reshape(grad.shape[0], -1).sum(axis=1)
        return out + self.base_v.energy(v) - self.model.visible.energy(v)


def log_density_derivative(model, v, beta, *, data=None, base_biases=None):
    r""":math:`\partial_\beta \log p_\beta^*(v)` on AIS's path, the integrand of thermodynamic integration.

    With the intermediate model of :func:`rbm.ais.intermediate_model`
    (weights :math:`\beta W`, layers of energy :math:`(1-\beta)E_A + \beta E`),
    :math:`\log p_\beta^*(v) = A_{\text{h},\beta}(\beta I) - E_{\text{v},\beta}(v)`
    with :math:`I = s_\text{v}(v) \cdot W`, so

    .. math::
        \partial_\beta \log p_\beta^*(v)
        = E_{\text{v},A}(v) - E_\text{v}(v)
        + \mathbb E_\beta\big[E_{\text{h},A}(h) - E_\text{h}(h) + I\cdot s_\text{h}(h) \,\big|\, v\big],

    the conditional mean of :math:`-\partial_\beta E_\beta(v, h)`.  For two
    {0,1} layers it is
    :math:`(b - b_A)^\top v + \sum_j (c_j + (v^\top W)_j)\,\sigma(\beta(c_j + (v^\top W)_j))`.
    Its mean under :math:`p_\beta` is :math:`\frac{d}{d\beta}\log Z_\beta`.

    Parameters
    ----------
    model : RBM
    v : array_like of shape (n_samples, n_visible)
    beta : float
        In :math:`[0, 1]`.
    data, base_biases : optional
        The base, as in :func:`rbm.ais.ais_log_partition`.

    Returns
    -------
    ndarray of shape (n_samples,)

    Examples
    --------
    >>> import numpy as np
    >>> from rbm import RBM, ais
    >>> from rbm.partition import log_density_derivative
    >>> model = RBM.random(4, 3, scale=1.0, bias_scale=1.0, rng=0)
    >>> v = np.array([[1.0, 0.0, 1.0, 1.0]])
    >>> eps = 1e-6
    >>> f = [-ais.intermediate_model(model, b).free_energy(v)[0]
    ...      for b in (0.5 - eps, 0.5 + eps)]
    >>> slope = log_density_derivative(model, v, 0.5)[0]
    >>> bool(np.isclose(slope, (f[1] - f[0]) / (2 * eps)))
    True
    """
    model = check_model(model)
    v, _ = model.visible.check_states(v, "v", allow_1d=False)
    beta = float(beta) if isinstance(beta, numbers.Real) and not isinstance(beta, bool) else None
    if beta is None or not 0.0 <= beta <= 1.0:
        raise ValueError("beta must be a number in [0, 1]")
    path = _Path(model, data, base_biases)
    return path.derivative(v, model.input_hidden(v), beta)


def sample_path(model, betas, *, n_chains=None, n_sweeps=1, rng, data=None, base_biases=None,
                v_init=None):
    r"""Run annealing chains from the base to `model` (or back), recording what AIS, BAR and TI need.

    The ``n_chains`` chains start from exact draws of the base model
    :math:`p_0`; at each :math:`\beta_k`, :math:`k = 1, \dots, K`, each
    makes ``n_sweeps`` Gibbs sweeps of the intermediate model (which leave
    :math:`p_k` invariant).  At each :math:`\beta_k` the states ``v`` give
    :math:`\ell_{k\pm1}(v) - \ell_k(v)` and
    :math:`\partial_\beta \log p_\beta^*(v)` (:class:`PathSamples`).  With
    ``n_sweeps=1`` these are the chains of
    :func:`rbm.ais.ais_log_partition` (the same draws from the same seed,
    plus one sweep at :math:`\beta_K`), and :func:`ais_from_path` gives its
    estimate.

    With `v_init` (ideally exact samples of `model`) the chains run the
    other way: they start at :math:`\beta_K = 1` from the rows of `v_init`
    and sweep at :math:`\beta_{K-1}, \dots, \beta_0`; these are the chains
    of :func:`rbm.ais.reverse_ais_log_partition`, and their states lag
    behind the annealing towards :math:`\beta = 1` instead of
    :math:`\beta = 0`.

    Parameters
    ----------
    model : RBM
    betas : int or array_like of shape (K + 1,)
        As in :func:`rbm.ais.ais_log_partition`.
    n_chains : int, optional
        At least 2; by default 100, or the number of rows of `v_init`.
    n_sweeps : int, default 1
        Sweeps per temperature; the cost is ``n_chains * K * n_sweeps`` sweeps.
    rng : numpy.random.Generator or int
    data, base_biases : optional
        The base, as in :func:`rbm.ais.ais_log_partition` (uniform by default).
    v_init : array_like of shape (n_chains, n_visible), optional
        Starting states at :math:`\beta = 1` for chains run from the model to
        the base.

    Returns
    -------
    PathSamples

    Examples
    --------
    >>> from rbm import RBM, exact
    >>> from rbm.partition import bar_log_partition, sample_path
    >>> model = RBM.random(8, 5, scale=0.5, bias_scale=0.5, rng=0)
    >>> path = sample_path(model, 200, n_chains=50, n_sweeps=2, rng=1)
    >>> path.log_ratio_up.shape, path.derivative.shape, path.total_sweeps
    ((200, 50), (201, 50), 20000)
    >>> bool(abs(bar_log_partition(path).log_z - exact.log_partition(model)) < 0.05)
    True
    """
    model = check_model(model)
    betas = _schedule(betas)
    n_sweeps = check_positive_int(n_sweeps, "n_sweeps")
    rng = check_rng(rng)
    if v_init is not None:
        v, _ = model.visible.check_states(v_init, "v_init", allow_1d=False)
        if n_chains is not None and n_chains != v.shape[0]:
            raise ValueError(f"n_chains ({n_chains}) must equal the number of rows of v_init "
                             f"({v.shape[0]}), or be None")
        n_chains = v.shape[0]
    elif n_chains is None:
        n_chains = 100
    n_chains = check_positive_int(n_chains, "n_chains", minimum=2)
    n_steps = len(betas) - 1
    check_array_size(3 * (n_steps + 1) * n_chains,
                     f"betas with {n_steps} steps and n_chains={n_chains}")
    check_array_size(n_chains * max(model.n_visible, model.n_hidden), f"n_chains={n_chains}")
    path = _Path(model, data, base_biases)
    up = np.empty((n_steps, n_chains))
    down = np.empty((n_steps, n_chains))
    derivative = np.empty((n_steps + 1, n_chains))
    if v_init is None:
        v = path.base_v.sample(np.zeros((n_chains,) + path.base_v.shape), rng=rng)
        order, start = range(n_steps + 1), 0
    else:
        v = v.copy()
        order, start = range(n_steps, -1, -1), n_steps
    for k in order:
        if k != start:
            v = gibbs_steps(path.intermediate(betas[k]), v, n_sweeps, rng)
        I = model.input_hidden(v)
        here = path.log_p(v, I, betas[k])
        if k < n_steps:
            up[k] = path.log_p(v, I, betas[k + 1]) - here
        if k > 0:
            down[k - 1] = path.log_p(v, I, betas[k - 1]) - here
        derivative[k] = path.derivative(v, I, betas[k])
    return PathSamples(betas=betas, log_ratio_up=up, log_ratio_down=down,
                       derivative=derivative, log_z_base=path.log_z_base,
                       n_sweeps=n_sweeps, final_states=v,
                       reverse=v_init is not None)


def _check_path(path):
    if not isinstance(path, PathSamples):
        raise TypeError(f"path must be a PathSamples (from sample_path), got "
                        f"{type(path).__name__}")
    return path


def _log_sigmoid(x):
    return -softplus(-x)


def bar_log_ratio(forward, reverse):
    r"""Bennett's acceptance ratio: :math:`\log(Z_1/Z_0)` from samples of both distributions.

    `forward` holds :math:`\log p_1^*(x) - \log p_0^*(x)` at draws of
    :math:`p_0`, `reverse` holds :math:`\log p_0^*(y) - \log p_1^*(y)` at
    draws of :math:`p_1`.  With :math:`m = \log(n_F / n_R)`, the estimate
    :math:`r` is the root of Bennett's equation

    .. math::
        \sum_{i=1}^{n_F} \sigma(f_i - r - m) = \sum_{j=1}^{n_R} \sigma(g_j + r + m),

    whose left side falls and right side rises with :math:`r`, so the
    root is unique; it is found by bracketing (Brent's method) rather than
    by Bennett's fixed-point iteration, which converges to the same root.
    It rests on the identity, for any :math:`\alpha`,

    .. math::
        \frac{Z_1}{Z_0} = \frac{\mathbb E_{p_0}[p_1^*\,\alpha]}{\mathbb E_{p_1}[p_0^*\,\alpha]},

    with Bennett's choice :math:`\alpha \propto 1/(n_F p_0^* + n_R p_1^* Z_0/Z_1)`,
    which minimises the asymptotic variance.  The standard error is that of
    Shirts et al. (2003), for independent draws:
    :math:`\frac{1}{N}\big(\langle \sigma(z)\sigma(-z) \rangle^{-1} - N/n_F - N/n_R\big)`
    over all :math:`N = n_F + n_R` draws, :math:`z = f_i - r - m` or
    :math:`g_j + r + m`.

    Parameters
    ----------
    forward : array_like of shape (n_F,)
    reverse : array_like of shape (n_R,)
        Each at least one finite value.

    Returns
    -------
    (float, float)
        The estimate of :math:`\log(Z_1/Z_0)` and its standard error.

    Examples
    --------
    Two unit-variance Gaussians one apart have equal normalisers:
    :math:`\log p_1^*(x) - \log p_0^*(x) = x - 1/2`.

    >>> import numpy as np
    >>> from rbm.partition import bar_log_ratio
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(0, 1, 2000), rng.normal(1, 1, 2000)
    >>> r, se = bar_log_ratio(x - 0.5, 0.5 - y)
    >>> bool(abs(r) < 3 * se), round(se, 2)
    (True, 0.03)
    """
    f = as_float_array(forward, "forward")
    g = as_float_array(reverse, "reverse")
    for arr, name in ((f, "forward"), (g, "reverse")):
        if arr.ndim != 1 or arr.size < 1:
            raise ValueError(f"{name} must be a 1-d array of at least one value, got shape "
                             f"{arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite")
    m = np.log(f.size / g.size)

    def gap(r):  # log of the left side minus log of the right side: falls with r
        return logsumexp(_log_sigmoid(f - r - m)) - logsumexp(_log_sigmoid(g + r + m))

    start = 0.5 * (f.mean() - g.mean())
    step = 1.0 + abs(f.mean() + g.mean())
    lo, hi = start - step, start + step
    while gap(lo) < 0:
        lo -= 2 * (hi - lo)
    while gap(hi) > 0:
        hi += 2 * (hi - lo)
    r = brentq(gap, lo, hi, xtol=1e-13, rtol=4 * np.finfo(float).eps)
    z = np.concatenate([f - r - m, g + r + m])
    n = z.size
    mean_ss = np.mean(np.exp(_log_sigmoid(z) + _log_sigmoid(-z)))
    variance = max((1.0 / mean_ss - n / f.size - n / g.size) / n, 0.0)
    return float(r), float(np.sqrt(variance))


def ais_from_path(path):
    r"""The AIS estimate of the chains of :func:`sample_path`, forward or reverse.

    Forward, :math:`\log w = \sum_k [\ell_{k+1} - \ell_k](v_k)` with
    :math:`v_k` the states at :math:`\beta_k`, and
    :math:`\log\hat Z = \log Z_0 + \log \bar w`; reverse (chains from
    `v_init`), :math:`\log w = \sum_k [\ell_k - \ell_{k+1}](v_{k+1})` and
    :math:`\log\hat Z = \log Z_0 - \log \bar w`, as
    :func:`rbm.ais.reverse_ais_log_partition`.

    Parameters
    ----------
    path : PathSamples

    Returns
    -------
    rbm.ais.AISResult

    Examples
    --------
    >>> import numpy as np
    >>> from rbm import RBM, ais, exact
    >>> from rbm.partition import ais_from_path, sample_path
    >>> model = RBM.random(6, 4, scale=0.5, bias_scale=0.5, rng=0)
    >>> a = ais_from_path(sample_path(model, 50, n_chains=20, rng=3))
    >>> b = ais.ais_log_partition(model, n_runs=20, betas=50, rng=3)
    >>> bool(np.isclose(a.log_z, b.log_z, rtol=0, atol=1e-10))
    True
    >>> v = exact.sample(model, 20, rng=4)
    >>> a = ais_from_path(sample_path(model, 50, v_init=v, rng=5))
    >>> b = ais.reverse_ais_log_partition(model, v, betas=50, rng=5)
    >>> bool(np.isclose(a.log_z, b.log_z, rtol=0, atol=1e-10))
    True
    """
    path = _check_path(path)
    if path.reverse:
        log_weights = path.log_ratio_down.sum(axis=0)
    else:
        log_weights = path.log_ratio_up.sum(axis=0)
    log_mean, std_error = log_mean_weight(log_weights)
    log_z = path.log_z_base - log_mean if path.reverse else path.log_z_base + log_mean
    return AISResult(log_z=log_z, std_error=std_error, log_weights=log_weights,
                     log_z_base=path.log_z_base, final_states=path.final_states)


def bar_log_partition(path):
    r"""Bennett's acceptance ratio between each pair of neighbouring temperatures, summed.

    :math:`\log \hat Z = \log Z_0 + \sum_{k=0}^{K-1} \hat r_k`, with
    :math:`\hat r_k` = :func:`bar_log_ratio` of the chains' states at
    :math:`\beta_k` and at :math:`\beta_{k+1}`.  The standard error adds the
    pairs' variances, as if the pairs were independent.

    Parameters
    ----------
    path : PathSamples

    Returns
    -------
    PartitionEstimate

    Examples
    --------
    >>> from rbm import RBM, exact
    >>> from rbm.partition import bar_log_partition, sample_path
    >>> model = RBM.random(6, 4, scale=1.0, bias_scale=0.5, rng=0)
    >>> est = bar_log_partition(sample_path(model, 100, n_chains=100, n_sweeps=3, rng=0))
    >>> bool(abs(est.log_z - exact.log_partition(model)) < 4 * est.std_error)
    True
    """
    path = _check_path(path)
    pairs = [bar_log_ratio(path.log_ratio_up[k], path.log_ratio_down[k])
             for k in range(len(path.betas) - 1)]
    ratios = np.array([r for r, _ in pairs])
    std_error = float(np.sqrt(sum(se**2 for _, se in pairs)))
    return PartitionEstimate(log_z=float(path.log_z_base + ratios.sum()), std_error=std_error,
                             log_ratios=ratios, log_z_base=path.log_z_base)


def ti_log_partition(path, *, rule="trapezoid"):
    r"""Thermodynamic integration: :math:`\log Z = \log Z_0 + \int_0^1 \mathbb E_{p_\beta}[\partial_\beta \log p_\beta^*]\,d\beta`.

    The identity :math:`\frac{d}{d\beta}\log Z_\beta = \mathbb E_{p_\beta}
    [\partial_\beta \log p_\beta^*]` (differentiate
    :math:`Z_\beta = \sum_v p_\beta^*(v)`) is integrated on the schedule
    from the chains' mean of :func:`log_density_derivative` at each
    :math:`\beta_k`, by the trapezoid rule or by Simpson's rule for uneven
    spacing (:func:`scipy.integrate.simpson`).  The quadrature adds an
    error of its own, of order :math:`\Delta\beta^2` (trapezoid); the
    standard error is that of the weighted sum of the means, as if the
    temperatures were independent.

    Parameters
    ----------
    path : PathSamples
    rule : {"trapezoid", "simpson"}

    Returns
    -------
    PartitionEstimate
        ``log_ratios`` are the trapezoid's terms (for Simpson's rule too: they
        show where along the path the integral grows).

    Examples
    --------
    >>> from rbm import RBM, exact
    >>> from rbm.partition import sample_path, ti_log_partition
    >>> model = RBM.random(6, 4, scale=1.0, bias_scale=0.5, rng=0)
    >>> path = sample_path(model, 200, n_chains=100, n_sweeps=3, rng=0)
    >>> est = ti_log_partition(path)
    >>> bool(abs(est.log_z - exact.log_partition(model)) < 4 * est.std_error + 0.01)
    True
    """
    path = _check_path(path)
    if rule not in ("trapezoid", "simpson"):
        raise ValueError(f"rule must be 'trapezoid' or 'simpson', got {rule!r}")
    betas, mean = path.betas, path.derivative.mean(axis=1)
    variance = path.derivative.var(axis=1, ddof=1) / path.n_chains
    widths = np.diff(betas)
    terms = 0.5 * widths * (mean[1:] + mean[:-1])
    if rule == "trapezoid":
        weights = np.zeros_like(betas)
        weights[1:] += 0.5 * widths
        weights[:-1] += 0.5 * widths
    else:
        n = len(betas)  # the weights, one block of rows of the identity at a time
        weights = np.concatenate([simpson(np.eye(min(512, n - i), n, k=i), x=betas, axis=1)
                                  for i in range(0, n, 512)])
    log_ratio = float(weights @ mean)
    return PartitionEstimate(log_z=path.log_z_base + log_ratio,
                             std_error=float(np.sqrt(weights**2 @ variance)),
                             log_ratios=terms, log_z_base=path.log_z_base)
