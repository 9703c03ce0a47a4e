r"""Exact quantities of small RBMs, by enumeration.

The partition function

.. math:: Z = \sum_{v, h} e^{-E(v, h)}

has a closed-form sum over either layer once the other is summed out, so
every function here enumerates only the **smaller** layer
(:math:`2^{\min(n_\text{visible}, n_\text{hidden})}` states), in blocks of
bounded memory and in log-space (the engine is the private module ``rbm._enumeration``).  An
enumeration beyond :math:`2^{30}` states is refused at once with a
:class:`ValueError`; functions that hold one number per visible state
(distributions, KL) stop at :math:`2^{20}` visible states.

**Accuracy.**  Results are finite for every model the package accepts
(parameters up to 1e100 in absolute value), but float64 rounding grows with
the parameters.  With :math:`\epsilon` the machine epsilon (2.2e-16) and
:math:`\|\theta\|_1` the sum of the absolute values of all entries of
``W``, ``b`` and ``c``, the absolute error is at most about
:math:`4\epsilon(\|\theta\|_1 + |\log Z|)` for :math:`\log Z` and
:math:`4\epsilon(1 + \|\theta\|_1)` for each model moment and each gradient
entry (tested against an extended-precision enumeration for parameters
from 1 to 1e15).  For the models of this book (:math:`\|\theta\|_1` below
1e4) that is a relative error near 1e-12 or better; for parameters near
1e12 a gradient entry may be off by 1e-3, and near 1e100 its sign means
nothing.

**Engines.**  With the optional dependency numba installed
(``pip install 'rbm-book[fast]'``) the inner loops of the enumeration run
compiled, about three times faster; without it they run as numpy passes.
Both give the same values to about 1e-15 relative; ``engine=`` chooses one
explicitly.

**Interrupting.**  Ctrl-C (or a notebook interrupt) stops every function
here within a fraction of a second, whatever the number of threads, and
leaves no thread running.  One exception: with numba, the first call in a
fresh installation compiles the loops (about half a second, then cached on
disk), and an interrupt waits for the compiler to finish.  Results are the same to the last bit whatever
the number of threads or cores.

**Other processes or machines.**  :func:`log_partition`,
:func:`log_likelihood`, :func:`log_prob`, :func:`model_expectations` and
:func:`gradient` take an ``executor``: any
:class:`concurrent.futures.Executor` (``submit`` returning futures), such as
a :class:`~concurrent.futures.ProcessPoolExecutor` or the executor of a Dask
cluster (``distributed.Client(...).get_executor()``).  The enumeration's
fixed segments (at most 16) then become its tasks, and their sums are
combined in the same order as on local threads, so the result is again the
same to the last bit:

>>> from concurrent.futures import ThreadPoolExecutor
>>> from rbm import RBM
>>> model = RBM.random(30, 20, scale=0.1, rng=0)
>>> with ThreadPoolExecutor(max_workers=2) as pool:
...     distributed = log_partition(model, executor=pool)
>>> distributed == log_partition(model, n_threads=1)
True

Ctrl-C cancels every task not yet finished and re-raises at once, leaving the
executor running; a task already running on another process or machine
finishes its segment there in the background (Dask cannot interrupt it), and
its result is discarded.  A task that fails, or whose worker dies without
the executor running it again (Dask does run it again on another worker),
makes the call raise :class:`RuntimeError` naming the task's blocks, from the
task's own exception: a sum is never returned with a segment missing.

**Any two layers.**  The functions take a model of any two layers
(:mod:`rbm.layers`) with at least one discrete layer: the discrete layer
with fewer states is enumerated and the other summed or integrated in closed
form through its log-normaliser (a Gaussian, ReLU or dReLU layer exactly).
Two {0,1} or ±1 layers run on the engine above (a ±1 unit is an affine map of
a bit, so the model is a binary one with shifted fields and a constant);
any other model runs on the layer engine of ``rbm._enumeration``, which
shares the blocks, segments, threads, Ctrl-C and executors, and so gives the
same bits on any number of cores.  Its moments are those of the statistics
:math:`s(v)`, :math:`s(h)`; :func:`model_statistics` and
:func:`data_statistics` give every parameter's term of the gradient.

States of a layer with ``n`` units are ordered as the binary numbers
``0 .. 2**n - 1`` with the **first unit as the most significant bit**
(see :func:`all_states`).
"""

