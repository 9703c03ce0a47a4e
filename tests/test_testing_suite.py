"""The oracle in one call (issue 46): check_implementation, parametrize_with_checks, the
joint-energy check and the free energy built from E(v, h).

Each statistical check of the suite runs at alpha = 1e-3 with the default power 0.99 and the
seed [0, i] of its row; the planted slips are caught far beyond that power (|z| > 10 at these
draws), so a test here fails by chance with probability below 1e-3 per check run.
"""

import numpy as np
import pytest

from rbm import RBM, testing
from rbm.reference_impl import NumpyRBM, PersistentCD

# A square model (so that W transposed is a distinct slip) with every parameter away from 0.
W = np.array([[1.0, -1.5, 0.5], [0.3, 0.8, -1.2], [-0.7, 0.4, 1.1]])
B, C = np.array([0.2, -0.4, 0.3]), np.array([0.5, -0.6, 0.25])
MODEL = (W, B, C)
DATA = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0],
                 [1.0, 1.0, 1.0]])


def energy_of(W, b, c):
    return lambda v, h: -v @ b - h @ c - np.einsum("ni,ij,nj->n", v, W, h)


def everything(bug=None, k=1):
    """Every function NumpyRBM provides, under the suite's names."""
    impl = NumpyRBM(W, B, C, bug=bug)
    return dict(
        prob_h_given_v=impl.prob_h_given_v, prob_v_given_h=impl.prob_v_given_h,
        free_energy=impl.free_energy, energy=energy_of(W, B, C),
        log_partition=impl.log_partition, log_likelihood=impl.log_likelihood,
        pseudo_likelihood=impl.pseudo_log_likelihood,
        sample_h_given_v=impl.sample_h_given_v, sample_v_given_h=impl.sample_v_given_h,
        gibbs_step=impl.gibbs_step,
        log_partition_estimate=lambda rng: impl.ais_log_partition(
            200, np.linspace(0, 1, 50), rng),
        gradient=lambda d, rng: impl.cd_gradient(d, k, rng),
        training_step=lambda W_, b_, c_, d, rng: NumpyRBM(W_, b_, c_, bug=bug).cd_update(
            d, 0.1, k, rng))


def test_a_correct_implementation_passes_every_check():
    pcd = PersistentCD(W, B, C, chains=np.zeros((2, 3)))
    report = testing.check_implementation(
        model=MODEL, data=DATA, learning_rate=0.1, persistent_gradient=pcd.gradient,
        chains=lambda: pcd.chains, **everything())
    assert report.passed, str(report)
    assert [r.check for r in report.rows] == [
        "conditionals", "joint energy", "free energy", "free energy from your energy", "log Z",
        "log-likelihood", "pseudo-likelihood", "sampler of h | v", "sampler of v | h",
        "Gibbs step", "log Z estimate", "gradient estimate", "training step",
        "persistent estimator"]
    assert report.not_run == (("stationary law", "long_run_sampler"),
                              ("pseudo-likelihood estimate", "pseudo_likelihood_estimate"),
                              ("persistent trainer", "persistent_step"))
    assert "alpha 0.001" in report["Gibbs step"].power
    assert report["gradient estimate"].seed == [0, 12]
    text = str(report)
    assert text.splitlines()[0].startswith("check") and "not run: stationary law" in text


# planted slip -> (the check that must fail, the cause it must name, what to provide, options)
PLANTED = {
    "missing hidden bias": ("conditionals", "no hidden bias", ("prob_h_given_v",), {}),
    "doubled visible bias": ("conditionals", "doubled visible bias", ("prob_v_given_h",), {}),
    "transposed W": ("sampler of v | h", "W transposed", ("sample_v_given_h",), {}),
    "one uniform per row": ("sampler of h | v", "one uniform number per row",
                            ("sample_h_given_v",), {}),
    "PL times n_visible": ("pseudo-likelihood", None, ("pseudo_likelihood",), {}),
    "gradient sign": ("gradient estimate", "minus the expected value", ("gradient",), {}),
    "v_k paired with h_0": ("gradient estimate", None, ("gradient",), {}),
    "generator re-seeded": ("gradient estimate", "generator", ("gradient",), {}),
    "h from previous v": ("gradient estimate", None, ("gradient",), {"cd_k": 2}),
    "learning rate twice": ("training step", "learning_rate**2", ("training_step",),
                            {"learning_rate": 0.1}),
    "AIS mean of log weights": ("log Z estimate", None, ("log_partition_estimate",), {}),
}


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_each_planted_slip_fails_the_check_it_should(bug):
    check, cause, names, options = PLANTED[bug]
    provided = everything(bug, k=options.get("cd_k", 1))
    # the slip's own function and a correct one beside it: only the slip's check fails
    correct = "free_energy" if "free_energy" not in names else "prob_h_given_v"
    report = testing.check_implementation(
        model=MODEL, data=DATA, **options, **{n: provided[n] for n in names},
        **{correct: everything()[correct]})
    assert report[check].verdict == "fail", str(report)
    assert [r.check for r in report.failures] == [check]
    if cause is not None:
        assert cause in report[check].cause, report[check].message
    assert report[check].message.startswith(check)


