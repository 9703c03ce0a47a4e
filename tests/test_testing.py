"""rbm.testing: a correct implementation passes, planted bugs are caught, the rates are as stated.

The implementation under test is rbm.reference_impl.NumpyRBM, plain NumPy that shares no
code with the package's exact functions.  Three properties are measured:

* the false-alarm rate of every stochastic check on the correct code, over 200 seeds at
  alpha = 0.05, is not significantly above alpha (one-sided binomial test at level 1e-3);
* every planted bug of the catalogue is caught at alpha = 1e-3 by the check named for it,
  on each of 10 seeds, and the diagnosis names the slip;
* the power of a mean check with the draws of draws_needed is at least the stated power
  (binomial test, 200 seeds) on an estimator with a known error.
"""

import numpy as np
import pytest
from scipy.stats import binom
from scipy.stats import t as scipy_t

import rbm
from rbm import testing
from rbm.layers import Spin
from rbm.reference_impl import BUGS, NumpyRBM

MODEL = rbm.RBM.random(4, 4, scale=1.0, bias_scale=1.0, rng=3)  # square: W transposed is silent
BIG = rbm.RBM(40 * MODEL.W, MODEL.b, MODEL.c)                     # inputs beyond 88.7
DATA = np.random.default_rng(1).integers(0, 2, size=(6, 4)).astype(float)
CHAINS = np.random.default_rng(2).integers(0, 2, size=(6, 4)).astype(float)
PCD_TARGET = testing.expected_pcd_gradient(MODEL, DATA, CHAINS, k=1)


def impl(bug=None, model=MODEL):
    return NumpyRBM(model.W, model.b, model.c, bug=bug)


def stochastic_checks(bug=None, *, alpha=1e-3, draws=None, means=1000):
    """Every check that samples, as functions of a seed, on the implementation with `bug`."""
    i = impl(bug)

    def step(W, b, c, data, rng):
        return NumpyRBM(W, b, c, bug=bug).cd_update(data, 0.1, 1, rng)

    return {
        "sampler h|v": lambda s: testing.check_sampler(i.sample_h_given_v, MODEL, n_draws=draws,
                                                       alpha=alpha, rng=s),
        "sampler v|h": lambda s: testing.check_sampler(i.sample_v_given_h, MODEL,
                                                       given="hidden", n_draws=draws,
                                                       alpha=alpha, rng=s),
        "Gibbs step": lambda s: testing.check_gibbs_step(i.gibbs_step, MODEL, n_draws=draws,
                                                         alpha=alpha, rng=s),
        "two Gibbs steps": lambda s: testing.check_gibbs_step(
            lambda v, r: i.gibbs_chain(v, 2, r)[0], MODEL, k=2, n_draws=draws, alpha=alpha,
            rng=s),
        "CD-1": lambda s: testing.check_gradient_estimator(
            lambda d, r: i.cd_gradient(d, 1, r), MODEL, DATA, n_draws=means, alpha=alpha, rng=s),
        "CD-2": lambda s: testing.check_gradient_estimator(
            lambda d, r: i.cd_gradient(d, 2, r), MODEL, DATA, target=2, n_draws=means,
            alpha=alpha, rng=s),
        "PCD-1": lambda s: testing.check_gradient_estimator(
            lambda d, r: i.pcd_gradient(d, CHAINS.copy(), 1, r)[0], MODEL, DATA,
            target=PCD_TARGET, n_draws=means, alpha=alpha, rng=s),
        "training step": lambda s: testing.check_training_step(
            step, MODEL, DATA, learning_rate=0.1, n_draws=means, alpha=alpha, rng=s),
        "one-bit PL": lambda s: testing.check_pseudo_likelihood(
            i.one_bit_pseudo_log_likelihood, MODEL, DATA, n_draws=means, alpha=alpha, rng=s),
    }


def exact_checks(bug=None):
    """Every deterministic check on the implementation with `bug`."""
    i, big = impl(bug), impl(bug, BIG)
    return {
        "conditionals": lambda: testing.check_conditionals(
            MODEL, prob_h_given_v=i.prob_h_given_v, prob_v_given_h=i.prob_v_given_h),
        "free energy": lambda: testing.check_free_energy(big.free_energy, BIG),
        "log Z": lambda: testing.check_log_partition(big.log_partition, BIG),
        "log-likelihood": lambda: testing.check_log_likelihood(i.log_likelihood, MODEL, DATA),
        "pseudo-likelihood": lambda: testing.check_pseudo_likelihood(i.pseudo_log_likelihood,
                                                                     MODEL, DATA),
    }


