"""CD-k and persistent CD: unbiased for their exact expectations, reproducible, persistent."""

import copy

import numpy as np
import pytest
from scipy import stats

from rbm import RBM, Gradient, exact
from rbm.transition import cd_expected_gradient
from rbm.estimators import CD, PCD, ExactGradient, FastPCD
from rbm.training import train
from rbm.sampling import gibbs_chain
from conftest import MODEL_DATA as DATA

N_ENTRIES = 6 * 4 + 6 + 4
# Draws are grouped: each call of CD.gradient on the data repeated REPEATS
# times averages REPEATS independent draws of the estimate, and the
# BATCHES call results are independent and identically distributed.
REPEATS, BATCHES = 40, 250


def _t_bound():
    """Two-sided t quantile for familywise significance 0.001 over all entries (Bonferroni)."""
    return stats.t.ppf(1 - 0.001 / (2 * N_ENTRIES), df=BATCHES - 1)


def _max_abs_z(estimates, expected):
    se = estimates.std(axis=0, ddof=1) / np.sqrt(BATCHES)
    assert np.all(se > 0)
    return np.max(np.abs((estimates.mean(axis=0) - expected) / se))


def _batch_estimates(model, k, use_probabilities, seed):
    rng = np.random.default_rng(seed)
    repeated = np.tile(DATA, (REPEATS, 1))
    return np.array([CD(k, use_probabilities=use_probabilities).gradient(model, repeated, rng=rng).flat()
                     for _ in range(BATCHES)])


@pytest.mark.parametrize("use_probabilities", [True, False])
@pytest.mark.parametrize("k", [1, 3, 10])
def test_mean_of_cd_draws_matches_the_exact_cd_expectation(model, k, use_probabilities):
    """Per-entry t-tests of the mean against cd_expected_gradient.

    Familywise significance 0.001 over the 34 entries (Bonferroni: each
    entry two-sided at 0.001 / 34), with BATCHES - 1 degrees of freedom.
    """
    estimates = _batch_estimates(model, k, use_probabilities, seed=1000 * k + use_probabilities)
    assert _max_abs_z(estimates, cd_expected_gradient(model, DATA, k).flat()) < _t_bound()


@pytest.mark.parametrize("use_probabilities", [True, False])
@pytest.mark.parametrize("k", [2, 3])
def test_cd_draws_on_a_slowly_mixing_model_match_the_expectation_of_their_own_k(
        k, use_probabilities):
    """The number of steps matters here, and an off-by-one in k is detected.

    The fixture's chain mixes so fast (second eigenvalue of T about 0.14)
    that CD-2 and CD-3 differ by only 0.002 in expectation; with weights
    of scale 3 they differ by 0.04, tens of standard errors.  Same t-test
    as above (familywise 0.001): accepted for k, rejected for k - 1.
    """
    model = RBM.random(6, 4, scale=3.0, bias_scale=1.0, distribution="uniform", rng=20240521)
    estimates = _batch_estimates(model, k, use_probabilities, seed=2000 + k)
    assert _max_abs_z(estimates, cd_expected_gradient(model, DATA, k).flat()) < _t_bound()
    assert _max_abs_z(estimates, cd_expected_gradient(model, DATA, k - 1).flat()) > _t_bound()


def test_mean_of_cd_draws_detects_a_wrong_k(model):
    """The same test has power: CD-1 draws are rejected against the CD-10 expectation."""
    estimates = _batch_estimates(model, 1, True, seed=5)
    wrong = cd_expected_gradient(model, DATA, 10).flat()
    assert _max_abs_z(estimates, wrong) > _t_bound()


def test_probabilities_have_lower_total_variance_than_sampled_hidden_states(model):
    """Same expectation (tested above), smaller summed per-entry variance, for CD-1.

    The measured ratio is about 0.37; its sampling error with 250 batches
    is a few percent, so the bound ratio < 1 is far from the noise.
    """
    var_prob = _batch_estimates(model, 1, True, seed=11).var(axis=0, ddof=1).sum()
    var_sampled = _batch_estimates(model, 1, False, seed=12).var(axis=0, ddof=1).sum()
    assert var_prob / var_sampled < 1


def test_cd_gradient_is_reproducible_from_a_seed(model):
    a = CD(2).gradient(model, DATA, rng=3)
    b = CD(2).gradient(model, DATA, rng=np.random.default_rng(3))
    assert isinstance(a, Gradient)
    np.testing.assert_array_equal(a.flat(), b.flat())


def test_cd_negative_phase_samples_visible_states_and_averages_hidden_probabilities(model):
    g = CD(1).gradient(model, DATA, rng=4)
    pos = exact.data_expectations(model, DATA)
    n_neg_on = (pos.v - g.b) * len(DATA)  # counts of v_k units on: integers
    hidden = (pos.h - g.c) * len(DATA)  # sums of p(h=1|v_k): not integers
    np.testing.assert_allclose(n_neg_on, np.round(n_neg_on), rtol=0, atol=1e-12)
    assert np.all(np.abs(hidden - np.round(hidden)) > 1e-6)


