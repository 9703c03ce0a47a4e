"""Bad input fails at once with an error that names the argument."""

import warnings

import numpy as np
import pytest

import rbm
from rbm import exact


@pytest.mark.parametrize(
    "W, b, c, error, match",
    [
        (np.zeros((3, 2)), np.zeros(2), np.zeros(2), ValueError, r"b must have shape \(3,\)"),
        (np.zeros((3, 2)), np.zeros(3), np.zeros(3), ValueError, r"c must have shape \(2,\)"),
        (np.zeros(3), np.zeros(3), np.zeros(1), ValueError, "W must be a 2-d array"),
        (np.zeros((0, 2)), np.zeros(0), np.zeros(2), ValueError, "W must be a 2-d array"),
        (np.array([[np.nan]]), np.zeros(1), np.zeros(1), ValueError, "W must be finite"),
        (np.zeros((1, 1)), np.array([np.inf]), np.zeros(1), ValueError, "b must be finite"),
        (np.zeros((1, 1)), np.zeros(1), np.array(["x"]), TypeError, "c must be a numeric"),
        ([["a"]], np.zeros(1), np.zeros(1), TypeError, "W must be a numeric"),
    ],
)
def test_bad_parameters_are_refused(W, b, c, error, match):
    with pytest.raises(error, match=match):
        rbm.RBM(W, b, c)


@pytest.mark.parametrize(
    "data, match",
    [
        (np.zeros((2, 5)), r"data must have 6 columns"),
        (np.zeros((0, 6)), "data is empty"),
        (np.full((2, 6), 0.5), "data must hold only 0 and 1, found 0.5 at row 0, column 0"),
        (np.array([[0, 1, 0, 1, 0, np.nan]]), "data must hold only 0 and 1, found nan"),
        (np.array([[0, 1, 0, 1, 0, 2]]), "data must hold only 0 and 1, found 2"),
        (np.zeros(6), r"data must have shape \(n_samples, 6\)"),
        (np.zeros((1, 1, 6)), r"data must have shape \(n_samples, 6\)"),
    ],
)
def test_bad_data_is_refused_by_every_exact_function(data, match, small_model):
    for function in (exact.log_likelihood, exact.gradient, exact.data_expectations):
        with pytest.raises(ValueError, match=match):
            function(small_model, data)


def test_non_numeric_data_is_a_type_error(small_model):
    with pytest.raises(TypeError, match="data must be a numeric array"):
        exact.log_likelihood(small_model, [["0"] * 6])


def test_states_of_the_wrong_width_are_refused(small_model):
    with pytest.raises(ValueError, match="v must have 6 columns"):
        small_model.free_energy(np.zeros(5))
    with pytest.raises(ValueError, match="h must have 4 columns"):
        small_model.prob_v_given_h(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="same number of rows"):
        small_model.energy(np.zeros((2, 6)), np.zeros((3, 4)))


@pytest.mark.parametrize("n_visible, n_hidden", [(31, 40), (1000, 31)])
def test_enumeration_beyond_the_limit_is_refused_at_once(n_visible, n_hidden):
    model = rbm.RBM(np.zeros((n_visible, n_hidden)), np.zeros(n_visible), np.zeros(n_hidden))
    for function in (exact.log_partition, exact.model_expectations):
        with pytest.raises(ValueError, match=r"2\*\*31 states, beyond the limit of 2\*\*30"):
            function(model)


def test_dense_functions_have_their_own_limit():
    model = rbm.RBM(np.zeros((21, 2)), np.zeros(21), np.zeros(2))
    with pytest.raises(ValueError, match=r"visible_distribution needs .* 2\*\*21 states"):
        exact.visible_distribution(model)
    with pytest.raises(ValueError, match="kl_divergence"):
        exact.kl_divergence(np.ones(4) / 4, model)
    with pytest.raises(ValueError, match="all_states"):
        exact.all_states(21)