# -- the correct implementation ------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(exact_checks()))
def test_reference_passes_every_exact_check(name, capsys):
    exact_checks()[name]()
    assert "verdict" in capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(stochastic_checks()))
def test_reference_passes_every_stochastic_check_at_the_default_draws(name):
    """Seed 0, alpha = 1e-3, the default draws (1000 for means)."""
    result = stochastic_checks()[name](0)
    assert result.largest_z <= result.critical


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(stochastic_checks()))
def test_false_alarms_over_200_seeds_are_not_far_above_alpha(name):
    """At alpha = 0.05 with 100 draws (per state, or of a mean), over seeds 0..199.

    A smoke test, not a proof of a level: 200 seeds cannot show a rate <= alpha (a rate of
    0.10 passes this with probability 0.65).  Bonferroni and the exact binomial tests make the
    rate at most alpha by construction; the t-tests of means hold it only as the draws grow
    (see test_the_one_bit_pl_t_test_is_slightly_above_its_level for an exact level).  The
    count must not be significantly above 200 * 0.05 = 10 (one-sided binomial test at level
    1e-3: at most 21), which catches a grossly wrong test.
    """
    failed, total = testing.failure_rate(
        stochastic_checks(alpha=0.05, draws=100, means=100)[name], range(200))
    assert total == 200
    assert failed <= binom.isf(1e-3, 200, 0.05), f"{failed} false alarms in 200 seeds"


# -- the catalogue of planted bugs -----------------------------------------------------------

# bug -> (the check that catches it, the slip its diagnosis names: a substring)
CATALOGUE = {
    "h from previous v": ("two Gibbs steps", "1 Gibbs step"),
    "v_k paired with h_0": ("CD-1", "v_1 paired with h_0"),
    "transposed W": ("conditionals", "W transposed"),
    "missing hidden bias": ("sampler h|v", "no hidden bias"),
    "doubled visible bias": ("Gibbs step", "doubled visible bias"),
    "one uniform per row": ("sampler v|h", "one uniform number per row"),
    "softplus overflow": ("free energy", "non-finite"),
    "PL times n_visible": ("pseudo-likelihood", "n_visible times the sum"),
    "gradient sign": ("CD-1", "minus the expected value"),
    "learning rate twice": ("training step", "learning_rate**2"),
    "chains re-initialised": ("PCD-1", "E[CD-1]"),
}


# planted for the checks of issue 38, caught in test_testing_new_checks.py and
# test_testing_diagnoses.py
NEWER = {"generator re-seeded", "tempering swap with beta F", "AIS mean of log weights",
         "chains reset on short batch", "centred biases uncorrected"}


# planted for the probes and fitted causes of issue 46, caught in test_testing_probes.py
PROBED = {"dropout", "batch normalisation", "temperature 2", "free energy doubled hidden bias",
          "gradient sign times sum", "weight decay on biases", "tempered chains", "softplus cut",
          "softplus cut in float32"}


def test_the_catalogue_covers_every_planted_bug():
    assert set(CATALOGUE) | NEWER | PROBED == set(BUGS)
    assert not set(CATALOGUE) & NEWER and not PROBED & (set(CATALOGUE) | NEWER)


@pytest.mark.parametrize("bug", sorted(CATALOGUE))
def test_each_planted_bug_is_caught_and_named_on_ten_seeds(bug):
    """Alpha = 1e-3, 300 draws of a mean, default draws per state; caught on seeds 0..9, and
    the diagnosis names the slip."""
    check, slip = CATALOGUE[bug]
    for seed in range(10) if check in stochastic_checks() else [None]:
        with pytest.raises(testing.CheckFailed) as failure:
            if seed is None:
                exact_checks(bug)[check]()
            else:
                stochastic_checks(bug, means=300)[check](seed)
        assert failure.value.slip is not None and slip in failure.value.slip, str(failure.value)