@pytest.mark.parametrize("k", [0, -1])
def test_cd_refuses_k_below_one(k):
    with pytest.raises(ValueError, match="k must be >= 1"):
        CD(k)


@pytest.mark.parametrize("data, message", [
    (np.zeros((3, 4)), "data must have 6 columns"),
    (np.full((2, 6), 2.0), "data must hold only 0 and 1"),
    (np.zeros(6), r"data must have shape \(n_samples, 6\)"),
])
def test_cd_refuses_bad_data_by_name(model, data, message):
    with pytest.raises(ValueError, match=message):
        CD(1).gradient(model, data, rng=0)


def test_cd_refuses_a_bad_rng(model):
    with pytest.raises(TypeError, match="rng must be"):
        CD(1).gradient(model, DATA, rng="seed")


# -- persistent CD ---------------------------------------------------------

def test_pcd_chains_start_lazily_from_the_first_data(model):
    pcd, rng = PCD(n_chains=7, k=2), np.random.default_rng(8)
    assert pcd.chains is None
    replay = copy.deepcopy(rng)
    pcd.gradient(model, DATA, rng=rng)
    start = DATA[replay.integers(0, len(DATA), size=7)]
    np.testing.assert_array_equal(pcd.chains, gibbs_chain(model, start, 2, rng=replay))


def test_pcd_uniform_initialisation_gives_chains_of_the_right_shape(model):
    pcd = PCD(n_chains=9, k=1, init="uniform")
    pcd.gradient(model, DATA, rng=8)
    assert pcd.chains.shape == (9, 6)
    assert np.all(np.isin(pcd.chains, [0.0, 1.0]))


@pytest.mark.parametrize("use_probabilities", [True, False])
def test_pcd_chains_persist_between_calls(model, use_probabilities):
    pcd, rng = PCD(n_chains=50, k=3, use_probabilities=use_probabilities), np.random.default_rng(9)
    pcd.gradient(model, DATA, rng=rng)
    after_first = pcd.chains.copy()
    replay = copy.deepcopy(rng)
    pcd.gradient(model, DATA[:2], rng=rng)  # other data: the chains do not restart
    np.testing.assert_array_equal(pcd.chains, gibbs_chain(model, after_first, 3, rng=replay))

    fresh = PCD(n_chains=50, k=3, use_probabilities=use_probabilities)
    fresh.gradient(model, DATA, rng=9)
    np.testing.assert_array_equal(fresh.chains, after_first)  # a fresh object starts over
    assert not np.array_equal(fresh.chains, pcd.chains)


def test_pcd_gradient_is_data_term_minus_chain_term(model):
    pcd = PCD(n_chains=20, k=1)
    g = pcd.gradient(model, DATA, rng=10)
    v = pcd.chains
    ph_data, ph_chain = model.prob_h_given_v(DATA), model.prob_h_given_v(v)
    np.testing.assert_allclose(g.W, DATA.T @ ph_data / 5 - v.T @ ph_chain / 20, atol=1e-15)
    np.testing.assert_allclose(g.b, DATA.mean(0) - v.mean(0), atol=1e-15)
    np.testing.assert_allclose(g.c, ph_data.mean(0) - ph_chain.mean(0), atol=1e-15)


def test_pcd_refuses_a_model_of_another_size_once_chains_exist(model):
    pcd = PCD(n_chains=4, k=1)
    pcd.gradient(model, DATA, rng=0)
    other = RBM.random(5, 4, rng=0)
    with pytest.raises(ValueError, match="n_visible=5"):
        pcd.gradient(other, DATA[:, :5], rng=0)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(n_chains=10, k=0), ValueError, "k must be >= 1"),
    (dict(n_chains=0, k=1), ValueError, "n_chains must be >= 1"),
    (dict(n_chains=10, k=1, init="zeros"), ValueError, "init must be"),
    (dict(n_chains=10, k=2.0), TypeError, "k must be an int"),
])
def test_pcd_refuses_bad_arguments_by_name(kwargs, error, message):
    with pytest.raises(error, match=message):
        PCD(**kwargs)


def test_pcd_refuses_bad_data_by_name(model):
    pcd = PCD(n_chains=4, k=1)
    with pytest.raises(ValueError, match="data must hold only 0 and 1"):
        pcd.gradient(model, np.full((2, 6), 0.3), rng=0)
    assert pcd.chains is None


# -- an oracle of their own: the same draws replayed by a plain Gibbs chain ----------------