import math
from dataclasses import dataclass

import numpy as np

from rbm._validation import (
    MAX_DENSE_BITS,
    MAX_ENUMERATION_BITS,
    as_float_array,
    check_binary,
    check_distribution,
    check_enumeration_size,
    check_positive_int,
    check_rng,
)
from rbm._enumeration import (CHUNK_ELEMENTS, check_engine, enumerate_layer,
                               enumerate_layers, states)
from rbm._kernels import row_statistics
from rbm.model import Gradient, check_model, parameter_names
from rbm.special import logsumexp

__all__ = [
    "MAX_ENUMERATION_BITS",
    "MAX_DENSE_BITS",
    "Expectations",
    "all_states",
    "state_index",
    "log_partition",
    "log_prob",
    "log_likelihood",
    "visible_distribution",
    "sample",
    "empirical_distribution",
    "entropy",
    "kl_divergence",
    "data_expectations",
    "model_expectations",
    "data_statistics",
    "model_statistics",
    "hidden_marginal",
    "model_means",
    "gradient",
    "enumerated_side",
]

@dataclass(frozen=True)
class Expectations:
    r"""Second and first moments of an RBM's units under some distribution.

    Attributes
    ----------
    vh : ndarray of shape (n_visible, n_hidden)
        :math:`\langle v h^\top \rangle`.
    v : ndarray of shape (n_visible,)
        :math:`\langle v \rangle`.
    h : ndarray of shape (n_hidden,)
        :math:`\langle h \rangle`.
    """

    vh: np.ndarray
    v: np.ndarray
    h: np.ndarray


def all_states(n):
    """Every binary vector of length `n`, as the rows of an array.

    Row ``k`` is the binary representation of ``k`` with the first unit as
    the most significant bit.

    Parameters
    ----------
    n : int
        Number of units, at most ``MAX_DENSE_BITS``.

    Returns
    -------
    ndarray of shape (2**n, n)

    Examples
    --------
    >>> all_states(2)
    array([[0., 0.],
           [0., 1.],
           [1., 0.],
           [1., 1.]])
    """
    n = check_positive_int(n, "n")
    check_enumeration_size(n, "all_states", limit=MAX_DENSE_BITS)
    return states(0, 2**n, n)


def state_index(states):
    """Index of each binary row in the order of :func:`all_states`.

    Parameters
    ----------
    states : array_like of shape (n,) or (n_samples, n)

    Returns
    -------
    int or ndarray of shape (n_samples,)

    Examples
    --------
    >>> state_index([[0, 1, 1], [1, 0, 0]]).tolist()
    [3, 4]
    """
    arr = as_float_array(states, "states")
    if arr.ndim not in (1, 2) or arr.shape[-1] < 1:
        raise ValueError(f"states must have shape (n,) or (n_samples, n), got {arr.shape}")
    arr2, single = check_binary(arr, "states", arr.shape[-1])
    if arr2.shape[1] > 62:
        raise ValueError(f"states has {arr2.shape[1]} columns; at most 62 fit an index")
    weights = 2 ** np.arange(arr2.shape[1] - 1, -1, -1, dtype=np.int64)
    idx = arr2.astype(np.int64) @ weights
    return int(idx[0]) if single else idx


def enumerated_side(model, layer=None):
    """The layer that exact values enumerate: `layer`, or the discrete one with fewer states.

    Raises a ValueError naming the layers when the choice is not discrete.
    """
    if layer not in (None, "visible", "hidden"):
        raise ValueError(f"layer must be None, 'visible' or 'hidden', got {layer!r}")
    sides = [layer] if layer is not None else ["hidden", "visible"]
    found = [side for side in sides if getattr(model, side).discrete]
    if not found:
        which = (f"model.{layer} is {getattr(model, layer)!r}" if layer is not None else
                 f"model.visible is {model.visible!r} and model.hidden is {model.hidden!r}")
        raise ValueError(f"exact values enumerate a discrete layer, but {which}: "
                         "continuous")
    return min(found, key=lambda side: _state_bits(getattr(model, side)))


def _state_bits(layer):
    """log2 of the number of states of a discrete layer."""
    return layer.n_units * math.log2(layer.n_states)