def test_h_from_the_previous_v_makes_k_steps_move_half_as_far():
    """v_{t+1} ~ T(v_{t-1}): four steps move two, and CD-4 runs as CD-2."""
    i = impl("h from previous v")
    with pytest.raises(testing.CheckFailed) as failure:
        testing.check_gibbs_step(lambda v, r: i.gibbs_chain(v, 4, r)[0], MODEL, k=4, rng=0)
    assert failure.value.slip == "2 Gibbs steps"
    with pytest.raises(testing.CheckFailed) as failure:
        testing.check_gradient_estimator(lambda d, r: i.cd_gradient(d, 4, r), MODEL, DATA,
                                         target=4, rng=0)
    # E[CD-2] fits, but 1000 draws tell it from E[CD-3] with power 0.58 only: not named
    assert failure.value.slip is None
    assert "Your draws fit E[CD-2], but these draws tell it from E[CD-3] with power only" \
        in str(failure.value)


def test_the_message_names_the_entry_its_error_in_standard_errors_and_the_exact_value():
    with pytest.raises(AssertionError) as failure:
        stochastic_checks("gradient sign")["CD-1"](0)
    err = failure.value
    text = str(err)
    assert f"{err.entry} is off by {err.z:.3g} standard errors" in text
    assert f"the exact value is {err.expected:.5g}" in text
    assert "a common cause is that the sign is reversed" in text
    assert err.entry.startswith(("W[", "b[", "c["))


def test_the_message_of_an_overflow_names_softplus_and_the_warning():
    with pytest.raises(AssertionError, match=r"log\(1 \+ exp\(x\)\).*overflow encountered"):
        exact_checks("softplus overflow")["free energy"]()


def test_a_bug_in_one_conditional_leaves_the_other_passing():
    """Transposed W breaks p(v | h) only: the check of p(h | v) alone passes."""
    testing.check_conditionals(MODEL, prob_h_given_v=impl("transposed W").prob_h_given_v)


def test_float32_code_fails_the_float64_tolerance_and_passes_with_rtol():
    free_energy = impl("softplus overflow").free_energy  # finite for the small weights
    with pytest.raises(AssertionError, match="float32"):
        testing.check_free_energy(free_energy, MODEL)
    testing.check_free_energy(free_energy, MODEL, rtol=1e-6, tol=1e-6)


def test_an_additive_constant_is_reported_and_accepted_on_request():
    def shifted(v):
        return impl().free_energy(v) + 2.5
    with pytest.raises(AssertionError, match="F \\+ 2.5 at every state"):
        testing.check_free_energy(shifted, MODEL)
    assert testing.check_free_energy(shifted, MODEL, up_to_constant=True).name == "free energy"


def test_a_log_likelihood_summed_over_rows_is_named():
    def summed(data):
        return impl().log_likelihood(data) * len(data)
    with pytest.raises(AssertionError, match="the sum over rows"):
        testing.check_log_likelihood(summed, MODEL, DATA)


# -- power ------------------------------------------------------------------------------------

def test_draws_needed_gives_the_stated_power_against_the_stated_error():
    """An estimator with standard normal noise and one entry off by 0.5, over 200 seeds.

    With the draws of draws_needed(0.5, 1, alpha=1e-3, power=0.9, n_tests=5) the check
    must fail on at least the number of seeds a power of 0.9 gives with probability
    1 - 1e-3 (binomial); the normal approximation of the t-test errs on the safe side.
    """
    expected = rbm.Gradient(W=np.zeros((2, 1)), b=np.zeros(2), c=np.zeros(1))
    shift = np.array([0.5, 0, 0, 0, 0])
    n = testing.draws_needed(0.5, 1.0, alpha=1e-3, power=0.9, n_tests=5)

    def check(seed):
        def estimate(data, rng):
            x = rng.standard_normal(5) + shift
            return x[:2].reshape(2, 1), x[2:4], x[4:]
        testing.check_gradient_estimator(estimate, (np.zeros((2, 1)), np.zeros(2), np.zeros(1)),
                                         [[0, 1]], target=expected, n_draws=n, alpha=1e-3,
                                         rng=seed)
    caught, total = testing.failure_rate(check, range(200))
    assert caught >= binom.ppf(1e-3, total, 0.9), f"caught on {caught} of {total} seeds"


def test_the_reported_detectable_error_has_the_stated_exact_power():
    result = stochastic_checks()["Gibbs step"](0)
    assert testing.binomial_power(result.n_draws, result.detectable, alpha=1e-3,
                                  n_tests=result.n_tests) >= 0.99
    assert testing.binomial_power(result.n_draws, 0.99 * result.detectable, alpha=1e-3,
                                  n_tests=result.n_tests) < 0.99


