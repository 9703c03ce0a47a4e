"""Shared fixtures and an independent brute-force reference for the tests.

The reference functions below enumerate **all joint states** with plain
loops and share no code with `rbm.exact`, so agreement is evidence.
"""

import itertools
import signal

import numpy as np
import pytest

import rbm
from rbm.layers import Binary, DReLU, Gaussian, Potts, ReLU, Spin


def pytest_configure(config):
    # The Ctrl-C tests send SIGINT (or _thread.interrupt_main, which does nothing for an
    # ignored signal). A shell that starts pytest in the background without job control
    # ignores SIGINT in it; Python's own handler is restored so that those tests mean the
    # same wherever they run (the subprocess tests restore it in their children too).
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def joint_states(n_visible, n_hidden):
    """Every (v, h) pair, as two arrays of rows."""
    vs, hs = [], []
    for bits in itertools.product([0.0, 1.0], repeat=n_visible + n_hidden):
        vs.append(bits[:n_visible])
        hs.append(bits[n_visible:])
    return np.array(vs), np.array(hs)


def brute_energy(model, v, h):
    """E(v, h) = -b.v - c.h - v.W.h, written out with sums over units."""
    e = 0.0
    for i in range(model.n_visible):
        e -= model.b[i] * v[i]
        for j in range(model.n_hidden):
            e -= model.W[i, j] * v[i] * h[j]
    for j in range(model.n_hidden):
        e -= model.c[j] * h[j]
    return e


def brute_log_joint_terms(model):
    """-E(v, h) for every joint state, with the states."""
    vs, hs = joint_states(model.n_visible, model.n_hidden)
    neg_e = np.array([-brute_energy(model, v, h) for v, h in zip(vs, hs)])
    return vs, hs, neg_e


def brute_log_partition(model):
    _, _, neg_e = brute_log_joint_terms(model)
    m = neg_e.max()
    return m + np.log(np.sum(np.exp(neg_e - m)))


def random_layer(kind, n, rng):
    """A layer of `n` units of `kind` (binary, spin, potts, gaussian, relu, drelu), random parameters."""
    r = lambda *s: rng.normal(size=s)  # noqa: E731
    return {"binary": lambda: Binary(0.5 * r(n)), "spin": lambda: Spin(0.3 * r(n)),
            "potts": lambda: Potts(0.5 * r(n, 3)),
            "gaussian": lambda: Gaussian(r(n), 0.7 + 0.3 * np.abs(r(n))),
            "relu": lambda: ReLU(0.5 * r(n), 1.0 + np.abs(r(n))),
            "drelu": lambda: DReLU(0.5 * r(n), 0.5 * r(n), 1.0 + np.abs(r(n)),
                                   1.0 + np.abs(r(n)))}[kind]()


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def small_model():
    """6 visible, 4 hidden, weights and biases U(-1, 1)."""
    return rbm.RBM.random(6, 4, scale=1.0, bias_scale=1.0, distribution="uniform", rng=7)


@pytest.fixture
def small_data():
    """A fixed binary data set for the 6-visible model."""
    return np.array(
        [
            [1, 0, 1, 0, 1, 0],
            [0, 1, 0, 1, 0, 1],
            [1, 1, 1, 0, 0, 0],
            [0, 0, 0, 1, 1, 1],
            [1, 0, 1, 0, 1, 0],
        ],
        dtype=float,
    )


# The data and model shared by the estimator and transition tests: a repeated row makes the
# empirical distribution non-uniform.
MODEL_DATA = np.array([
    [1, 1, 0, 0, 1, 0],
    [0, 1, 1, 0, 0, 1],
    [1, 0, 1, 1, 0, 0],
    [0, 0, 0, 1, 1, 1],
    [1, 1, 0, 0, 1, 0],
], dtype=float)


@pytest.fixture
def model():
    """6 visible, 4 hidden, weights and biases U(-1, 1) (the estimator and transition tests)."""
    return rbm.RBM.random(6, 4, scale=1.0, bias_scale=1.0, distribution="uniform", rng=20240521)
