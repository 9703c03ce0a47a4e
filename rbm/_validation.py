"""Argument checks shared by the package: every bad input fails at once, by name."""

import numbers

import numpy as np

# Enumerating more states than this is refused: 2**30 states of a layer take
# tens of minutes even at a few hundred units on the other side.
MAX_ENUMERATION_BITS = 30
# Functions that hold one number per visible state in memory (distributions
# over all 2**n_visible states, transition matrices) are limited further.
MAX_DENSE_BITS = 20
# Arrays the caller's counts size (chains, temperatures) are refused beyond this many
# float64 entries (2 GiB), with an error that names the count, not numpy's MemoryError.
MAX_ARRAY_ELEMENTS = 2**28
# Parameters beyond this size are refused: sums of products of them over 2**30 states
# could overflow float64, and no trained model comes near it.
MAX_PARAMETER = 1e100


def check_parameter_values(arr, name, context=""):
    """Finite, and at most ``MAX_PARAMETER`` in absolute value; `context` ends the message."""
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite, but it holds NaN or infinity{context}")
    if arr.size and np.abs(arr).max() > MAX_PARAMETER:
        raise ValueError(f"{name} must be at most {MAX_PARAMETER:g} in absolute value, "
                         f"got {np.abs(arr).max():g}{context}")


def check_bool(value, name):
    """Require a bool (numpy's included): a string such as "False" is not one."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_rng(rng, name="rng"):
    """Return a :class:`numpy.random.Generator` from a Generator or an int seed."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"{name} must be a non-negative int seed, got {rng}")
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"{name} must be a numpy.random.Generator or an int seed, got {type(rng).__name__}"
    )


def check_positive_int(value, name, minimum=1):
    """Return `value` as an int, requiring ``value >= minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_positive_float(value, name, allow_zero=False):
    """Return `value` as a finite float, positive (or non-negative)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    try:
        value = float(value)
    except OverflowError:  # an int beyond the float range
        raise ValueError(f"{name} must be finite, got an int of {len(str(abs(value)))} "
                         "digits, beyond the float range") from None
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {bound}, got {value}")
    return value


def as_float_array(x, name):
    """Convert to a float64 array, with a TypeError for non-numeric input."""
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged nested lists, for example
        raise TypeError(f"{name} could not be converted to an array: {exc}") from exc
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)
    ):
        raise TypeError(f"{name} must be a numeric array, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real, got dtype {arr.dtype}")
    return arr.astype(float)


def as_real_array(x, name):
    """Like :func:`as_float_array`, but without a copy when `x` is already a float64 array."""
    if isinstance(x, np.ndarray) and x.dtype == np.float64:
        return x
    return as_float_array(x, name)


def check_finite_parameter(x, name, shape):
    """A real, finite parameter array of exactly `shape`, copied to float64."""
    arr = as_float_array(x, name)
    if arr.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {arr.shape}")
    check_parameter_values(arr, name)
    return arr.copy()


def check_binary(x, name, width, allow_1d=True):
    """Binary states of a layer of `width` units.

    Accepts shape ``(width,)`` (when `allow_1d`) or ``(n, width)`` with
    ``n >= 1`` and every entry 0 or 1 (bool, int or float).  Returns the
    float64 array and whether the input was one vector.
    """
    arr = as_float_array(x, name)
    if arr.ndim == 1 and allow_1d:
        single = True
        arr2 = arr[None, :]
    elif arr.ndim == 2:
        single = False
        arr2 = arr
    else:
        expected = f"({width},) or (n_samples, {width})" if allow_1d else f"(n_samples, {width})"
        raise ValueError(f"{name} must have shape {expected}, got {arr.shape}")
    if arr2.shape[1] != width:
        raise ValueError(
            f"{name} must have {width} columns (one per unit), got shape {arr.shape}"
        )
    if arr2.shape[0] == 0:
        raise ValueError(f"{name} is empty: it needs at least one row")
    bad = ~((arr2 == 0) | (arr2 == 1))
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(
            f"{name} must hold only 0 and 1, found {float(arr2[row, col]):g} at row {row}, column {col}"
        )
    return arr2, single


def check_array_size(n_elements, what):
    """Refuse an array of more than ``MAX_ARRAY_ELEMENTS`` entries, naming what asked for it
    and the memory it would need (in float64)."""
    if n_elements > MAX_ARRAY_ELEMENTS:
        raise ValueError(f"{what} asks for an array of {n_elements} numbers "
                         f"({n_elements * 8 / 2**30:.3g} GiB), beyond the limit of "
                         f"{MAX_ARRAY_ELEMENTS} (2 GiB)")


def check_enumeration_size(n_bits, what, limit=MAX_ENUMERATION_BITS):
    """Refuse an enumeration of ``2**n_bits`` states beyond ``2**limit``."""
    if n_bits > limit:
        raise ValueError(
            f"{what} needs an enumeration of 2**{n_bits} states, beyond the limit of "
            f"2**{limit}; use a smaller model, or an estimate that does not enumerate "
            "(sampling, annealed importance sampling)"
        )


def check_distribution(q, name, size):
    """A probability vector of shape ``(size,)``: finite, non-negative, summing to 1."""
    q = as_float_array(q, name)
    if q.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), one entry per visible state, "
                         f"got {q.shape}")
    if not np.all(np.isfinite(q)) or np.any(q < 0):
        raise ValueError(f"{name} must hold finite, non-negative probabilities")
    if abs(q.sum() - 1.0) > 1e-9:
        raise ValueError(f"{name} must sum to 1, got {q.sum()!r}")
    return q
