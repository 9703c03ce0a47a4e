"""Helpers that build what a check needs from what a library provides.

:func:`from_torch`, :func:`from_jax` and :func:`from_numpy` make a library's function take
and return what the checks pass and expect (NumPy arrays, float64 out): tensors of a stated
dtype and device in, ``.detach()`` on the way out, and the library's global generator seeded
from the check's at every call (a JAX key made from it), so that a check's draws follow its
``rng``.  PyTorch and JAX are optional: each is imported when its helper is called.
:func:`per_row` calls a function one row at a time (for a library that returns a batch
mean).  :func:`free_energy_from_energy` makes a free energy of a library that exposes only
the joint energy :math:`E(v, h)`, by enumerating the smaller layer.
"""

import functools
import importlib

import numpy as np
from scipy.special import logsumexp

from rbm.testing._shared import all_states, as_array, as_model, valid_callable

# Rows of (state, enumerated state) pairs passed to the energy at once.
PAIRS_PER_CALL = 1 << 16


def free_energy_from_energy(energy, model, *, over=None):
    r"""A free energy built from a joint energy :math:`E(v, h)` by enumerating one layer.

    :math:`F(v) = -\log \sum_h e^{-E(v, h)}` (``over="hidden"``) or
    :math:`F(h) = -\log \sum_v e^{-E(v, h)}` (``over="visible"``): every
    state of the enumerated layer is paired with every row, and `energy` is
    called on the pairs in blocks of at most ``2**16`` rows.

    Parameters
    ----------
    energy : callable
        ``energy(v, h) -> (n,)``, rows of visible and hidden states.
    model : RBM or tuple
        Gives the layers' sizes and unit values ({0,1} or ±1); see
        :func:`~rbm.testing.as_model`.
    over : {"hidden", "visible"}, optional
        The layer summed over; by default the smaller (``"hidden"`` on a
        tie), the cheaper one.  Summed over the visible layer, the result is
        the free energy of ``model.transpose()``'s visible layer: check it
        against that model.

    Returns
    -------
    callable
        ``f(x) -> (n,)`` for rows ``x`` of the layer not summed over, with
        the attribute ``over``.

    Raises
    ------
    TypeError
        If `energy` is not callable.
    ValueError
        If `over` is not ``"hidden"``, ``"visible"`` or None.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import check_free_energy, free_energy_from_energy
    >>> W, b, c = np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.1, -0.3]), np.zeros(2)
    >>> energy = lambda v, h: -v @ b - h @ c - np.einsum("ni,ij,nj->n", v, W, h)
    >>> f = free_energy_from_energy(energy, (W, b, c))
    >>> f.over
    'hidden'
    >>> _ = check_free_energy(f, (W, b, c))
    verdict: free energy: every visible state (4) within 1e-09 + 1e-12 |exact|
    """
    valid_callable(energy, "energy")
    model = as_model(model)
    if over is None:
        over = "hidden" if model.n_hidden <= model.n_visible else "visible"
    if over not in ("hidden", "visible"):
        raise ValueError(f"over must be 'hidden', 'visible' or None, got {over!r}")
    summed = all_states(getattr(model, over))
    per_call = max(1, PAIRS_PER_CALL // len(summed))

    def free_energy(x):
        x = np.asarray(x, dtype=float)
        out = []
        for start in range(0, len(x), per_call):
            rows = x[start:start + per_call]
            kept = np.repeat(rows, len(summed), axis=0)
            enumerated = np.tile(summed, (len(rows), 1))
            pair = (kept, enumerated) if over == "hidden" else (enumerated, kept)
            e = as_array(energy(*pair), "your energy", (len(kept),))
            out.append(-logsumexp(-e.reshape(len(rows), len(summed)), axis=1))
        return np.concatenate(out) if out else np.zeros(0)

    free_energy.over = over
    return free_energy


FLOAT_DTYPES = ("float64", "float32")


def _library(name, helper, install):
    """The module `name`, imported now; an ImportError that says how to install it."""
    try:
        return importlib.import_module(name)
    except ImportError:
        raise ImportError(f"{helper} needs {install}, which is not installed here "
                          f"(pip install {install}); rbm itself does not need it") from None


def _valid_float_dtype(dtype, name="dtype"):
    if dtype not in FLOAT_DTYPES:
        raise ValueError(f"{name} must be one of {FLOAT_DTYPES}, got {dtype!r}")
    return dtype


def _split_generator(args):
    """The positional arguments without the check's generator, and the generator (or None)."""
    rngs = [i for i, a in enumerate(args) if isinstance(a, np.random.Generator)]
    if len(rngs) > 1:
        raise TypeError("more than one numpy.random.Generator among the arguments")
    if not rngs:
        return list(args), None
    i = rngs[0]
    return list(args[:i]) + list(args[i + 1:]), args[i]


def to_numpy(x, to_array=np.asarray):
    """`x` as float64 NumPy values: arrays, numbers, and tuples, lists or dicts of them.

    `to_array` turns one of a library's arrays into a NumPy array (e.g. a
    tensor's ``.detach().cpu().numpy()``).  float32 values stay the same
    numbers in float64, so the checks still recognise float32 rounding.
    """
    if isinstance(x, (tuple, list)):
        return tuple(to_numpy(e, to_array) for e in x)
    if isinstance(x, dict):
        return {k: to_numpy(e, to_array) for k, e in x.items()}
    return np.asarray(to_array(x), dtype=np.float64)


def from_torch(f, *, dtype="float64", device="cpu", seed_numpy=False):
    """`f`, a function of PyTorch tensors, as the checks call it (NumPy in and out).

    Every NumPy array argument becomes a tensor of `dtype` on `device`
    (other arguments, e.g. ``n_chains``, pass unchanged).  A
    ``numpy.random.Generator`` argument (the check's ``rng``) is not passed
    on: it seeds PyTorch's global generator (``torch.manual_seed``, and
    NumPy's global one with `seed_numpy`) before each call, so the draws
    follow the check's generator.  Tensors returned, alone or in a tuple,
    list or dict, are detached, moved to the CPU and returned as float64
    NumPy arrays.

    Parameters
    ----------
    f : callable
        The library's function or method, taking tensors.
    dtype : {"float64", "float32"}
        Of the tensors passed in; the model's own dtype.
    device : str, default "cpu"
        Of the tensors passed in (``torch.device`` accepts it).
    seed_numpy : bool, default False
        Also seed NumPy's global generator (for a library that draws from it).

    Returns
    -------
    callable
        ``g(*args)`` taking what the check passes.

    Raises
    ------
    ImportError
        If PyTorch is not installed.
    TypeError
        If `f` is not callable.
    ValueError
        If `dtype` is not ``"float64"`` or ``"float32"``.

    Examples
    --------
    A PyTorch model's conditional and Gibbs step, checked (not run here:
    PyTorch is optional)::

        from rbm.testing import check_implementation, from_torch
        report = check_implementation(
            model=(W, b, c),  # the NumPy parameters the torch model holds
            prob_h_given_v=from_torch(torch_model.p_h),
            gibbs_step=from_torch(lambda v: torch_model.gibbs(v, k=1)))
    """
    valid_callable(f, "f")
    dtype = _valid_float_dtype(dtype)
    torch = _library("torch", "from_torch", "torch")
    tensor_dtype, where = getattr(torch, dtype), torch.device(device)

    def tensor(x):
        if isinstance(x, np.ndarray):
            return torch.as_tensor(np.ascontiguousarray(x), dtype=tensor_dtype, device=where)
        return x

    def out(x):
        if isinstance(x, torch.Tensor):
            return x.detach().cpu().numpy()
        return x

    @functools.wraps(f)
    def call(*args):
        args, rng = _split_generator(args)
        if rng is not None:
            torch.manual_seed(int(rng.integers(2**63)))
            if seed_numpy:
                np.random.seed(int(rng.integers(2**32)))
        return to_numpy(f(*[tensor(a) for a in args]), out)

    return call


def from_jax(f, *, x64=True, key_first=True):
    """`f`, a function of JAX arrays, as the checks call it (NumPy in and out).

    Every NumPy array argument becomes a JAX array, and `f` runs with
    64-bit types enabled (`x64`, ``jax.enable_x64``) or in JAX's default
    float32.  A ``numpy.random.Generator`` argument (the check's ``rng``)
    becomes a JAX key drawn from it (``jax.random.key``), passed first
    (`key_first`) or where the generator was.  Arrays returned, alone or in a
    tuple, list or dict, come back as float64 NumPy arrays.

    Parameters
    ----------
    f : callable
    x64 : bool, default True
        Run `f` with 64-bit types; False runs it in float32.
    key_first : bool, default True
        Pass the key as the first argument (JAX's convention), else in the
        generator's place.

    Returns
    -------
    callable

    Raises
    ------
    ImportError
        If JAX is not installed.
    TypeError
        If `f` is not callable.
    """
    valid_callable(f, "f")
    jax = _library("jax", "from_jax", "jax")
    jnp = importlib.import_module("jax.numpy")
    enable_x64 = getattr(jax, "enable_x64", None)  # a config object: no truth value
    if enable_x64 is None:  # older JAX
        enable_x64 = importlib.import_module("jax.experimental").enable_x64
    dtype = "float64" if x64 else "float32"

    @functools.wraps(f)
    def call(*args):
        with enable_x64(bool(x64)):
            if any(isinstance(a, np.random.Generator) for a in args):
                key = jax.random.key(int(_split_generator(args)[1].integers(2**31)))
                args = ([key] + _split_generator(args)[0] if key_first else
                        [key if isinstance(a, np.random.Generator) else a for a in args])
            args = [jnp.asarray(a, dtype=dtype) if isinstance(a, np.ndarray) else a
                    for a in args]
            return to_numpy(f(*args))

    return call


def from_numpy(f, *, dtype=None):
    """`f`, a NumPy function that draws from NumPy's global generator, as the checks call it.

    A ``numpy.random.Generator`` argument (the check's ``rng``) is not passed
    on: it seeds ``numpy.random.seed`` before each call.  Array arguments are
    cast to `dtype` (None leaves them); what `f` returns comes back as
    float64 arrays (tuples, lists and dicts kept).

    Parameters
    ----------
    f : callable
    dtype : {"float64", "float32"}, optional

    Returns
    -------
    callable

    Raises
    ------
    TypeError
        If `f` is not callable.
    ValueError
        If `dtype` is not ``"float64"``, ``"float32"`` or None.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import from_numpy
    >>> coin = from_numpy(lambda v: (np.random.random_sample(v.shape) < 0.5) * 1.0)
    >>> a = coin(np.zeros((2, 3)), np.random.default_rng(0))
    >>> b = coin(np.zeros((2, 3)), np.random.default_rng(0))
    >>> bool((a == b).all()), a.dtype
    (True, dtype('float64'))
    """
    valid_callable(f, "f")
    if dtype is not None:
        dtype = _valid_float_dtype(dtype)

    @functools.wraps(f)
    def call(*args):
        args, rng = _split_generator(args)
        if rng is not None:
            np.random.seed(int(rng.integers(2**32)))
        if dtype is not None:
            args = [a.astype(dtype) if isinstance(a, np.ndarray) else a for a in args]
        return to_numpy(f(*args))

    return call


def per_row(f):
    """`f` called on one row at a time, its values stacked: for a function that returns
    one number for a whole batch (its mean, say) where a check wants one per row.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import per_row
    >>> per_row(lambda x: x.sum(axis=1).mean())(np.eye(3))
    array([1., 1., 1.])
    """
    valid_callable(f, "f")

    @functools.wraps(f)
    def call(x, *rest):
        x = np.asarray(x)
        return np.array([np.asarray(f(x[i:i + 1], *rest), dtype=float).reshape(())
                         for i in range(len(x))])

    return call
