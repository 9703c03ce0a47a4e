"""Block Gibbs sampling: one step follows the exact transition, long chains sample the model."""

import numpy as np
import pytest
from scipy import stats

from rbm import RBM, exact
from rbm.transition import gibbs_transition_matrix
from rbm.sampling import gibbs_chain, gibbs_step, sample_model


@pytest.fixture
def model():
    return RBM.random(6, 4, scale=1.0, bias_scale=1.0, distribution="uniform", rng=31)


def _chi_square_pvalue(samples, probabilities):
    """Pearson chi-square of sampled visible states against exact probabilities.

    States expected fewer than 5 times are pooled into one cell, so that
    the chi-square approximation holds.
    """
    n = samples.shape[0]
    counts = np.bincount(exact.state_index(samples), minlength=probabilities.size)
    expected = n * probabilities
    small = expected < 5
    obs = np.append(counts[~small], counts[small].sum())
    exp = np.append(expected[~small], expected[small].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp).pvalue


def test_one_gibbs_step_follows_the_exact_transition_row(model):
    """20000 parallel steps from one state, chi-square test at significance 0.001."""
    start = np.array([1, 0, 1, 1, 0, 0], dtype=float)
    row = gibbs_transition_matrix(model)[exact.state_index(start)]
    samples = gibbs_step(model, np.tile(start, (20000, 1)), rng=1)
    assert _chi_square_pvalue(samples, row) > 0.001


def test_a_wrong_transition_is_rejected(model):
    """The same chi-square test has power: the row of another start state is rejected."""
    start = np.array([1, 0, 1, 1, 0, 0], dtype=float)
    other_row = gibbs_transition_matrix(model)[0]
    samples = gibbs_step(model, np.tile(start, (20000, 1)), rng=1)
    assert _chi_square_pvalue(samples, other_row) < 0.001


def test_parallel_chains_sample_the_model_distribution(model):
    """20000 chains after 30 steps, chi-square test against p(v) at significance 0.001.

    The burn-in is long enough that the chains' exact distribution (from
    the uniform start, through the transition matrix) is within total
    variation 1e-9 of p(v), far below what 20000 samples resolve.
    """
    p = exact.visible_distribution(model)
    T = gibbs_transition_matrix(model)
    after_burn_in = np.full(p.size, 1 / p.size) @ np.linalg.matrix_power(T, 30)
    assert 0.5 * np.abs(after_burn_in - p).sum() < 1e-9

    samples = sample_model(model, n_chains=20000, n_steps=30, rng=2)
    assert samples.shape == (20000, 6)
    assert _chi_square_pvalue(samples, p) > 0.001


def test_sample_model_starts_every_chain_at_a_given_vector(model):
    v0 = np.array([1, 1, 1, 0, 0, 0], dtype=float)
    from_vector = sample_model(model, n_chains=5, n_steps=3, rng=4, v0=v0)
    from_rows = sample_model(model, n_chains=5, n_steps=3, rng=4, v0=np.tile(v0, (5, 1)))
    np.testing.assert_array_equal(from_vector, from_rows)


def test_gibbs_chain_trajectory_starts_at_v0_and_ends_at_the_final_state(model):
    v0 = np.array([[0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1]], dtype=float)
    trajectory = gibbs_chain(model, v0, 4, rng=5, return_trajectory=True)
    final = gibbs_chain(model, v0, 4, rng=5)
    assert trajectory.shape == (5, 2, 6)
    np.testing.assert_array_equal(trajectory[0], v0)
    np.testing.assert_array_equal(trajectory[-1], final)