@pytest.mark.parametrize(
    "q, match",
    [
        (np.ones(8) / 8, r"q must have shape \(64,\)"),
        (np.full(64, 1 / 32), "q must sum to 1"),
        (np.concatenate([[-0.5, 1.5], np.zeros(62)]), "non-negative"),
    ],
)
def test_kl_refuses_a_bad_distribution(q, match, small_model):
    with pytest.raises(ValueError, match=match):
        exact.kl_divergence(q, small_model)


def test_other_bad_arguments(small_model):
    with pytest.raises(TypeError, match="model must be an rbm.RBM"):
        exact.log_partition("not a model")
    with pytest.raises(ValueError, match="layer must be"):
        exact.log_partition(small_model, layer="both")
    with pytest.raises(ValueError, match="chunk_size must be >= 1"):
        exact.log_partition(small_model, chunk_size=0)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        small_model.sample_h_given_v(np.zeros(6), rng=None)
    with pytest.raises(ValueError, match="n_hidden must be >= 1"):
        rbm.RBM.random(3, 0, rng=0)
    with pytest.raises(ValueError, match="distribution must be"):
        rbm.RBM.random(3, 2, rng=0, distribution="cauchy")
    with pytest.raises(ValueError, match="scale must be finite"):
        rbm.RBM.random(3, 2, rng=0, scale=-1.0)


# --- A model changed after it was made, and what estimators and training return ---------


@pytest.mark.parametrize(
    "change, error, match",
    [
        (lambda m: m.W.__setitem__((0, 0), np.nan), ValueError, r"model\.W must be finite"),
        (lambda m: m.c.__setitem__(0, np.inf), ValueError, r"model\.c must be finite"),
        (lambda m: setattr(m, "b", np.zeros(5)), ValueError, "inconsistent shapes"),
        (lambda m: setattr(m, "W", [[0.0] * 4] * 6), TypeError, r"model\.W must be a float64"),
    ],
)
def test_a_model_changed_after_it_was_made_is_checked_again(change, error, match, small_model):
    from rbm import sampling, training
    from rbm.estimators import CD

    change(small_model)
    data = np.zeros((2, 6))
    calls = [lambda: exact.log_partition(small_model),
             lambda: exact.log_likelihood(small_model, data),
             lambda: CD(1).gradient(small_model, data, rng=0),
             lambda: sampling.sample_model(small_model, 2, 1, rng=0),
             lambda: training.train(small_model, data, CD(1), learning_rate=0.1,
                                    epochs=1, batch_size=2, rng=0)]
    for call in calls:
        with pytest.raises(error, match=match):
            call()


def test_train_refuses_a_gradient_of_the_wrong_shape(small_model):
    from rbm import training

    class Wrong:
        def gradient(self, model, batch, *, rng):
            return rbm.Gradient(np.ones((1, 4)), np.ones(1), np.ones(4))

    with pytest.raises(ValueError, match=r"estimator returned a Gradient with W of shape \(1, 4\)"):
        training.train(small_model, np.zeros((2, 6)), Wrong(), learning_rate=0.1, epochs=1,
                       batch_size=2, rng=0)


