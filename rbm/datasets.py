"""Small binary data sets: bars and stripes, and the binarised scikit-learn digits."""

import numpy as np

from rbm._validation import check_positive_float, check_positive_int

__all__ = ["MAX_BARS_AND_STRIPES_SIZE", "bars_and_stripes", "digits"]

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
    threshold = check_positive_float(threshold, "threshold")
    if threshold > 16:
        raise ValueError(f"threshold must be in (0, 16], got {threshold}")
    from sklearn.datasets import load_digits  # optional dependency: imported only when used

    images, labels = load_digits(return_X_y=True)
    return (images >= threshold).astype(float), labels.astype(int)
