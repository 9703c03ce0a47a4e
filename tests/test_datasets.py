"""Bars and stripes, and the binarised digits."""

import numpy as np
import pytest

from rbm.datasets import MAX_BARS_AND_STRIPES_SIZE, bars_and_stripes, digits


def _is_bars_or_stripes(image):
    rows_constant = np.all(image == image[:, :1], axis=1).all()  # every row all on or all off
    cols_constant = np.all(image == image[:1, :], axis=0).all()
    return rows_constant or cols_constant


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_bars_and_stripes_has_every_distinct_pattern_once(n):
    data = bars_and_stripes(n)
    assert data.shape == (2 ** (n + 1) - 2, n * n)
    assert len(np.unique(data, axis=0)) == len(data)
    assert all(_is_bars_or_stripes(row.reshape(n, n)) for row in data)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_bars_and_stripes_contains_every_valid_pattern(n):
    # Brute force over all 2**(n*n) images (n <= 4: at most 65536).
    images = ((np.arange(2 ** (n * n))[:, None] >> np.arange(n * n)) & 1).astype(float)
    valid = images[[_is_bars_or_stripes(im.reshape(n, n)) for im in images]]
    data = bars_and_stripes(n)
    assert {tuple(r) for r in valid} == {tuple(r) for r in data}


def test_bars_and_stripes_order_is_stripes_by_row_mask_then_bars_by_column_mask():
    data = bars_and_stripes(3).reshape(-1, 3, 3)
    for m in range(8):  # stripes: row i on when bit 2 - i of m is set
        np.testing.assert_array_equal(data[m][:, 0], [(m >> 2) & 1, (m >> 1) & 1, m & 1])
        assert np.all(data[m] == data[m][:, :1])
    for m in range(1, 7):  # bars: column j on when bit 2 - j of m is set
        np.testing.assert_array_equal(data[7 + m][0], [(m >> 2) & 1, (m >> 1) & 1, m & 1])
        assert np.all(data[7 + m] == data[7 + m][:1, :])


@pytest.mark.parametrize("n, error, message", [
    (0, ValueError, "n must be >= 1"),
    (MAX_BARS_AND_STRIPES_SIZE + 1, ValueError, "n must be at most"),
    (2.0, TypeError, "n must be an int"),
])
def test_bars_and_stripes_refuses_bad_sizes(n, error, message):
    with pytest.raises(error, match=message):
        bars_and_stripes(n)


def test_digits_are_binary_images_with_labels():
    data, labels = digits()
    assert data.shape == (1797, 64)
    assert labels.shape == (1797,)
    assert set(np.unique(data)) == {0.0, 1.0}
    assert set(np.unique(labels)) == set(range(10))


def test_digits_threshold_is_inclusive_and_monotone():
    from sklearn.datasets import load_digits

    images = load_digits().data
    low, _ = digits(threshold=4)
    mid, _ = digits()
    np.testing.assert_array_equal(mid, images >= 8)
    assert np.all(low >= mid) and low.sum() > mid.sum()


@pytest.mark.parametrize("threshold, error", [(0, ValueError), (17, ValueError),
                                              ("8", TypeError)])
def test_digits_refuses_a_bad_threshold(threshold, error):
    with pytest.raises(error, match="threshold"):
        digits(threshold=threshold)