def test_gibbs_chain_replays_a_plain_chain_drawn_from_the_same_generator(model):
    """gibbs_chain and gibbs_step share one kernel, so comparing them proves little: here the
    chain is written out with plain numpy (h then v at every step, one uniform per unit)."""
    def sigmoid(x):
        return 1.0 / (1.0 + np.exp(-x))

    v0 = (np.random.default_rng(0).random((50, 6)) < 0.5).astype(float)
    replay, v = np.random.default_rng(9), v0
    for _ in range(4):
        h = (replay.random((50, 4)) < sigmoid(v @ model.W + model.c)).astype(float)
        v = (replay.random((50, 6)) < sigmoid(h @ model.W.T + model.b)).astype(float)
    np.testing.assert_array_equal(gibbs_chain(model, v0, 4, rng=9), v)


def test_gibbs_chain_of_k_steps_is_k_gibbs_steps(model):
    v0 = np.array([0, 1, 0, 1, 0, 1], dtype=float)
    rng = np.random.default_rng(6)
    v = v0
    for _ in range(3):
        v = gibbs_step(model, v, rng=rng)
    np.testing.assert_array_equal(gibbs_chain(model, v0, 3, rng=6), v)
    assert v.shape == (6,)


@pytest.mark.parametrize("k", [0, -3])
def test_gibbs_chain_refuses_k_below_one(model, k):
    with pytest.raises(ValueError, match="k must be >= 1"):
        gibbs_chain(model, np.zeros(6), k, rng=0)


def test_gibbs_chain_refuses_a_v0_of_the_wrong_width(model):
    with pytest.raises(ValueError, match="v0 must have 6 columns"):
        gibbs_chain(model, np.zeros((2, 5)), 1, rng=0)


def test_gibbs_step_refuses_non_binary_states(model):
    with pytest.raises(ValueError, match="v must hold only 0 and 1"):
        gibbs_step(model, np.full(6, 0.5), rng=0)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(n_chains=0, n_steps=1), ValueError, "n_chains must be >= 1"),
    (dict(n_chains=3, n_steps=0), ValueError, "n_steps must be >= 1"),
    (dict(n_chains=3, n_steps=1, v0=np.zeros((2, 6))), ValueError, "v0 must have n_chains=3 rows"),
    (dict(n_chains=3, n_steps=1, rng="seed"), TypeError, "rng must be"),
])
def test_sample_model_refuses_bad_arguments_by_name(model, kwargs, error, message):
    kwargs.setdefault("rng", 0)
    with pytest.raises(error, match=message):
        sample_model(model, **kwargs)


def test_rng_is_keyword_only_everywhere_in_the_public_api():
    """One convention: every public function or method that takes `rng` takes it by name."""
    import inspect

    import rbm

    seen, positional = 0, []
    for module_name in rbm.__all__:
        module = getattr(rbm, module_name)
        if not inspect.ismodule(module):
            continue
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            callables = [(name, obj)] if inspect.isfunction(obj) else []
            if inspect.isclass(obj):
                callables += [(f"{name}.{m}", f) for m, f in vars(obj).items()
                              if (not m.startswith("_") or m == "__init__")
                              and (inspect.isfunction(f) or isinstance(f, classmethod))]
            for qualname, f in callables:
                f = f.__func__ if isinstance(f, classmethod) else f
                param = inspect.signature(f).parameters.get("rng")
                if param is not None:
                    seen += 1
                    if param.kind is not inspect.Parameter.KEYWORD_ONLY:
                        positional.append(f"{module.__name__}.{qualname}")
    assert seen >= 10, seen  # the walk found the samplers
    assert positional == []


def test_the_binary_sampling_kernel_draws_the_models_conditionals(model):
    """Binary.sample (the tanh kernel behind the chains and estimators) draws u < p with p the
    checked RBM method's probability (expit) to rounding, on every visible state."""
    from rbm import exact
    from rbm.special import sigmoid_inplace

    V = exact.all_states(model.n_visible)
    p = sigmoid_inplace(V @ model.W + model.c)
    np.testing.assert_allclose(p, model.prob_h_given_v(V), rtol=0, atol=1e-15)
    u = np.random.default_rng(0).random(p.shape)
    drawn = model.hidden.sample(model.input_hidden(V), rng=np.random.default_rng(0))
    np.testing.assert_array_equal(drawn, (u < p).astype(float))