def _bits_problem(model, side):
    """Two layers of {0,1} or ±1 units as the binary engine's problem ``(a_x, a_y, M, kappa)``
    (:meth:`rbm.RBM.to_binary`; for {0,1} layers the model's own arrays)."""
    if model.is_binary:
        binary, kappa = model, 0.0
    else:
        binary, kappa = model.to_binary()
    if side == "hidden":
        return binary.c, binary.b, binary.W.T, kappa
    return binary.b, binary.c, binary.W, kappa


def _statistic_moments(model, x, y, xy):
    r"""Moments of the bits mapped to the statistics, :math:`s = \alpha x + \beta`."""
    (av, bv), (ah, bh) = model.visible.bits, model.hidden.bits
    if (av, bv, ah, bh) == (1.0, 0.0, 1.0, 0.0):
        return xy, x, y
    sv, sh = av * x + bv, ah * y + bh
    cross = (av * ah) * xy + (av * bh) * x[:, None] + (bv * ah) * y[None, :] + bv * bh
    return cross, sv, sh


def _enumerate(model, layer=None, moments=False, chunk_size=None, n_threads=None,
               method=None, engine=None, executor=None):
    """log Z and, with `moments`, the model's moments, in one pass over one layer.

    Two {0,1}/±1 layers run on the binary engine (an :class:`Expectations`);
    any other model on the layer engine (a dict of its sums, the model's
    orientation: ``cross``, ``v``, ``h`` and every parameter's model term).
    """
    side = enumerated_side(model, layer)
    x = getattr(model, side)
    check_enumeration_size(int(np.ceil(_state_bits(x) - 1e-9)),
                           f"exact enumeration of the {side} layer")
    swapped = side == "hidden"
    if model.visible.bits is not None and model.hidden.bits is not None:
        a_x, a_y, M, kappa = _bits_problem(model, side)
        log_z, found = enumerate_layer(a_x, a_y, M, moments=moments, chunk_size=chunk_size,
                                       n_threads=n_threads, method=method, engine=engine,
                                       executor=executor)
        log_z = log_z + kappa
        if not moments:
            return log_z, None
        s_x, s_y, s_xy = found
        x_, y_, xy = (s_y, s_x, s_xy.T.copy()) if swapped else (s_x, s_y, s_xy)
        vh, v, h = _statistic_moments(model, x_, y_, xy)
        return log_z, Expectations(vh=vh, v=v, h=h)
    if engine not in (None, "numpy"):
        check_engine(engine)  # a bad name, or numba missing, fails as for the binary engine
        raise ValueError(f"engine={engine!r} runs only the engine of two {{0,1}} or ±1 layers; "
                         f"this model ({model!r}) runs with numpy (engine=None or 'numpy')")
    if method is not None:
        raise ValueError("method applies to the engine of two {0,1} or ±1 layers only")
    y = model.hidden if side == "visible" else model.visible
    M = model.coupling_matrix().T if swapped else model.coupling_matrix()
    log_z, sums = enumerate_layers(x, y, M, moments=moments, chunk_size=chunk_size,
                                   n_threads=n_threads, executor=executor)
    if not moments:
        return log_z, None
    xs, ys = ("h", "v") if swapped else ("v", "h")
    names = {"v": parameter_names("visible", model.visible),
             "h": parameter_names("hidden", model.hidden)}
    out = {"cross": (sums["cross"].T if swapped else sums["cross"]).reshape(model.W.shape),
           xs: sums["x"].reshape(x.shape), ys: sums["y"].reshape(y.shape)}
    for key, value in sums.items():
        if ":" in key:
            part, name = key.split(":")
            out[names[xs if part == "x" else ys][name]] = value
    return log_z, out