def test_the_normal_approximation_falls_short_and_the_exact_sizing_does_not():
    """4821 draws (normal approximation) give exact power 0.9897 against 0.05 at p = 1/2."""
    n_normal = testing.draws_needed(0.05, 0.5, alpha=1e-3, n_tests=256)
    assert testing.binomial_power(n_normal, 0.05, alpha=1e-3, n_tests=256) < 0.99
    n = testing.binomial_draws_needed(0.05, alpha=1e-3, n_tests=256)
    assert testing.binomial_power(n, 0.05, alpha=1e-3, n_tests=256) >= 0.99
    assert testing.binomial_power(n - 1, 0.05, alpha=1e-3, n_tests=256) < 0.99


def test_too_few_draws_for_any_count_to_fail_are_refused():
    """The all-zero 2x2 model (every entry of T is 1/4) and a step that never moves: with 4
    draws per state no count can fail at alpha / 16, so the check must refuse, not pass."""
    model = (np.zeros((2, 2)), np.zeros(2), np.zeros(2))
    stuck = lambda v, rng: np.zeros_like(v)  # noqa: E731
    for n in (4, 5):
        with pytest.raises(ValueError, match="n_draws = .* is too few"):
            testing.check_gibbs_step(stuck, model, n_draws=n, rng=0)
    with pytest.raises(testing.CheckFailed):
        testing.check_gibbs_step(stuck, model, n_draws=30, rng=0)


def test_t_test_level_of_two_values_is_the_binomial_sum():
    n, p = 20, 0.1
    x = np.arange(n + 1)
    mean = x / n
    var = (x * (1 - mean) ** 2 + (n - x) * mean ** 2) / (n - 1)
    t = np.divide(mean - p, np.sqrt(var / n), out=np.full(n + 1, np.inf), where=var > 0)
    direct = binom.pmf(x, n, p)[np.abs(t) > scipy_t.isf(0.025, n - 1)].sum()
    assert abs(testing.t_test_level([0.0, 1.0], [1 - p, p], n, alpha=0.05) - direct) < 1e-12


def test_the_one_bit_pl_t_test_is_slightly_above_its_level():
    """100 draws of one bit of four per row, 6 rows, alpha = 0.05: exact family level in
    (0.05, 0.06]; the rows are independent."""
    log_cond = rbm.pseudolikelihood.log_conditionals(MODEL, DATA)
    rates = [testing.t_test_level(4 * row, np.full(4, 0.25), 100, alpha=0.05, n_tests=6)
             for row in log_cond]
    level = 1 - np.prod(1 - np.array(rates))
    assert 0.05 < level <= 0.06, level


# -- other layers and the package's own code ----------------------------------------------

def spin_model():
    return rbm.RBM(MODEL.W[:3, :3], Spin(MODEL.b[:3]), Spin(MODEL.c[:3]))


def test_the_package_passes_its_own_checks_on_spins():
    model = spin_model()
    data = 2 * DATA[:, :3] - 1
    testing.check_conditionals(model, prob_h_given_v=model.mean_h_given_v,
                               prob_v_given_h=model.mean_v_given_h)
    testing.check_sampler(lambda v, rng: model.sample_h_given_v(v, rng=rng), model, rng=0)
    testing.check_gibbs_step(lambda v, rng: rbm.sampling.gibbs_step(model, v, rng=rng), model,
                             rng=0)
    testing.check_free_energy(model.free_energy, model)
    testing.check_gradient_estimator(lambda d, rng: rbm.CD(2).gradient(model, d, rng=rng),
                                     model, data, target=2, rng=0)
    testing.check_pseudo_likelihood(
        lambda d: rbm.pseudolikelihood.log_conditionals(model, d).sum(axis=1), model, data)


def test_a_training_step_on_spins_passes_and_its_sign_is_caught():
    model = spin_model()
    data = 2 * DATA[:, :3] - 1

    def step(W, b, c, d, rng, sign=1.0):
        g = rbm.CD(1).gradient(rbm.RBM(W, Spin(b), Spin(c)), d, rng=rng)
        return W + sign * 0.1 * g.W, b + sign * 0.1 * g.b, c + sign * 0.1 * g.c
    testing.check_training_step(step, model, data, learning_rate=0.1, n_draws=300, rng=0)
    with pytest.raises(testing.CheckFailed) as failure:
        testing.check_training_step(lambda *a: step(*a, sign=-1.0), model, data,
                                    learning_rate=0.1, n_draws=300, rng=0)
    assert failure.value.slip.startswith("minus")


