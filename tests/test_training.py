"""Training: the update rule, shuffling, tracking, and that every estimator learns bars and stripes."""

import math

import numpy as np
import pytest

from rbm import RBM, Gradient, exact
from rbm.datasets import bars_and_stripes
from rbm.estimators import CD, PCD, ExactGradient
from rbm.training import MAX_TRACKING_BITS, History, reconstruction_error, train

DATA = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 0, 1]], float)


@pytest.mark.parametrize("make_estimator", [lambda: CD(1), lambda: PCD(100, 1), ExactGradient],
                         ids=["cd1", "pcd", "exact"])
def test_training_on_3x3_bars_and_stripes_raises_the_exact_log_likelihood(make_estimator):
    """1000 updates raise the mean log-likelihood by at least 1 nat.

    The initial weights are tiny, so the start is close to the uniform
    distribution (-9 log 2 = -6.24); the optimum is -log 14 = -2.64.
    Across seeds 0..4 every estimator gained at least 1.3 nats.
    """
    data = bars_and_stripes(3)
    model = RBM.random(9, 8, scale=0.01, rng=3)
    history = train(model, data, make_estimator(), learning_rate=0.2, epochs=500, batch_size=7,
                    rng=3, momentum=0.5, track_every=250)
    assert history.updates == [0, 250, 500, 750, 1000]
    assert abs(history.log_likelihood[0] + 9 * math.log(2)) < 0.01
    assert history.log_likelihood[-1] > history.log_likelihood[0] + 1.0
    assert history.reconstruction_error[-1] < history.reconstruction_error[0]


def test_one_full_batch_update_follows_the_rule_with_weight_decay_on_w_only():
    model = RBM.random(4, 3, scale=0.5, bias_scale=0.5, rng=1)
    before = model.copy()
    g = exact.gradient(before, DATA)
    train(model, DATA, ExactGradient(), learning_rate=0.3, epochs=1, batch_size=5, rng=0,
          weight_decay=0.1)
    np.testing.assert_allclose(model.W, before.W + 0.3 * (g.W - 0.1 * before.W), atol=1e-15)
    np.testing.assert_allclose(model.b, before.b + 0.3 * g.b, atol=1e-15)
    np.testing.assert_allclose(model.c, before.c + 0.3 * g.c, atol=1e-15)


def test_momentum_accumulates_a_velocity():
    model = RBM.random(4, 3, scale=0.5, rng=2)
    start = model.copy()
    train(model, DATA, ExactGradient(), learning_rate=0.3, epochs=2, batch_size=5, rng=0,
          momentum=0.9)
    # By hand: u1 = lr g(x0), x1 = x0 + u1, u2 = 0.9 u1 + lr g(x1), x2 = x1 + u2.
    u1 = 0.3 * exact.gradient(start, DATA)
    middle = RBM(start.W + u1.W, start.b + u1.b, start.c + u1.c)
    u2 = 0.9 * u1 + 0.3 * exact.gradient(middle, DATA)
    np.testing.assert_allclose(model.W, middle.W + u2.W, atol=1e-14)
    np.testing.assert_allclose(model.b, middle.b + u2.b, atol=1e-14)
    np.testing.assert_allclose(model.c, middle.c + u2.c, atol=1e-14)


def test_each_epoch_visits_a_fresh_shuffle_of_all_rows_in_batches():
    data = bars_and_stripes(3)  # 14 distinct rows
    seen = []

    class Recording:
        def gradient(self, model, batch, *, rng):
            seen.append(batch.copy())
            return Gradient(np.zeros((9, 2)), np.zeros(9), np.zeros(2))

    train(RBM.random(9, 2, rng=0), data, Recording(), learning_rate=0.1, epochs=2, batch_size=4,
          rng=5)
    assert [len(b) for b in seen] == [4, 4, 4, 2] * 2
    epochs = [np.concatenate(seen[:4]), np.concatenate(seen[4:])]
    for rows in epochs:
        assert sorted(map(tuple, rows)) == sorted(map(tuple, data))
    assert not np.array_equal(epochs[0], epochs[1])
    assert not np.array_equal(epochs[0], data)


def test_training_is_reproducible_from_a_seed():
    models = [RBM.random(4, 3, scale=0.1, rng=0) for _ in range(2)]
    for m in models:
        train(m, DATA, CD(2), learning_rate=0.1, epochs=3, batch_size=2, rng=11)
    np.testing.assert_array_equal(models[0].W, models[1].W)