def log_partition(model, *, layer=None, chunk_size=None, n_threads=None, engine=None,
                  executor=None):
    r"""Exact :math:`\log Z`, enumerating one layer.

    With the hidden layer summed out in closed form,

    .. math:: \log Z = \log \sum_v \exp\Big(b^\top v + \sum_j
              \operatorname{softplus}(c_j + (v^\top W)_j)\Big),

    and symmetrically with the visible layer summed out.

    Parameters
    ----------
    model : RBM
    layer : {None, "visible", "hidden"}
        The layer to enumerate; ``None`` (default) takes the smaller one.
    chunk_size : int, optional
        States per block of work, rounded down to a power of two; by
        default a block holds between 2**14 and 2**20 numbers (128 KiB to
        8 MiB, growing with the enumeration).  Memory is bounded by the
        blocks, not by the number of states: at most about
        16 + 48 ``n_threads`` MiB with the default blocks.
    n_threads : int, optional
        Threads that share the work; by default one per available core
        (one for small enumerations, below 2**22 states times units).  The
        result does not depend on it, to the last bit.
    engine : {None, "numpy", "numba"}
        How the inner loops run: ``"numba"`` compiled (the optional
        dependency numba, ``pip install 'rbm-book[fast]'``), ``"numpy"`` as array
        passes, and ``None`` (default) compiled when numba is installed.  The
        two agree to about 1e-15 relative (tested to 1e-12); the compiled
        loops are about three times faster and hold no block-sized scratch
        arrays.  Models with weights so large that the stable path is taken
        (see the module notes) run with numpy either way.
    executor : concurrent.futures.Executor, optional
        Runs the work instead of local threads: one task per segment of
        the enumeration (at most 16, one for enumerations below 2**22
        states times units), each sent the model's parameters and returning
        a few numbers (for :func:`model_expectations`, about one block's
        table as well: at most 8 MiB).  Any object whose ``submit`` returns
        futures will do, e.g. a process pool or a Dask client's
        ``get_executor()``; the executor is never shut down.  The result is
        the same to the last bit as with local threads.  Not together with
        `n_threads`.

    Returns
    -------
    float
        With an absolute error of at most about
        :math:`4\epsilon(\|\theta\|_1 + |\log Z|)` (see the module notes).

    Raises
    ------
    ValueError
        If the enumerated layer has more than ``MAX_ENUMERATION_BITS`` units,
        or if both `n_threads` and `executor` are given.
    TypeError
        If `executor` has no callable ``submit``.
    RuntimeError
        If a task of `executor` fails (see the module notes); the message
        names the task's blocks and the task's exception is its cause.

    Examples
    --------
    >>> from rbm import RBM
    >>> model = RBM(W=np.zeros((3, 2)), b=np.zeros(3), c=np.zeros(2))
    >>> # 2**5 joint states, all of energy 0
    >>> bool(abs(log_partition(model) - 5 * np.log(2)) < 1e-12)
    True
    """
    check_model(model)
    return float(_enumerate(model, layer=layer, chunk_size=chunk_size, n_threads=n_threads,
                            engine=engine, executor=executor)[0])


def log_prob(model, v, *, n_threads=None, engine=None, executor=None):
    r"""Exact :math:`\log p(v) = -F(v) - \log Z` for each row of `v`.

    Parameters
    ----------
    model : RBM
    v : array_like of shape (n_visible,) or (n_samples, n_visible)
    n_threads, engine, executor
        As in :func:`log_partition`, for :math:`\log Z`.

    Returns
    -------
    float or ndarray of shape (n_samples,)
    """
    check_model(model)
    return -model.free_energy(v) - log_partition(model, n_threads=n_threads, engine=engine,
                                                 executor=executor)


def log_likelihood(model, data, *, n_threads=None, engine=None, executor=None):
    r"""Mean log-likelihood :math:`\frac{1}{N}\sum_n \log p(v^{(n)})` of a data set.

    Parameters
    ----------
    model : RBM
    data : array_like of shape (n_samples, n_visible)
        Zeros and ones.
    n_threads, engine, executor
        As in :func:`log_partition`, for :math:`\log Z`.

    Returns
    -------
    float

    Examples
    --------
    >>> import rbm
    >>> model = rbm.RBM(W=np.zeros((2, 1)), b=np.zeros(2), c=np.zeros(1))
    >>> round(float(log_likelihood(model, [[0, 1], [1, 1]])), 6)  # uniform over 4 states
    -1.386294
    """
    check_model(model)
    data, _ = model.visible.check_states(data, "data", allow_1d=False)
    return float(np.mean(log_prob(model, data, n_threads=n_threads, engine=engine,
                                  executor=executor)))