@pytest.mark.parametrize("estimator", ["cd", "general"])
def test_train_stops_when_the_parameters_diverge(estimator, small_model, small_data):
    from rbm import training

    cd = est = rbm.CD(1)
    if estimator == "general":  # another type runs the general stepper

        class General:
            def gradient(self, model, batch, *, rng):
                return cd.gradient(model, batch, rng=rng)

        est = General()
    # the fused loop checks after each epoch; in the general loop the estimator's own check
    # of the model may fire first, mid-epoch
    with np.errstate(all="ignore"), pytest.raises(ValueError, match="diverged"):
        training.train(small_model, small_data, est, learning_rate=1.0, weight_decay=5.0,
                       epochs=1000, batch_size=2, rng=0)


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: rbm.Gradient(np.ones((2, 3)), np.ones(2), np.ones(2)), ValueError,
         r"c \(n_hidden,\)"),
        (lambda: rbm.Gradient("a", 1, 2), TypeError, "W must be a numeric"),
        (lambda: rbm.Gradient(np.ones((2, 3)), np.ones(2), np.ones(3))
         + rbm.Gradient(np.ones((1, 3)), np.ones(1), np.ones(3)), ValueError, "different shapes"),
        (lambda: rbm.Gradient.from_flat(np.zeros(0), -2, -2), ValueError, "n_visible must be >= 1"),
        (lambda: rbm.Gradient.from_flat(np.zeros(8), 2.0, 2), TypeError, "n_visible must be an int"),
    ],
)
def test_gradients_are_checked(make, error, match):
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: rbm.softplus(None), TypeError, "x must be a numeric array"),
        (lambda: rbm.softplus(np.array([1 + 2j])), TypeError, "x must be real"),
        (lambda: rbm.sigmoid("1.5"), TypeError, "x must be a numeric array"),
        (lambda: rbm.logsumexp([]), ValueError, "a is empty"),
    ],
)
def test_special_functions_refuse_non_real_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_flags_must_be_bools_and_seeds_non_negative(small_model):
    from rbm import sampling, training
    from rbm.estimators import CD, PCD

    for call in (lambda: CD(1, use_probabilities="False"),
                 lambda: PCD(2, 1, use_probabilities="no"),
                 lambda: PCD(2, 1, use_probabilities=None),
                 lambda: CD(1, use_probabilities=1),
                 lambda: sampling.gibbs_chain(small_model, np.zeros(6), 1, rng=0,
                                              return_trajectory="yes"),
                 lambda: training.train(small_model, np.zeros((1, 6)), CD(1), learning_rate=0.1,
                                        epochs=1, batch_size=1, rng=0, progress="False")):
        with pytest.raises(TypeError, match="must be True or False"):
            call()
    with pytest.raises(ValueError, match="rng must be a non-negative int seed, got -1"):
        rbm.RBM.random(2, 2, rng=-1)
    assert CD(1, use_probabilities=np.bool_(False)).use_probabilities is False


def test_symbolic_states_are_limited():
    from rbm import symbolic

    with pytest.raises(ValueError, match="n must be at most 12"):
        symbolic.binary_states(40)


def test_cd_expected_gradient_with_many_hidden_units_uses_the_transition_matrix():
    from rbm import transition

    model = rbm.RBM.random(3, 21, scale=0.1, rng=0)
    data = np.array([[1.0, 0.0, 1.0]])
    one = transition.cd_expected_gradient(model, data, 1)
    assert one.W.shape == (3, 21) and np.isfinite(one.flat()).all()


def test_cd1_variant_memory_does_not_grow_with_the_data():
    from rbm import transition

    model = rbm.RBM.random(2, 12, scale=0.5, rng=0)
    data = np.random.default_rng(1).integers(0, 2, size=(3000, 2)).astype(float)
    many = transition.cd1_variant_expected_gradient(model, data)  # 3000 x 4096 would be 94 MiB
    few = transition.cd_expected_gradient(model, data, 1)
    assert (many - few).max_abs() < 1e-12


def test_counts_too_large_to_allocate_are_refused_by_name(small_model):
    from rbm import ais, sampling
    from rbm.estimators import PCD

    calls = {"n_chains=1000000000000": [lambda: sampling.sample_model(small_model, 10**12, 1, rng=0),
                                        lambda: PCD(10**12, 1)],
             "betas=1000000000000": [lambda: ais.ais_log_partition(small_model, betas=10**12, rng=0)],
             "n_steps=1000000000000": [lambda: ais.default_betas(10**12)]}
    for what, makers in calls.items():
        for make in makers:
            with pytest.raises(ValueError, match=f"{what} asks for an array of"):
                make()


