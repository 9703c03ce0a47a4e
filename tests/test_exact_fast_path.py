"""The fast enumeration in rbm.exact against a plain one written in the test.

The plain reference computes every pre-activation with a matrix product and
the softplus entry by entry (np.logaddexp), then a log-sum-exp over all
states: slow, obviously right, and sharing no code with the fast path.
"""

import itertools

import numpy as np
import pytest

import rbm
from rbm import exact


def plain_log_z_and_moments(model):
    """log Z and model moments, enumerating all hidden states with plain numpy."""
    H = np.array(list(itertools.product([0.0, 1.0], repeat=model.n_hidden)))
    pre = H @ model.W.T + model.b  # (2**n_hidden, n_visible)
    log_w = H @ model.c + np.logaddexp(0.0, pre).sum(axis=1)
    log_z = np.logaddexp.reduce(log_w)
    p = np.exp(log_w - log_z)
    mean_v = 1.0 / (1.0 + np.exp(-pre))
    return log_z, (p[:, None] * mean_v).T @ H, p @ mean_v, p @ H


@pytest.mark.parametrize("scale", [0.01, 1.0, 10.0, 50.0])
@pytest.mark.parametrize("n_visible, n_hidden", [(150, 9), (1200, 6)])
def test_fast_enumeration_matches_plain(n_visible, n_hidden, scale):
    """Wide visible layers (1200 > one product block of 1000) and weights up to 50."""
    model = rbm.RBM.random(n_visible, n_hidden, scale=scale, bias_scale=scale, rng=11)
    log_z, vh, v, h = plain_log_z_and_moments(model)
    for chunk_size, n_threads in [(None, None), (1, 1), (4, 2), (2**n_hidden, 3)]:
        assert exact.log_partition(model, chunk_size=chunk_size, n_threads=n_threads) == (
            pytest.approx(log_z, rel=1e-12))
        moments = exact.model_expectations(model, chunk_size=chunk_size, n_threads=n_threads)
        assert np.allclose(moments.vh, vh, rtol=1e-9, atol=1e-12)
        assert np.allclose(moments.v, v, rtol=1e-9, atol=1e-12)
        assert np.allclose(moments.h, h, rtol=1e-9, atol=1e-12)


def test_thread_counts_give_the_same_result():
    model = rbm.RBM.random(40, 12, scale=1.0, bias_scale=1.0, rng=2)
    values = [exact.log_partition(model, n_threads=t, chunk_size=16) for t in (1, 2, 5)]
    assert max(values) - min(values) < 1e-11 * abs(values[0])