def _rows_per_block(model):
    """Visible states per block of free energies: about CHUNK_ELEMENTS numbers (8 MiB) each."""
    return max(1, CHUNK_ELEMENTS // (int(np.prod(model.visible.shape))
                                     + int(np.prod(model.hidden.shape))))


def _n_visible_states(model, what):
    """The number of visible states, refused beyond ``2**MAX_DENSE_BITS``."""
    check_model(model, discrete=what)
    check_enumeration_size(int(np.ceil(_state_bits(model.visible) - 1e-9)), what,
                           limit=MAX_DENSE_BITS)
    return model.visible.n_states ** model.n_visible


def _log_prob_at(model, index, log_z):
    r""":math:`\log p(v)` of the visible states numbered `index`, in blocks of bounded memory."""
    out = np.empty(len(index))
    rows = _rows_per_block(model)
    for start in range(0, len(index), rows):
        V = model.visible.states_at(index[start:start + rows])
        out[start:start + rows] = -model.free_energy(V) - log_z
    return out


def visible_distribution(model):
    r"""Exact :math:`p(v)` for every visible state, in the order of :func:`all_states`.

    The free energies are computed in blocks of about 2**20 numbers, so memory
    holds the result (``2**n_visible`` numbers, at most 8 MiB) and about 40 MiB
    besides, whatever the number of hidden units.

    Returns
    -------
    ndarray of shape (2**n_visible,)
        Each entry has a relative error of at most about
        :math:`10\,\epsilon\,(|\log p(v)| + |\log Z|)`, with :math:`\epsilon`
        the float64 machine epsilon.
    """
    size = _n_visible_states(model, "visible_distribution")
    index = np.arange(size, dtype=np.int64)
    return np.exp(_log_prob_at(model, index, log_partition(model)))


def sample(model, n_samples, *, rng):
    r"""Exact samples of :math:`p(v)`, by drawing a layer from its exact marginal.

    If ``n_hidden <= MAX_DENSE_BITS``, each sample draws
    :math:`h \sim p(h) = e^{-F(h)} / Z` from the exact marginal of the
    hidden layer (the :func:`visible_distribution` of the transposed
    model), then :math:`v \sim p(v \mid h)`; the pair is an exact draw of
    :math:`p(v, h)`, so ``v`` is an exact draw of :math:`p(v)`.  Otherwise,
    if ``n_visible <= MAX_DENSE_BITS``, ``v`` is drawn from
    :func:`visible_distribution` directly.  No Markov chain is involved.

    Parameters
    ----------
    model : RBM
        At least one layer with at most ``MAX_DENSE_BITS`` (20) units.
    n_samples : int
        At least 1.
    rng : numpy.random.Generator or int

    Returns
    -------
    ndarray of shape (n_samples, n_visible)
        Zeros and ones (float64), independent draws.

    Notes
    -----
    Memory holds the marginal (:math:`2^{\min(n_\text{visible},
    n_\text{hidden})}` numbers, at most 8 MiB), its cumulative sum and
    the samples; time is that of one :func:`visible_distribution`.

    Examples
    --------
    >>> from rbm import RBM
    >>> model = RBM(W=np.zeros((3, 2)), b=np.array([50.0, -50.0, 50.0]), c=np.zeros(2))
    >>> sample(model, 2, rng=0).tolist()  # each unit is all but certain
    [[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]]
    """
    check_model(model)
    n_samples = check_positive_int(n_samples, "n_samples")
    rng = check_rng(rng)
    side = enumerated_side(model)
    check_enumeration_size(int(np.ceil(_state_bits(getattr(model, side)) - 1e-9)),
                           "exact sampling", limit=MAX_DENSE_BITS)
    by_hidden = side == "hidden"
    p = visible_distribution(model.transpose() if by_hidden else model)
    index = rng.choice(p.size, size=n_samples, p=p / p.sum())
    layer = getattr(model, side)
    if layer.bits == (1.0, 0.0):
        small = layer.n_units
        chosen = ((index[:, None] >> np.arange(small - 1, -1, -1)) & 1).astype(float)
    else:
        chosen = layer.states_at(index)
    return model.sample_v_given_h(chosen, rng=rng) if by_hidden else chosen