def test_the_softplus_overflow_fails_the_free_energy_and_is_named():
    big = (100 * W, B, C)
    impl = NumpyRBM(*big, bug="softplus overflow")
    report = testing.check_implementation(model=big, free_energy=impl.free_energy)
    assert report["free energy"].verdict == "fail"
    assert report["free energy"].cause == "non-finite values"
    assert "overflow" in report["free energy"].message


def test_the_persistent_chains_reset_on_a_short_batch_fail():
    """On the setting of test_testing_new_checks (caught there on ten seeds of ten)."""
    m = RBM.random(4, 4, scale=1.0, bias_scale=1.0, rng=3)
    nine = np.random.default_rng(1).integers(0, 2, size=(9, 4)).astype(float)
    chains = np.random.default_rng(2).integers(0, 2, size=(6, 4)).astype(float)
    pcd = PersistentCD(m.W, m.b, m.c, chains, bug="chains reset on short batch")
    report = testing.check_implementation(model=m, data=nine, batch_size=6,
                                          persistent_gradient=pcd.gradient,
                                          chains=lambda: pcd.chains)
    assert report["persistent estimator"].verdict == "fail"
    assert report["persistent estimator"].cause == "the chains restarted at the batch"


def test_an_adapter_object_and_keywords_combine():
    impl = NumpyRBM(W, B, C, bug="missing hidden bias")
    report = testing.check_implementation(impl, log_likelihood=None, gibbs_step=None,
                                          sample_h_given_v=None, sample_v_given_h=None)
    assert [r.check for r in report.rows] == ["conditionals", "free energy", "log Z"]
    assert report["conditionals"].verdict == "fail"  # the model came from impl.parameters
    fixed = testing.check_implementation(
        impl, prob_h_given_v=NumpyRBM(W, B, C).prob_h_given_v, log_likelihood=None,
        gibbs_step=None, sample_h_given_v=None, sample_v_given_h=None)
    assert fixed.passed, str(fixed)
    mapping = testing.check_implementation({"free_energy": impl.free_energy}, MODEL)
    assert [r.check for r in mapping.rows] == ["free energy"] and mapping.passed


def test_float32_loosens_the_deterministic_tolerances():
    f32 = lambda v: NumpyRBM(W, B, C).free_energy(v).astype(np.float32)  # noqa: E731
    assert not testing.check_implementation(model=MODEL, free_energy=f32).passed
    assert testing.check_implementation(model=MODEL, free_energy=f32, dtype="float32").passed


@pytest.mark.parametrize("kwargs, error, words", [
    ({"free_energy": 3.0}, TypeError, "free_energy must be callable"),
    ({"free_enrgy": len}, TypeError, "unknown keyword"),
    ({}, ValueError, "nothing to check"),
    ({"training_step": len}, ValueError, "learning_rate"),
    ({"chains": len}, ValueError, "chains comes with one of"),
    ({"free_energy": len, "dtype": "float16"}, ValueError, "dtype"),
    ({"free_energy": len, "seed": -1}, ValueError, "seed"),
    ({"free_energy": len, "alpha": 2.0}, ValueError, "alpha"),
    ({"free_energy": len, "cd_k": 0}, ValueError, "cd_k"),
])
def test_usage_errors_are_type_or_value_errors(kwargs, error, words):
    with pytest.raises(error, match=words):
        testing.check_implementation(model=MODEL, **kwargs)


def test_a_model_is_needed():
    with pytest.raises(ValueError, match="model is needed"):
        testing.check_implementation(free_energy=len)
    with pytest.raises(TypeError, match="model must be"):
        testing.check_implementation(model="W", free_energy=len)