def test_spins_read_as_bits_are_caught():
    """A {0,1} sampler run on a ±1 model returns values the model cannot take."""
    model = spin_model()
    wrong = NumpyRBM(model.W, model.b, model.c)
    with pytest.raises(AssertionError, match=r"values other than \[-1.0, 1.0\]"):
        testing.check_sampler(wrong.sample_h_given_v, model, rng=0)


def test_expected_pcd_gradient_from_the_data_is_cd_k_and_from_hidden_chains_one_step_less():
    cd = rbm.transition.cd_expected_gradient(MODEL, DATA, [1, 2])
    assert (testing.expected_pcd_gradient(MODEL, DATA, DATA, k=2) - cd[1]).max_abs() < 1e-12
    H = MODEL.sample_h_given_v(DATA, rng=0)
    # k = 1 from hidden chains: v ~ p(v | h_c), averaged over the chains, by products of units
    g = testing.expected_pcd_gradient(MODEL, DATA, H, k=1, chain_layer="hidden")
    V = rbm.exact.all_states(4)
    r = np.mean([np.prod(np.where(V == 1, p, 1 - p), axis=1)
                 for p in MODEL.prob_v_given_h(H)], axis=0)
    P = MODEL.prob_h_given_v(V)
    pos = rbm.exact.data_statistics(MODEL, DATA)
    assert np.abs(g.W - (pos.W - (V * r[:, None]).T @ P)).max() < 1e-12


# -- scikit-learn's BernoulliRBM --------------------------------------------------------------

def sklearn_twin(model, batch_size=10, learning_rate=0.1):
    """A BernoulliRBM holding `model`'s parameters, as if fitted (components_ is W.T)."""
    neural_network = pytest.importorskip("sklearn.neural_network")
    sk = neural_network.BernoulliRBM(n_components=model.n_hidden, batch_size=batch_size,
                                     learning_rate=learning_rate)
    sk.components_ = model.W.T.copy()
    sk.intercept_visible_, sk.intercept_hidden_ = model.b.copy(), model.c.copy()
    sk.n_features_in_ = model.n_visible
    return sk


def random_state(rng):
    return np.random.RandomState(rng.integers(2**32))


def test_sklearn_gibbs_is_a_gibbs_step():
    sk = sklearn_twin(MODEL)

    def step(v, rng):
        sk.random_state_ = random_state(rng)
        return sk.gibbs(v)
    testing.check_gibbs_step(step, MODEL, rng=0)


def test_sklearn_score_samples_is_unbiased_for_the_sum_over_units_not_the_mean():
    sk = sklearn_twin(MODEL)

    def score(data, rng):
        sk.random_state = random_state(rng)
        return sk.score_samples(data)
    testing.check_pseudo_likelihood(score, MODEL, DATA, n_draws=500, rng=0)
    with pytest.raises(testing.CheckFailed) as failure:
        testing.check_pseudo_likelihood(score, MODEL, DATA, convention="mean",
                                        n_draws=500, rng=0)
    assert failure.value.slip == "the sum over units"


def test_sklearn_score_samples_repeats_its_draw_under_an_int_random_state():
    sk = sklearn_twin(MODEL)
    sk.random_state = 5
    assert np.array_equal(sk.score_samples(DATA), sk.score_samples(DATA))


def sklearn_step(chains, batch_size):
    def step(W, b, c, data, rng):
        sk = sklearn_twin(rbm.RBM(W, b, c), batch_size=batch_size)
        sk.h_samples_ = chains.copy()
        sk.random_state_ = random_state(rng)
        sk.partial_fit(data)
        return sk.components_.T, sk.intercept_visible_, sk.intercept_hidden_
    return step


def test_sklearn_partial_fit_is_one_pcd_step_from_its_hidden_chains():
    chains = np.random.default_rng(5).integers(0, 2, size=(6, 4)).astype(float)
    target = testing.expected_pcd_gradient(MODEL, DATA, chains, chain_layer="hidden")
    testing.check_training_step(sklearn_step(chains, 6), MODEL, DATA, learning_rate=0.1,
                                target=target, n_draws=300, rng=0)