def hidden_marginal(model):
    r"""Every hidden state and its exact probability, :math:`p(h) \propto
    e^{-E_\text{h}(h) + A_\text{v}(W s_\text{h}(h))}` (the visible layer summed or integrated out).

    For Gaussian visible units :math:`p(v) = \sum_h p(h)\, p(v \mid h)` is a mixture of
    Gaussians, one per hidden state, with these weights.

    Parameters
    ----------
    model : RBM
        With a discrete hidden layer of at most ``2**MAX_DENSE_BITS`` states.

    Returns
    -------
    (ndarray of shape (n_states, n_hidden), ndarray of shape (n_states,))
        The states, in the order of ``model.hidden.states``, and their probabilities.

    Examples
    --------
    >>> from rbm import RBM
    >>> from rbm.layers import Binary, Gaussian
    >>> model = RBM(np.zeros((1, 2)), Gaussian([0.0]), Binary([0.0, np.log(3.0)]))
    >>> H, p = hidden_marginal(model)
    >>> [round(float(x), 12) for x in p]
    [0.125, 0.375, 0.125, 0.375]
    """
    check_model(model)
    if not model.hidden.discrete:
        raise ValueError(f"hidden_marginal needs a discrete hidden layer; model.hidden is "
                         f"{model.hidden!r}, which is continuous")
    flipped = model.transpose()
    p = visible_distribution(flipped)
    return model.hidden.states(0, p.size), p


def model_means(model):
    r"""Exact :math:`\langle v\rangle` and :math:`\langle h\rangle` under the model (means of the
    states, in the representation of ``layer.embed``: one-hot for Potts units).

    The discrete layer with fewer states is enumerated with its exact marginal; the other
    layer's mean is the average of its conditional mean.

    Parameters
    ----------
    model : RBM
        Whose enumerated layer has at most ``2**MAX_DENSE_BITS`` states.

    Returns
    -------
    (ndarray, ndarray)
    """
    check_model(model)
    side = enumerated_side(model)
    if side == "hidden":
        H, p = hidden_marginal(model)
        return p @ model.visible.mean(model.input_visible(H)).reshape(len(H), -1), \
            p @ model.hidden.embed(H).reshape(len(H), -1)
    V = model.visible.states(0, model.visible.n_states ** model.n_visible)
    p = visible_distribution(model)
    return p @ model.visible.embed(V).reshape(len(V), -1), \
        p @ model.hidden.mean(model.input_hidden(V)).reshape(len(V), -1)


def empirical_distribution(data):
    r"""The empirical distribution :math:`q(v) = \frac{1}{N}\sum_n [v = v^{(n)}]`.

    Parameters
    ----------
    data : array_like of shape (n_samples, n_visible)
        Zeros and ones; ``n_visible`` at most ``MAX_DENSE_BITS``.

    Returns
    -------
    ndarray of shape (2**n_visible,)
        Probabilities in the order of :func:`all_states`.

    Examples
    --------
    >>> empirical_distribution([[0, 1], [0, 1], [1, 1], [0, 0]]).tolist()
    [0.25, 0.5, 0.0, 0.25]
    """
    arr = as_float_array(data, "data")
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise ValueError(f"data must have shape (n_samples, n_visible), got {arr.shape}")
    n_visible = arr.shape[1]
    check_enumeration_size(n_visible, "empirical_distribution", limit=MAX_DENSE_BITS)
    arr, _ = check_binary(arr, "data", n_visible, allow_1d=False)
    counts = np.bincount(state_index(arr), minlength=2**n_visible)
    return counts / arr.shape[0]


def entropy(q):
    r"""Shannon entropy :math:`H(q) = -\sum_v q(v) \log q(v)` in nats (with :math:`0 \log 0 = 0`).

    Examples
    --------
    >>> round(float(entropy([0.5, 0.5, 0.0, 0.0])), 6)
    0.693147
    """
    q = as_float_array(q, "q")
    q = check_distribution(q, "q", q.size if q.ndim == 1 else -1)
    nz = q > 0
    return float(-np.sum(q[nz] * np.log(q[nz])))