def test_parameters_beyond_the_float_range_of_the_sums_are_refused(small_model):
    with pytest.raises(ValueError, match="W must be at most 1e"):
        rbm.RBM([[1e308]], [0.0], [0.0])
    small_model.b[0] = 1e200
    with pytest.raises(ValueError, match=r"model\.b must be at most 1e\+100"):
        exact.log_partition(small_model)
    largest = rbm.RBM([[1e100]], [1e100], [1e100])  # the largest accepted: exact and finite
    assert exact.log_partition(largest) == pytest.approx(3e100, rel=1e-15)


def _as_matrix(a):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)  # np.matrix is deprecated
        return np.asmatrix(a)


@pytest.mark.parametrize("change, error, match", [
    (lambda m: m.W.__setitem__((0, 0), np.nan), ValueError, r"model\.W must be finite"),
    (lambda m: setattr(m, "W", m.W.tolist()), TypeError, r"model\.W must be a float64"),
    (lambda m: setattr(m, "W", m.W.astype(np.float32)), TypeError, r"model\.W must be a float64"),
    (lambda m: setattr(m, "W", _as_matrix(m.W)), TypeError, r"model\.W must be a float64"),
])
def test_the_models_own_methods_check_it_again_as_module_functions_do(change, error, match,
                                                                      small_model):
    """The same contract everywhere: a model changed after it was made (NaN, a list, float32,
    np.matrix) is refused by its methods too, not only by rbm.exact and the estimators."""
    change(small_model)
    v, h = np.zeros(6), np.zeros(4)
    for call in (lambda: small_model.energy(v, h), lambda: small_model.free_energy(v),
                 lambda: small_model.prob_h_given_v(v), lambda: small_model.prob_v_given_h(h),
                 lambda: small_model.sample_h_given_v(v, rng=0),
                 lambda: small_model.sample_v_given_h(h, rng=0)):
        with pytest.raises(error, match=match):
            call()


def test_requests_that_multiply_into_memory_are_refused_with_the_memory_they_need():
    """Each used to end in numpy's MemoryError (found in review)."""
    from rbm import ais, sampling

    wide = rbm.RBM.random(784, 10, rng=0)
    calls = {
        "n_runs=1000000000000 chains of 784 units": lambda: ais.ais_log_partition(wide, n_runs=10**12, rng=0),
        "n_chains=33554432 chains of 784 units":
            lambda: rbm.PCD(2**25).gradient(wide, np.zeros((2, 784)), rng=0),
        "return_trajectory=True over k=100000 steps of 1000 x 100 states":
            lambda: sampling.gibbs_chain(rbm.RBM.random(100, 10, rng=0), np.zeros((1000, 100)),
                                         10**5, rng=0, return_trajectory=True),
        "W of n_visible=200000 x n_hidden=200000": lambda: rbm.RBM.random(200000, 200000, rng=0),
    }
    for what, call in calls.items():
        with pytest.raises(ValueError, match=rf"{what} asks for an array of \d+ numbers "
                                             r"\([\d.e+]+ GiB\)"):
            call()


def test_an_int_beyond_the_float_range_is_a_value_error_not_an_overflow():
    from rbm import training

    with pytest.raises(ValueError, match="learning_rate must be finite, got an int of 401 digits"):
        training.train(rbm.RBM.random(4, 3, rng=0), np.zeros((2, 4)), rbm.CD(1),
                       learning_rate=10**400, epochs=1, batch_size=1, rng=0)


@pytest.mark.slow
def test_exact_weight_moments_holds_one_transition_matrix_at_a_time():
    """12 visible units and 40 temperatures asked for 5 GiB (every T_k at once); the
    docstring now states one matrix (128 MiB) and about 50 MiB besides."""
    import tracemalloc

    from rbm import ais

    model = rbm.RBM.random(12, 4, scale=0.5, rng=0)
    tracemalloc.start()
    try:
        ais.exact_weight_moments(model, 40)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    assert peak < 180, peak