def _plain_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _oracle(model, v0, negative_start, k, rng, use_probabilities):
    """The estimate written out with plain numpy, drawing what CD/PCD draw, in their order.

    CD starts its chains at the data (`negative_start` None: h0 drawn from the data, then
    v1); PCD at `negative_start`. The result is the data term (exact, with probabilities;
    or from the sampled h0) minus the negative statistics of the replayed chains.
    """
    W, b, c = model.W, model.b, model.c
    draw = lambda p: (rng.random(p.shape) < p).astype(float)  # noqa: E731
    p0 = _plain_sigmoid(v0 @ W + c)
    if negative_start is None:
        h0 = draw(p0)
        v = draw(_plain_sigmoid(h0 @ W.T + b))
        steps = k - 1
    else:
        v, steps = negative_start, k
    for _ in range(steps):
        h = draw(_plain_sigmoid(v @ W + c))
        v = draw(_plain_sigmoid(h @ W.T + b))
    pk = _plain_sigmoid(v @ W + c)
    if use_probabilities:
        pos = exact.data_expectations(model, v0)
        h_pos, h_neg = p0, pk
        assert np.allclose(pos.vh, v0.T @ p0 / len(v0), rtol=0, atol=1e-15)
    else:
        if negative_start is not None:
            h0 = draw(p0)
        h_pos, h_neg = h0, draw(pk)
    grad = Gradient(W=v0.T @ h_pos / len(v0) - v.T @ h_neg / len(v),
                    b=v0.mean(axis=0) - v.mean(axis=0),
                    c=h_pos.mean(axis=0) - h_neg.mean(axis=0))
    return grad, v


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("use_probabilities", [True, False])
def test_cd_matches_a_replay_of_its_draws(model, k, use_probabilities):
    got = CD(k, use_probabilities=use_probabilities).gradient(model, DATA, rng=21)
    want, _ = _oracle(model, DATA, None, k, np.random.default_rng(21), use_probabilities)
    np.testing.assert_allclose(got.flat(), want.flat(), rtol=0, atol=1e-13)


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("use_probabilities", [True, False])
def test_pcd_matches_a_replay_of_its_draws(model, k, use_probabilities):
    pcd, rng = PCD(9, k, use_probabilities=use_probabilities), np.random.default_rng(22)
    replay = np.random.default_rng(22)
    start = DATA[replay.integers(0, len(DATA), size=9)]
    for _ in range(3):  # the chains carry over between calls
        got = pcd.gradient(model, DATA, rng=rng)
        want, start = _oracle(model, DATA, start, k, replay, use_probabilities)
        np.testing.assert_allclose(got.flat(), want.flat(), rtol=0, atol=1e-13)
        np.testing.assert_array_equal(pcd.chains, start)


@pytest.mark.parametrize("make, persistent", [(lambda: CD(2), False),
                                              (lambda: CD(1, use_probabilities=False), False),
                                              (lambda: PCD(6, 1), True)])
def test_one_fused_training_update_is_the_replayed_estimate_times_the_rate(model, make,
                                                                          persistent):
    """train() with the package's CD/PCD runs the fused stepper (rbm._fused); one
    full-batch update must equal the oracle's estimate, drawn from the same generator
    after train's shuffle, times the learning rate."""
    from rbm.training import train

    estimator, eta = make(), 0.3
    trained = model.copy()
    train(trained, DATA, estimator, learning_rate=eta, epochs=1, batch_size=len(DATA), rng=23)
    rng = np.random.default_rng(23)
    batch = DATA[rng.permutation(len(DATA))]
    start = batch[rng.integers(0, len(batch), size=6)] if persistent else None
    grad, _ = _oracle(model, batch, start, estimator.k, rng, estimator.use_probabilities)
    for field in ("W", "b", "c"):
        np.testing.assert_allclose(getattr(trained, field),
                                   getattr(model, field) + eta * getattr(grad, field),
                                   rtol=0, atol=1e-13)


def test_fast_pcd_without_fast_weights_is_pcd():
    model = RBM.random(4, 3, scale=1.0, rng=0)
    data = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]])
    pcd, fast = PCD(6, 2), FastPCD(6, 2, fast_learning_rate=0.0)
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    for _ in range(3):
        assert np.array_equal(pcd.gradient(model, data, rng=rng_a).flat(),
                              fast.gradient(model, data, rng=rng_b).flat())


def test_fast_weights_follow_the_estimates_and_decay():
    model = RBM.random(4, 3, scale=1.0, rng=0)
    data = np.array([[1, 0, 1, 0], [0, 1, 0, 1]])
    fast = FastPCD(5, fast_learning_rate=0.7, fast_decay=0.9)
    rng = np.random.default_rng(0)
    g1 = fast.gradient(model, data, rng=rng)
    g2 = fast.gradient(model, data, rng=rng)
    assert (fast.fast - (0.9 * 0.7 * g1 + 0.7 * g2)).max_abs() < 1e-15
    # and training uses them (the general loop, not the fused PCD stepper)
    trained = FastPCD(5, fast_learning_rate=0.7)
    train(model.copy(), data, trained, learning_rate=0.1, epochs=3, batch_size=2,
                       rng=0)
    assert trained.fast is not None and trained.fast.max_abs() > 0


@pytest.mark.parametrize("kwargs, match", [
    ({"fast_learning_rate": -1.0}, "fast_learning_rate must be finite and >= 0"),
    ({"fast_learning_rate": 1.0, "fast_decay": 1.5}, r"fast_decay must lie in \[0, 1\]"),
])
def test_fast_pcd_refuses_bad_rates(kwargs, match):
    with pytest.raises(ValueError, match=match):
        FastPCD(5, **kwargs)