def kl_divergence(q, model):
    r"""Exact :math:`\mathrm{KL}(q \,\|\, p) = \sum_v q(v) \log q(v) - \sum_v q(v) \log p(v)`.

    Parameters
    ----------
    q : array_like of shape (2**n_visible,)
        A distribution over all visible states, in the order of
        :func:`all_states` (for a data set, :func:`empirical_distribution`).
    model : RBM

    Returns
    -------
    float
        Non-negative; zero only when ``q`` equals the model's ``p(v)``.

    Notes
    -----
    Only the states where :math:`q > 0` are visited, in blocks of about 2**20
    numbers: besides `q`, memory holds about 40 MiB.

    The first sum is :math:`-H(q)` and does not depend on the model, so
    :math:`\mathrm{KL}(q\|p) = -H(q) - \langle \log p \rangle_q`: minimising
    it over the parameters maximises the mean log-likelihood.
    """
    q = check_distribution(q, "q", _n_visible_states(model, "kl_divergence"))
    nz = np.flatnonzero(q)
    log_p = _log_prob_at(model, nz, log_partition(model))
    return float(np.sum(q[nz] * (np.log(q[nz]) - log_p)))


def data_expectations(model, data):
    r"""Moments under the data with the hidden units inferred: :math:`q(v)\,p(h \mid v)`.

    Uses :math:`\mathbb E[s(h) \mid v]` (for {0,1} units :math:`p(h_j = 1 \mid v)`)
    in place of :math:`s(h)` (exact, as it enters linearly).

    Parameters
    ----------
    model : RBM
    data : array_like of shape (n_samples, n_visible)

    Returns
    -------
    Expectations
        ``vh`` of the shape of ``W`` holds :math:`\langle s(v) s(h)^\top\rangle`,
        ``v`` and ``h`` the statistics' means.
    """
    check_model(model)
    data, _ = model.visible.check_states(data, "data", allow_1d=False)
    P = model.hidden.mean_statistic(model.input_hidden(data))
    n = data.shape[0]
    if model.visible.bits is not None and model.hidden.bits is not None:
        S = model.visible.statistic(data)
        return Expectations(vh=S.T @ P / n, v=S.mean(axis=0), h=P.mean(axis=0))
    S = model.visible.statistic(data)
    vh = (S.reshape(n, -1).T @ P.reshape(n, -1)).reshape(model.W.shape) / n
    return Expectations(vh=vh, v=S.mean(axis=0), h=P.mean(axis=0))


def _moments(model, layer, chunk_size, n_threads, engine, executor):
    """The sums of the moments pass: Expectations (binary engine) or a dict of named sums."""
    check_model(model)
    return _enumerate(model, layer=layer, moments=True, chunk_size=chunk_size,
                      n_threads=n_threads, engine=engine, executor=executor)[1]


def model_expectations(model, *, layer=None, chunk_size=None, n_threads=None, engine=None,
                       executor=None):
    r"""Exact moments under the model: :math:`\langle s(v) s(h)^\top\rangle`, :math:`\langle s(v)\rangle`, :math:`\langle s(h)\rangle`.

    For the binary model :math:`\langle v h^\top\rangle`, :math:`\langle v\rangle`,
    :math:`\langle h\rangle`.  One chunked pass over the enumerated layer
    (the discrete one with fewer states), with the other layer's conditional
    means in closed form.

    Parameters
    ----------
    model : RBM
    layer, chunk_size, n_threads, engine, executor
        As in :func:`log_partition`.

    Returns
    -------
    Expectations
        Each entry with an absolute error of at most about
        :math:`4\epsilon(1 + \|\theta\|_1)` (see the module notes).
    """
    found = _moments(model, layer, chunk_size, n_threads, engine, executor)
    if isinstance(found, Expectations):
        return found
    return Expectations(vh=found["cross"], v=found["v"], h=found["h"])


def data_statistics(model, data):
    r"""The data term of the gradient: :math:`\langle -\partial E/\partial\theta\rangle` over
    the rows of `data`, the hidden units summed out given each row.

    Parameters
    ----------
    model : RBM
    data : array_like of shape (n_samples, n_visible)

    Returns
    -------
    Gradient
        One field per parameter of the model.
    """
    check_model(model)
    data, _ = model.visible.check_states(data, "data", allow_1d=False)
    if model.visible.bits is not None and model.hidden.bits is not None:
        pos = data_expectations(model, data)
        return Gradient(W=pos.vh, b=pos.v, c=pos.h)
    fields = row_statistics(model, data, accurate=True)
    return Gradient.from_fields({k: v / data.shape[0] for k, v in fields.items()})