def test_tracking_records_the_start_every_interval_and_the_end():
    model = RBM.random(4, 3, scale=0.1, rng=0)
    history = train(model, DATA, CD(1), learning_rate=0.1, epochs=7, batch_size=5, rng=0,
                    track_every=3)
    assert isinstance(history, History)
    assert history.updates == [0, 3, 6, 7]
    assert len(history.log_likelihood) == len(history.reconstruction_error) == 4
    assert history.log_likelihood[-1] == exact.log_likelihood(model, DATA)
    assert history.reconstruction_error[-1] == reconstruction_error(model, DATA)


def test_no_tracking_gives_an_empty_history():
    history = train(RBM.random(4, 3, rng=0), DATA, CD(1), learning_rate=0.1, epochs=1,
                    batch_size=5, rng=0)
    assert history == History()


def test_progress_false_prints_nothing_and_true_prints_a_line_per_epoch(capsys):
    kwargs = dict(learning_rate=0.1, epochs=3, batch_size=5, rng=0, track_every=1)
    train(RBM.random(4, 3, rng=0), DATA, CD(1), **kwargs)
    assert capsys.readouterr().out == ""
    train(RBM.random(4, 3, rng=0), DATA, CD(1), progress=True, **kwargs)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[-1].startswith("epoch 3/3: 3 updates, log-likelihood")


def test_pcd_estimator_keeps_its_chains_across_training_runs():
    estimator = PCD(10, 1)
    model = RBM.random(4, 3, rng=0)
    train(model, DATA, estimator, learning_rate=0.1, epochs=1, batch_size=5, rng=0)
    chains = estimator.chains.copy()
    train(model, DATA, estimator, learning_rate=0.1, epochs=1, batch_size=5, rng=1)
    assert estimator.chains.shape == chains.shape
    assert not np.array_equal(estimator.chains, chains)


class _Unfused:
    """A package estimator behind another type, so train() takes its general stepper."""

    def __init__(self, estimator):
        self.estimator = estimator

    def gradient(self, model, batch, *, rng):
        return self.estimator.gradient(model, batch, rng=rng)


@pytest.mark.parametrize("make_estimator", [
    lambda: CD(1), lambda: CD(3, use_probabilities=False),
    lambda: PCD(7, 2), lambda: PCD(4, 1, use_probabilities=False, init="uniform"),
], ids=["cd1", "cd3-sampled", "pcd2", "pcd1-sampled-uniform"])
@pytest.mark.parametrize("momentum, weight_decay", [(0.0, 0.0), (0.5, 0.0), (0.0, 0.01),
                                                    (0.9, 0.001)])