def test_an_exception_in_the_code_under_test_is_a_failed_row():
    def broken(v):
        raise RuntimeError("boom")
    report = testing.check_implementation(model=MODEL, free_energy=broken)
    assert report["free energy"].verdict == "fail"
    assert "RuntimeError" in report["free energy"].cause


_CORRECT = NumpyRBM(W, B, C)


@testing.parametrize_with_checks(model=MODEL, prob_h_given_v=_CORRECT.prob_h_given_v,
                                 free_energy=_CORRECT.free_energy, energy=energy_of(W, B, C))
def test_parametrize_with_checks_yields_one_test_per_check(check):
    result = check()
    assert isinstance(result, testing.CheckResult)


def test_parametrize_with_checks_names_the_tests_and_fails_with_the_message():
    mark = testing.parametrize_with_checks(
        model=MODEL, free_energy=NumpyRBM(W, B, C).free_energy,
        prob_h_given_v=NumpyRBM(W, B, C, bug="missing hidden bias").prob_h_given_v)
    assert mark.args[0] == "check"
    assert mark.kwargs["ids"] == ["conditionals", "free-energy"]
    conditionals, free_energy = mark.args[1]
    with pytest.raises(testing.CheckFailed, match="no hidden bias"):
        conditionals()
    free_energy()


# -- the joint energy and the free energy built from it ---------------------------------------

@pytest.mark.parametrize("shape", [(3, 2), (2, 4), (3, 3)])
def test_the_free_energy_from_the_energy_is_exact_over_the_smaller_layer(shape):
    m = RBM.random(*shape, scale=1.5, bias_scale=1.0, rng=4)
    f = testing.free_energy_from_energy(energy_of(m.W, m.b, m.c), m)
    assert f.over == ("hidden" if shape[1] <= shape[0] else "visible")
    X = testing.as_model(m if f.over == "hidden" else m.transpose()).visible.states(
        0, 2 ** (shape[0] if f.over == "hidden" else shape[1]))
    exact = m.free_energy(X) if f.over == "hidden" else m.free_energy_hidden(X)
    np.testing.assert_allclose(f(X), exact, rtol=1e-12, atol=1e-12)
    g = testing.free_energy_from_energy(energy_of(m.W, m.b, m.c), m, over="hidden")
    V = m.visible.states(0, 2 ** shape[0])
    np.testing.assert_allclose(g(V), m.free_energy(V), rtol=1e-12, atol=1e-12)


def test_the_suite_checks_the_free_energy_of_h_when_h_is_larger():
    m = RBM.random(2, 4, scale=1.0, bias_scale=1.0, rng=2)
    good = testing.check_implementation(model=m, energy=energy_of(m.W, m.b, m.c))
    assert good.passed, str(good)
    assert "(of h)" in good["free energy from your energy"].message
    bad = testing.check_implementation(model=m, energy=energy_of(m.W, m.b, 2 * m.c))
    assert [r.check for r in bad.failures] == ["joint energy", "free energy from your energy"]
    assert bad["joint energy"].cause == "the energy of the model with doubled hidden bias"


@pytest.mark.parametrize("wrong, slip", [
    (lambda W, b, c: (lambda v, h: -energy_of(W, b, c)(v, h)), "-E"),
    (lambda W, b, c: energy_of(-W, b, c), "the energy of the model with W negated"),
    (lambda W, b, c: energy_of(W, 0 * b, c), "the energy of the model with no visible bias"),
    (lambda W, b, c: energy_of(W.T, b, c), "the energy of the model with W transposed"),
    (lambda W, b, c: (lambda v, h: energy_of(W, b, c)(v, h) + 2.5), "E plus a constant"),
])
def test_the_joint_energy_check_names_each_slip(wrong, slip):
    with pytest.raises(testing.CheckFailed) as failure:
        testing.check_joint_energy(wrong(W, B, C), MODEL)
    assert failure.value.slip == slip


def test_the_joint_energy_check_passes_correct_code_and_a_constant_when_allowed():
    result = testing.check_joint_energy(energy_of(W, B, C), MODEL)
    assert result.n_tests == 64
    shifted = lambda v, h: energy_of(W, B, C)(v, h) + 2.5  # noqa: E731
    testing.check_joint_energy(shifted, MODEL, up_to_constant=True)
    with pytest.raises(testing.CheckFailed, match="No tested cause fits"):
        testing.check_joint_energy(lambda v, h: energy_of(W, B, C)(v, h) * 1.01, MODEL)