def model_statistics(model, *, layer=None, chunk_size=None, n_threads=None, engine=None,
                     executor=None):
    r"""The model term of the gradient: :math:`\langle -\partial E/\partial\theta\rangle_\text{model}`.

    For layers whose only parameter is a bias (Binary, Spin, Potts) these are
    the moments of :func:`model_expectations`; for the others they include
    :math:`\langle -\partial E/\partial\gamma\rangle` and the like, summed
    through the layers' normaliser gradients.

    Parameters
    ----------
    model : RBM
    layer, chunk_size, n_threads, engine, executor
        As in :func:`log_partition`.

    Returns
    -------
    Gradient
    """
    found = _moments(model, layer, chunk_size, n_threads, engine, executor)
    if isinstance(found, Expectations):
        return Gradient(W=found.vh, b=found.v, c=found.h)
    fields = {"W": found["cross"]}
    fields.update((k, found[k]) for k in model.parameters() if k != "W")
    return Gradient.from_fields(fields)


def gradient(model, data, *, layer=None, chunk_size=None, n_threads=None, engine=None,
             executor=None):
    r"""Exact gradient of the mean log-likelihood: data term minus model term.

    .. math::
        \frac{\partial \bar\ell}{\partial\theta} = \Big\langle -\frac{\partial E}{\partial\theta}
        \Big\rangle_\text{data} - \Big\langle -\frac{\partial E}{\partial\theta}
        \Big\rangle_\text{model},

    for the binary model

    .. math::
        \frac{\partial \bar\ell}{\partial W} = \langle v h^\top\rangle_\text{data}
        - \langle v h^\top\rangle_\text{model},\quad
        \frac{\partial \bar\ell}{\partial b} = \langle v\rangle_\text{data} - \langle v\rangle_\text{model},\quad
        \frac{\partial \bar\ell}{\partial c} = \langle h\rangle_\text{data} - \langle h\rangle_\text{model}.

    This is the ascent direction: a small step along it raises
    :func:`log_likelihood`.

    Parameters
    ----------
    model : RBM
    data : array_like of shape (n_samples, n_visible)
    layer, chunk_size, n_threads, engine, executor
        As in :func:`log_partition`.

    Returns
    -------
    Gradient
        One field per parameter (``W``, ``b``, ``c`` for the binary model);
        each entry with an absolute error of at most about
        :math:`4\epsilon(1 + \|\theta\|_1)` (see the module notes): at
        parameters near 1e12, about 1e-3.

    Examples
    --------
    >>> from rbm import RBM
    >>> from rbm.layers import Potts, Binary
    >>> model = RBM.random(Potts(np.zeros((3, 4))), Binary(np.zeros(2)), scale=0.5, rng=0)
    >>> gradient(model, [[0, 1, 3], [2, 2, 0]]).names
    ('W', 'b', 'c')
    """
    pos = data_statistics(model, data)
    neg = model_statistics(model, layer=layer, chunk_size=chunk_size, n_threads=n_threads,
                           engine=engine, executor=executor)
    return pos - neg


# -- plain references ---------------------------------------------------------------
# Each formula above written directly, over every visible state: a few lines, slow, and
# sharing nothing with the engine. The tests use them as the oracle for the fast paths.

def _reference_log_partition(model):
    r""":math:`\log Z = \log \sum_v e^{-F(v)}`, every visible state at once."""
    return float(logsumexp(-model.free_energy(all_states(model.n_visible))))


def _reference_model_expectations(model):
    r"""Model moments as :math:`\sum_v p(v)\, v\, p(h{=}1 \mid v)^\top` and its marginals."""
    V = all_states(model.n_visible)
    p = np.exp(-model.free_energy(V) - _reference_log_partition(model))
    P = model.prob_h_given_v(V)
    return Expectations(vh=(V * p[:, None]).T @ P, v=p @ V, h=p @ P)


def _reference_gradient(model, data):
    """Data term minus model term, each by its formula."""
    V = check_binary(data, "data", model.n_visible, allow_1d=False)[0]
    P = model.prob_h_given_v(V)
    neg = _reference_model_expectations(model)
    return Gradient(W=V.T @ P / len(V) - neg.vh, b=V.mean(axis=0) - neg.v,
                    c=P.mean(axis=0) - neg.h)