def test_fused_training_follows_the_general_loop(make_estimator, momentum, weight_decay):
    """train() runs the package's CD and PCD fused (rbm._fused); with the same seed it
    draws the same numbers in the same order as the general loop, so the two runs
    visit the same chains and end at the same parameters, to rounding. Batches of 4
    over 14 rows leave a last batch of 2."""
    data = bars_and_stripes(3)
    runs = []
    for wrap in (lambda e: e, _Unfused):
        model = RBM.random(9, 5, scale=0.5, bias_scale=0.2, rng=7)
        estimator = make_estimator()
        history = train(model, data, wrap(estimator), learning_rate=0.3, epochs=6,
                        batch_size=4, rng=12, momentum=momentum, weight_decay=weight_decay,
                        track_every=5)
        runs.append((model, estimator, history))
    (fused, est_f, hist_f), (general, est_g, hist_g) = runs
    assert fused.W.flags.c_contiguous and fused.W.shape == (9, 5)
    np.testing.assert_allclose(fused.W, general.W, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(fused.b, general.b, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(fused.c, general.c, rtol=1e-11, atol=1e-13)
    assert hist_f.updates == hist_g.updates
    np.testing.assert_allclose(hist_f.log_likelihood, hist_g.log_likelihood, rtol=1e-11)
    if isinstance(est_f, PCD):
        np.testing.assert_array_equal(est_f.chains, est_g.chains)
    # a run that moved the parameters, so the comparison above means something
    assert np.abs(fused.W - RBM.random(9, 5, scale=0.5, bias_scale=0.2, rng=7).W).max() > 0.05


@pytest.mark.parametrize("make_estimator", [lambda: CD(2), lambda: PCD(3, 1)], ids=["cd2", "pcd1"])
def test_fused_training_with_a_batch_larger_than_the_data(make_estimator):
    """One batch of all rows; buffers are sized by the rows, not by batch_size (a PCD
    stack of batch_size rows raised MemoryError in review)."""
    runs = []
    for wrap in (lambda e: e, _Unfused):
        model = RBM.random(4, 3, scale=0.5, rng=1)
        train(model, DATA, wrap(make_estimator()), learning_rate=0.2, epochs=4,
              batch_size=10**12, rng=3)
        runs.append(model.W)
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-12, atol=1e-14)


def test_uniforms_are_drawn_ahead_in_order_and_never_past_the_epoch(monkeypatch):
    """The fused loop's pre-drawn uniforms: the generator's own sequence (as 2u - 1),
    in calls that end at an array's boundary, hold at most _DRAW_AHEAD numbers unless
    one array alone is larger, and leave the generator where plain draws would."""
    from rbm import _fused

    monkeypatch.setattr(_fused, "_DRAW_AHEAD", 10)
    counts = [3, 4, 25, 2, 6]
    rng, reference = np.random.default_rng(8), np.random.default_rng(8)
    calls = []

    class Recording:
        def random(self, *, out):
            calls.append(out.size)
            return rng.random(out=out)

    uniforms = _fused._Uniforms()
    for epoch in range(2):  # a second epoch reuses the storage and draws the same way
        uniforms.start(Recording(), counts)
        for size in counts:
            expected = 2.0 * reference.random(size) - 1.0
            np.testing.assert_array_equal(uniforms.take(1, size).ravel(), expected)
    assert calls == [7, 25, 8] * 2
    assert rng.random(1) == reference.random(1)


def test_fused_training_updates_the_models_arrays_in_place():
    model = RBM.random(4, 3, scale=0.1, rng=0)
    W, b, c = model.W, model.b, model.c
    before = W.copy()
    train(model, DATA, CD(1), learning_rate=0.5, epochs=3, batch_size=2, rng=0)
    assert model.W is W and model.b is b and model.c is c
    assert not np.array_equal(W, before)


def test_reconstruction_error_is_one_deterministic_pass():
    model = RBM.random(4, 3, scale=1.0, bias_scale=1.0, rng=4)
    total = 0.0
    for v in DATA:
        ph = [1 / (1 + math.exp(-(model.c[j] + sum(model.W[i, j] * v[i] for i in range(4)))))
              for j in range(3)]
        for i in range(4):
            pv = 1 / (1 + math.exp(-(model.b[i] + sum(model.W[i, j] * ph[j] for j in range(3)))))
            total += (v[i] - pv) ** 2
    assert reconstruction_error(model, DATA) == pytest.approx(total / DATA.size, abs=1e-14)


def test_tracking_is_refused_for_models_too_large_to_enumerate():
    n = MAX_TRACKING_BITS + 1
    model = RBM(np.zeros((n, n)), np.zeros(n), np.zeros(n))
    with pytest.raises(ValueError, match=r"min\(n_visible, n_hidden\) <= 20; got n_visible=21"):
        train(model, np.zeros((2, n)), CD(1), learning_rate=0.1, epochs=1, batch_size=1, rng=0,
              track_every=1)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(learning_rate=0.0), ValueError, "learning_rate"),
    (dict(epochs=0), ValueError, "epochs must be >= 1"),
    (dict(batch_size=0), ValueError, "batch_size must be >= 1"),
    (dict(momentum=1.0), ValueError, r"momentum must be in \[0, 1\)"),
    (dict(weight_decay=-0.1), ValueError, "weight_decay"),
    (dict(track_every=0), ValueError, "track_every must be >= 1"),
    (dict(rng=None), TypeError, "rng must be"),
])
def test_train_refuses_bad_arguments_by_name(kwargs, error, message):
    args = dict(learning_rate=0.1, epochs=1, batch_size=2, rng=0) | kwargs
    with pytest.raises(error, match=message):
        train(RBM.random(4, 3, rng=0), DATA, CD(1), **args)