def test_the_joint_energy_check_works_on_spins_and_refuses_bad_input():
    from rbm.layers import Spin
    m = RBM(W, Spin(B), Spin(C))
    testing.check_joint_energy(lambda v, h: m.energy(v, h), m)
    with pytest.raises(TypeError, match="energy must be callable"):
        testing.check_joint_energy(None, MODEL)
    with pytest.raises(ValueError, match="over must be"):
        testing.free_energy_from_energy(energy_of(W, B, C), MODEL, over="both")


# -- issue 46, item 6: usage errors of check_pseudo_likelihood --------------------------------

def test_a_pseudo_likelihood_of_the_wrong_shape_is_a_value_error_not_a_failed_check():
    impl = NumpyRBM(W, B, C)

    def batch_mean(data, rng):  # one number, as learnergy's pseudo_likelihood returns it
        return impl.one_bit_pseudo_log_likelihood(data, rng).mean()
    with pytest.raises(ValueError, match=r"one value per row, shape \(5,\).*one number"):
        testing.check_pseudo_likelihood(batch_mean, MODEL, DATA, n_draws=100, rng=0)
    with pytest.raises(ValueError, match=r"returned shape \(5, 1\)"):
        testing.check_pseudo_likelihood(lambda d: impl.pseudo_log_likelihood(d)[:, None],
                                        MODEL, DATA)
    # the per-row estimate passes; a slip in it still fails as a check
    testing.check_pseudo_likelihood(impl.one_bit_pseudo_log_likelihood, MODEL, DATA,
                                    n_draws=100, rng=0)
    with pytest.raises(testing.CheckFailed):
        testing.check_pseudo_likelihood(lambda d, rng: 2 * impl.one_bit_pseudo_log_likelihood(
            d, rng), MODEL, DATA, n_draws=100, rng=0)


def test_a_persistent_trainer_is_checked_last_against_the_parameters_it_holds():
    """Its parameters move at every call: read from impl.parameters (here a property) before
    each one; a trainer that restarts its chains on the short batch fails there."""
    for bug, passed in ((None, True), ("chains reset on short batch", False)):
        pcd = PersistentCD(W, B, C, chains=np.zeros((3, 3)), bug=bug)
        report = testing.check_implementation(
            pcd, data=DATA, learning_rate=0.1, free_energy=NumpyRBM(W, B, C).free_energy,
            gradient=None,  # its gradient method advances the chains: not a CD-k estimate
            persistent_step=lambda d, rng, pcd=pcd: pcd.update(d, 0.1, rng),
            chains=lambda pcd=pcd: pcd.chains)
        assert [r.check for r in report.rows] == ["free energy", "persistent trainer"]
        assert report["persistent trainer"].verdict == ("pass" if passed else "fail"), bug
        if not passed:  # at lr 0.1 the restarted chains are told from the exact values with
            message = report["persistent trainer"].message  # little power: found, not named
            assert "batches of 2 rows" in message and "The full batches of 3 rows pass" in message


def test_a_random_pseudo_likelihood_estimate_is_checked_by_its_mean():
    one_bit = NumpyRBM(W, B, C).one_bit_pseudo_log_likelihood
    report = testing.check_implementation(model=MODEL, data=DATA,
                                          pseudo_likelihood_estimate=one_bit)
    assert report.passed and "draws" in report["pseudo-likelihood estimate"].power
    per_unit = testing.check_implementation(model=MODEL, data=DATA, convention="mean",
                                            pseudo_likelihood_estimate=one_bit)
    assert per_unit["pseudo-likelihood estimate"].cause == "the sum over units"


@pytest.mark.parametrize("kwargs, words", [
    ({"persistent_step": lambda d, rng: None, "chains": lambda: None, "learning_rate": 0.1},
     "needs impl.parameters"),
    ({"persistent_step": lambda d, rng: None, "persistent_gradient": lambda d, rng: None,
      "chains": lambda: None, "learning_rate": 0.1}, "one of persistent_gradient"),
    ({"persistent_step": lambda d, rng: None, "chains": lambda: None}, "learning_rate"),
    ({"free_energy": lambda v: None, "chain_layer": "both"}, "chain_layer")])
def test_the_persistent_trainer_s_usage_errors_are_value_errors(kwargs, words):
    with pytest.raises(ValueError, match=words):
        testing.check_implementation(model=MODEL, **kwargs)