def test_sklearn_partial_fit_weighs_its_negative_term_by_chains_over_rows():
    """10 chains (batch_size) and 5 rows: the negative term counts twice."""
    chains = np.random.default_rng(5).integers(0, 2, size=(10, 4)).astype(float)
    data = DATA[:5]
    pcd = testing.expected_pcd_gradient(MODEL, data, chains, chain_layer="hidden")
    with pytest.raises(AssertionError):
        testing.check_training_step(sklearn_step(chains, 10), MODEL, data, learning_rate=0.1,
                                    target=pcd, n_draws=300, rng=0)
    pos = rbm.exact.data_statistics(MODEL, data)
    testing.check_training_step(sklearn_step(chains, 10), MODEL, data, learning_rate=0.1,
                                target=pos - (pos - pcd) * 2.0, n_draws=300, rng=0)


# -- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("call, error, match", [
    (lambda: testing.as_model("W"), TypeError, "model must be"),
    (lambda: testing.as_model(rbm.RBM.random(11, 2, rng=0)), ValueError, "MAX_BITS"),
    (lambda: testing.check_sampler(None, MODEL, rng=0), TypeError, "sample must be callable"),
    (lambda: testing.check_sampler(impl().sample_h_given_v, MODEL, given="h", rng=0),
     ValueError, "given must be"),
    (lambda: testing.check_gibbs_step(impl().gibbs_step, MODEL, alpha=1.5, rng=0),
     ValueError, "alpha"),
    (lambda: testing.check_gibbs_step(impl().gibbs_step, MODEL, rng="x"), TypeError, "rng"),
    (lambda: testing.check_conditionals(MODEL), ValueError, "give prob_h_given_v"),
    (lambda: testing.check_pseudo_likelihood(impl().pseudo_log_likelihood, MODEL, DATA,
                                             convention="per-feature"), ValueError, "convention"),
    (lambda: testing.check_pseudo_likelihood(impl().one_bit_pseudo_log_likelihood, MODEL,
                                             DATA, n_draws=10), TypeError, "rng is needed"),
    (lambda: testing.check_gradient_estimator(lambda d, r: None, MODEL, DATA, target="cd",
                                              rng=0), TypeError, "target"),
    (lambda: testing.check_gradient_estimator(lambda d, r: None, MODEL, DATA, n_draws=1,
                                              rng=0), ValueError, "n_draws"),
    (lambda: testing.check_training_step(lambda *a: None, MODEL, DATA, learning_rate=-1,
                                         rng=0), ValueError, "learning_rate"),
    (lambda: testing.expected_pcd_gradient(MODEL, DATA, CHAINS, chain_layer="v"), ValueError,
     "chain_layer"),
    (lambda: testing.draws_needed(0, 1, alpha=0.01), ValueError, "effect"),
    (lambda: testing.draws_needed(0.1, 1, alpha=0.01, power=1.0), ValueError, "power"),
    (lambda: testing.failure_rate(3, range(2)), TypeError, "check must be callable"),
    (lambda: testing.draws_needed(1e-300, 0.5, alpha=0.01), ValueError, "effect .* too small"),
    (lambda: testing.check_gibbs_step(impl().gibbs_step, MODEL, effect=0.6, rng=0), ValueError,
     "effect must lie in"),
    (lambda: testing.binomial_power(10, 1.5, alpha=0.01), ValueError, "effect"),
    (lambda: testing.t_test_level([0, 1], [0.5, 0.6], 10, alpha=0.01), ValueError, "probs"),
    (lambda: testing.t_test_level(np.arange(9), np.full(9, 1 / 9), 100, alpha=0.01),
     ValueError, "too many|more than"),
])
def test_bad_input_is_refused_by_name(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_an_estimator_that_returns_the_wrong_shape_fails_with_the_field_named():
    with pytest.raises(AssertionError, match="your estimator's W returned shape"):
        testing.check_gradient_estimator(lambda d, r: (np.zeros((4, 3)), np.zeros(4),
                                                       np.zeros(4)), MODEL, DATA, rng=0)


def test_an_exception_in_the_code_under_test_names_the_callable_and_the_input_shape():
    """A model of another shape than the code was built for: a numpy error, reported."""
    other = rbm.RBM.random(3, 4, rng=0)
    with pytest.raises(AssertionError, match=r"your prob_h_given_v raised ValueError.*shape "
                                             r"\(8, 3\)"):
        testing.check_conditionals(other, prob_h_given_v=impl().prob_h_given_v)
    with pytest.raises(AssertionError, match="your estimator raised"):
        testing.check_gradient_estimator(lambda d, r: impl().cd_gradient(d, 1, r), other,
                                         DATA[:, :3], rng=0)