def test_train_refuses_bad_data_and_estimators():
    model = RBM.random(4, 3, rng=0)
    args = dict(learning_rate=0.1, epochs=1, batch_size=2, rng=0)
    with pytest.raises(ValueError, match="data must have 4 columns"):
        train(model, np.zeros((3, 5)), CD(1), **args)
    with pytest.raises(TypeError, match="estimator must have a method gradient"):
        train(model, DATA, "cd", **args)
    with pytest.raises(TypeError, match="estimator must have a method gradient"):
        train(model, DATA, lambda model, batch, rng: np.zeros(19), **args)

    class Wrong:
        def gradient(self, model, batch, *, rng):
            return np.zeros(19)

    with pytest.raises(TypeError, match="estimator.gradient must return an rbm.Gradient"):
        train(model, DATA, Wrong(), **args)


@pytest.mark.parametrize("factory, message", [
    (lambda: CD(0), "k must be >= 1"),
    (lambda: PCD(0, 1), "n_chains must be >= 1"),
    (lambda: PCD(5, 0), "k must be >= 1"),
    (lambda: PCD(5, 1, init="ones"), "init must be"),
])
def test_estimators_refuse_bad_arguments_at_once(factory, message):
    with pytest.raises(ValueError, match=message):
        factory()


def test_sparsity_penalty_adds_the_guides_push_to_bias_and_weights():
    """With decay 0 the running estimate is the batch mean; the push is cost (q - target)."""
    from rbm.training import SparsityPenalty

    model = RBM.random(4, 3, scale=0.5, bias_scale=0.5, rng=4)
    g = exact.gradient(model, DATA)
    sparse = SparsityPenalty(ExactGradient(), target=0.05, cost=0.3, decay=0.0)
    got = sparse.gradient(model, DATA, rng=0)
    push = 0.3 * (model.prob_h_given_v(DATA).mean(axis=0) - 0.05)
    np.testing.assert_allclose(got.c, g.c - push, atol=1e-15)
    np.testing.assert_allclose(got.W, g.W - np.outer(DATA.mean(axis=0), push), atol=1e-15)
    np.testing.assert_allclose(got.b, g.b, atol=0)


def test_sparsity_penalty_keeps_a_running_average_and_lowers_activity_in_training():
    from rbm.training import SparsityPenalty

    model = RBM.random(4, 3, scale=0.5, rng=5)
    sparse = SparsityPenalty(ExactGradient(), target=0.1, cost=0.5, decay=0.9)
    first = model.prob_h_given_v(DATA[:2]).mean(axis=0)
    sparse.gradient(model, DATA[:2], rng=0)
    np.testing.assert_allclose(sparse.q, first)
    second = model.prob_h_given_v(DATA[2:]).mean(axis=0)
    sparse.gradient(model, DATA[2:], rng=0)
    np.testing.assert_allclose(sparse.q, 0.9 * first + 0.1 * second)

    plain, penalised = model.copy(), model.copy()
    train(plain, DATA, ExactGradient(), learning_rate=0.2, epochs=200, batch_size=5, rng=0)
    train(penalised, DATA, SparsityPenalty(ExactGradient(), target=0.1, cost=1.0),
          learning_rate=0.2, epochs=200, batch_size=5, rng=0)
    assert penalised.prob_h_given_v(DATA).mean() < plain.prob_h_given_v(DATA).mean() - 0.1


@pytest.mark.parametrize("kwargs, error", [
    (dict(target=np.nan, cost=1.0), ValueError), (dict(target="0.1", cost=1.0), ValueError),
    (dict(target=0.1, cost=-1.0), ValueError), (dict(target=0.1, cost=1.0, decay=1.0), ValueError),
])
def test_sparsity_penalty_rejects_bad_arguments(kwargs, error):
    from rbm.training import SparsityPenalty

    with pytest.raises(error):
        SparsityPenalty(ExactGradient(), **kwargs)
    with pytest.raises(TypeError, match="estimator"):
        SparsityPenalty(object(), target=0.1, cost=1.0)


@pytest.mark.parametrize("target", [0.0, 1.0, -0.5])
def test_sparsity_penalty_refuses_a_target_outside_the_hidden_units_range(target):
    from rbm.training import SparsityPenalty

    sparse = SparsityPenalty(ExactGradient(), target=target, cost=1.0)
    with pytest.raises(ValueError, match=r"target must be in \(0, 1\).*Binary"):
        sparse.gradient(RBM.random(4, 3, rng=0), DATA, rng=0)
