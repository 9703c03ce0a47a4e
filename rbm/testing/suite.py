r"""The whole oracle in one call: every check that applies to what an implementation provides.

:func:`check_implementation` takes what the implementation provides (an object or mapping
whose attributes carry the names of ``PROVIDES``, or the same names as keywords), runs
every check that applies, and returns a :class:`SuiteReport`: one row per check (check,
verdict, power, cause).  :func:`parametrize_with_checks` gives pytest one test per check,
as scikit-learn's ``parametrize_with_checks`` does for estimators.
"""

import contextlib
import dataclasses
import io
from collections.abc import Mapping

import numpy as np

from rbm._validation import check_positive_float, check_positive_int
from rbm.testing._shared import as_model, valid_alpha, valid_power
from rbm.testing.adapters import free_energy_from_energy
from rbm.testing.estimators import (check_gradient_estimator, check_persistent_estimator,
                                    check_training_step)
from rbm.testing.exact_values import (check_conditionals, check_free_energy, check_joint_energy,
                                      check_log_likelihood, check_pseudo_likelihood)
from rbm.testing.log_partition import check_log_partition, check_log_partition_estimator
from rbm.testing.results import CheckFailed
from rbm.testing.samplers import check_gibbs_step, check_sampler, check_stationary_law

#: What an implementation may provide, by name: the call the checks make.
PROVIDES = {
    "prob_h_given_v": "f(v) -> E[h | v], rows",
    "prob_v_given_h": "f(h) -> E[v | h], rows",
    "energy": "f(v, h) -> E(v, h), one per row",
    "free_energy": "f(v) -> F(v), one per row",
    "log_partition": "f() -> log Z",
    "log_likelihood": "f(data) -> log p(v) per row, or their mean",
    "pseudo_likelihood": "f(data) -> the pseudo-log-likelihood per row",
    "pseudo_likelihood_estimate": "f(data, rng) -> a random estimate of the pseudo-log-"
                                  "likelihood per row whose mean is exact (one bit flipped)",
    "sample_h_given_v": "f(v, rng) -> h, rows",
    "sample_v_given_h": "f(h, rng) -> v, rows",
    "gibbs_step": "f(v, rng) -> v' after cd_k block Gibbs steps",
    "long_run_sampler": "f(n_chains, n_steps, rng) -> (n_chains, n_visible)",
    "log_partition_estimate": "f(rng) -> an estimate of log Z",
    "gradient": "f(data, rng) -> (dW, db, dc), the CD-k estimate (ascent direction)",
    "training_step": "f(W, b, c, data, rng) -> new (W, b, c), one CD-k update",
    "persistent_gradient": "f(batch, rng) -> (dW, db, dc), one call of a persistent "
                           "estimator (it advances its chains)",
    "persistent_step": "f(batch, rng) -> new (W, b, c), one call of a persistent trainer (it "
                       "advances its chains and its parameters, read by parameters())",
    "chains": "f() -> the persistent chains' states now (with persistent_gradient or "
              "persistent_step)",
}
DTYPES = ("float64", "float32")
#: Draws of a random pseudo-likelihood estimate (its t-tests need at least MIN_MEAN_DRAWS).
PSEUDO_LIKELIHOOD_DRAWS = 1000
# Deterministic tolerances by dtype: float32 adds FLOAT32_FACTOR float32 epsilons times the
# summed magnitudes of each entry's terms (rbm.testing._probes).
_TOLERANCE = {"float64": {}, "float32": {"dtype": "float32"}}


@dataclasses.dataclass(frozen=True)
class SuiteRow:
    """One check of a suite: its name, verdict (``"pass"`` or ``"fail"``), power, cause."""

    check: str
    verdict: str
    power: str
    cause: str
    message: str
    seed: object


@dataclasses.dataclass(frozen=True)
class SuiteReport:
    """The table of :func:`check_implementation`: one :class:`SuiteRow` per check run.

    Attributes
    ----------
    rows : tuple of SuiteRow
    not_run : tuple of (str, str)
        The checks that did not apply, and what they need.
    """

    rows: tuple
    not_run: tuple

    @property
    def passed(self):
        """Whether every check that ran passed."""
        return all(row.verdict == "pass" for row in self.rows)

    @property
    def failures(self):
        """The rows that failed."""
        return tuple(row for row in self.rows if row.verdict != "pass")

    def __getitem__(self, check):
        for row in self.rows:
            if row.check == check:
                return row
        raise KeyError(f"no check named {check!r} ran; ran: {[r.check for r in self.rows]}")

    def __str__(self):
        width = max(len(r.check) for r in self.rows)
        lines = [f"{'check':<{width}}  verdict  power; cause"]
        for r in self.rows:
            lines.append(f"{r.check:<{width}}  {r.verdict:<7}  {r.power}"
                         + (f"; {r.cause}" if r.cause else ""))
        if self.not_run:
            lines.append("not run: " + "; ".join(f"{c} (needs {n})" for c, n in self.not_run))
        return "\n".join(lines)


@dataclasses.dataclass(frozen=True)
class PlannedCheck:
    """A check ready to run: ``run()`` returns a CheckResult or raises CheckFailed."""

    name: str
    run: object
    seed: object

    def __call__(self):
        return self.run()


def _provided(impl, given):
    """The callables provided, by name: `impl`'s attributes (or keys), then the keywords."""
    unknown = sorted(set(given) - set(PROVIDES))
    if unknown:
        raise TypeError(f"unknown keyword(s) {unknown}; an implementation provides any of "
                        f"{sorted(PROVIDES)}")
    found = {}
    if impl is not None:
        for name in PROVIDES:
            f = impl.get(name) if isinstance(impl, Mapping) else getattr(impl, name, None)
            if f is not None:
                found[name] = f
    found.update(given)  # a keyword None leaves out what impl provides under that name
    found = {k: v for k, v in found.items() if v is not None}
    for name, f in found.items():
        if not callable(f):
            raise TypeError(f"{name} must be callable ({PROVIDES[name]}), got "
                            f"{type(f).__name__}")
    return found


def _parameters_of(impl):
    """`impl`'s ``parameters`` (an attribute, a method or a key), or None."""
    if impl is None:
        return None
    return impl.get("parameters") if isinstance(impl, Mapping) else getattr(impl, "parameters",
                                                                            None)


def _model_of(impl, model):
    if model is None:
        params = _parameters_of(impl)
        if params is None:
            raise ValueError("model is needed: an RBM or (W, b, c) with the parameters your "
                             "implementation holds (or an impl with a `parameters` attribute)")
        model = params() if callable(params) else params
    return as_model(model)


def plan_checks(impl=None, model=None, *, data=None, seed=0, cd_k=1, learning_rate=None,
                batch_size=None, chain_layer="visible", convention="sum", dtype="float64",
                alpha=1e-3, power=0.99, **provides):
    """The checks :func:`check_implementation` runs, each ready to call (see there).

    Returns
    -------
    list of PlannedCheck, list of (str, str)
        The checks that apply, and the ones that do not with what they need.
    """
    f = _provided(impl, provides)
    if not f:
        raise ValueError(f"nothing to check: provide any of {sorted(PROVIDES)}, as keywords "
                         "or as attributes of impl")
    model = _model_of(impl, model)
    alpha, power = valid_alpha(alpha), valid_power(power)
    seed = check_positive_int(seed, "seed", minimum=0)
    cd_k = check_positive_int(cd_k, "cd_k")
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    tol = _TOLERANCE[dtype]
    if data is None:
        data = model.visible.states_at(
            np.random.default_rng([seed, 999]).integers(0, 2 ** model.n_visible, size=6))
    data = model.visible.check_states(data, "data", allow_1d=False)[0]
    for needs_rate in ("training_step", "persistent_step"):
        if needs_rate in f:
            if learning_rate is None:
                raise ValueError(f"learning_rate is needed to check {needs_rate}")
            learning_rate = check_positive_float(learning_rate, "learning_rate")
    persistent = [name for name in ("persistent_gradient", "persistent_step") if name in f]
    if bool(persistent) != ("chains" in f) or len(persistent) > 1:
        raise ValueError("chains comes with one of persistent_gradient and persistent_step: "
                         "the checks read the chains before every call")
    if "persistent_step" in f and _parameters_of(impl) is None:
        raise ValueError("persistent_step needs impl.parameters, the (W, b, c) the trainer "
                         "holds now (a method, or a property read anew before every call)")

    def parameters():
        held = _parameters_of(impl)
        return held() if callable(held) else held
    if chain_layer not in ("visible", "hidden"):
        raise ValueError(f"chain_layer must be 'visible' or 'hidden', got {chain_layer!r}")
    if batch_size is None:
        batch_size = max(1, (2 * len(data)) // 3)
    batch_size = check_positive_int(batch_size, "batch_size")

    stochastic = dict(alpha=alpha, power=power)
    catalogue = [  # (name, needs, run(rng)); the order fixes each check's seed
        ("conditionals", ("prob_h_given_v", "prob_v_given_h"), lambda rng: check_conditionals(
            model, prob_h_given_v=f.get("prob_h_given_v"),
            prob_v_given_h=f.get("prob_v_given_h"), **tol)),
        ("joint energy", ("energy",), lambda rng: check_joint_energy(f["energy"], model, **tol)),
        ("free energy", ("free_energy",), lambda rng: check_free_energy(
            f["free_energy"], model, **tol)),
        ("free energy from your energy", ("energy",), lambda rng: _free_from_energy(
            f["energy"], model, tol)),
        ("log Z", ("log_partition",), lambda rng: check_log_partition(
            f["log_partition"], model, **tol)),
        ("log-likelihood", ("log_likelihood",), lambda rng: check_log_likelihood(
            f["log_likelihood"], model, data, **tol)),
        ("pseudo-likelihood", ("pseudo_likelihood",), lambda rng: check_pseudo_likelihood(
            f["pseudo_likelihood"], model, data, convention=convention, **tol)),
        ("sampler of h | v", ("sample_h_given_v",), lambda rng: check_sampler(
            f["sample_h_given_v"], model, given="visible", rng=rng, name="sampler of h | v",
            **stochastic)),
        ("sampler of v | h", ("sample_v_given_h",), lambda rng: check_sampler(
            f["sample_v_given_h"], model, given="hidden", rng=rng, name="sampler of v | h",
            **stochastic)),
        ("Gibbs step", ("gibbs_step",), lambda rng: check_gibbs_step(
            f["gibbs_step"], model, k=cd_k, rng=rng, **stochastic)),
        ("stationary law", ("long_run_sampler",), lambda rng: check_stationary_law(
            f["long_run_sampler"], model, rng=rng, **stochastic)),
        ("log Z estimate", ("log_partition_estimate",), lambda rng: check_log_partition_estimator(
            f["log_partition_estimate"], model, rng=rng, **stochastic)),
        ("gradient estimate", ("gradient",), lambda rng: check_gradient_estimator(
            f["gradient"], model, data, target=cd_k, rng=rng, **stochastic)),
        ("training step", ("training_step",), lambda rng: check_training_step(
            f["training_step"], model, data, learning_rate=learning_rate, target=cd_k, rng=rng,
            **stochastic)),
        ("persistent estimator", ("persistent_gradient",),
         lambda rng: check_persistent_estimator(
             f["persistent_gradient"], f["chains"], model, data, batch_size=batch_size, k=cd_k,
             chain_layer=chain_layer, rng=rng, **stochastic)),
        # added after the others, so that their seeds [seed, i] stay as they were
        ("pseudo-likelihood estimate", ("pseudo_likelihood_estimate",),
         lambda rng: check_pseudo_likelihood(
             f["pseudo_likelihood_estimate"], model, data, convention=convention,
             n_draws=PSEUDO_LIKELIHOOD_DRAWS, alpha=alpha, rng=rng,
             name="pseudo-likelihood estimate")),
        # last: the trainer's parameters move, and no check after it reads them
        ("persistent trainer", ("persistent_step",), lambda rng: check_persistent_estimator(
            f["persistent_step"], f["chains"], model, data, batch_size=batch_size, k=cd_k,
            chain_layer=chain_layer, parameters=parameters, learning_rate=learning_rate,
            rng=rng, name="persistent trainer", **stochastic)),
    ]
    planned, not_run = [], []
    for index, (name, needs, run) in enumerate(catalogue):
        if any(n in f for n in needs):
            check_seed = [seed, index]
            planned.append(PlannedCheck(name, _seeded(run, check_seed), check_seed))
        else:
            not_run.append((name, " or ".join(needs)))
    return planned, not_run


def _seeded(run, check_seed):
    return lambda: run(np.random.default_rng(check_seed))


def _free_from_energy(energy, model, tol):
    """check_free_energy on the free energy built from `energy` over the smaller layer."""
    f = free_energy_from_energy(energy, model)
    target = model if f.over == "hidden" else model.transpose()
    name = "free energy from your energy" + ("" if f.over == "hidden" else " (of h)")
    return check_free_energy(f, target, name=name, **tol)


def _power_text(result, alpha, dtype="float64"):
    if result.n_draws:
        return (f"an error of {result.detectable:.3g} in one entry caught with the stated "
                f"power; {result.n_draws} draws, {result.n_tests} tests, alpha {alpha:g}")
    allowance = " + float32 rounding of the terms" if dtype == "float32" else ""
    return f"exact values, {result.n_tests} entries within {result.detectable:g}{allowance}"


def check_implementation(impl=None, model=None, *, data=None, seed=0, cd_k=1,
                         learning_rate=None, batch_size=None, chain_layer="visible",
                         convention="sum", dtype="float64", alpha=1e-3, power=0.99,
                         verbose=False, **provides):
    r"""Run every check that applies to what an implementation provides; return the table.

    Parameters
    ----------
    impl : object or dict, optional
        Anything whose attributes (or keys) carry names of
        ``rbm.testing.PROVIDES`` (a dict: name -> what it computes),
        e.g. a small adapter class around a library's model; the keywords
        below override them (``None`` leaves one out).
    model : RBM or tuple, optional
        The parameters the implementation holds: an RBM of {0,1} or ±1
        layers, or ``(W, b, c)``; by default ``impl.parameters`` (an
        attribute or a method).
    data : array_like of shape (n_samples, n_visible), optional
        For the likelihoods, gradients and training steps; by default 6
        rows drawn uniformly with `seed`.
    seed : int, default 0
        Check number ``i`` (in the order of the table) is given the
        generator ``numpy.random.default_rng([seed, i])``: adding or removing
        a provided function does not change another check's draws.
    cd_k : int, default 1
        The ``k`` of the Gibbs step, the gradient estimate, the training
        step and the persistent estimator.
    learning_rate : float, optional
        Needed with ``training_step`` and ``persistent_step``.
    batch_size : int, optional
        For ``persistent_gradient`` and ``persistent_step``; by default two
        thirds of the rows (so that a pass ends with a short batch).
    chain_layer : {"visible", "hidden"}
        The layer of the persistent chains' states.
    convention : {"sum", "mean"}
        Of ``pseudo_likelihood`` and ``pseudo_likelihood_estimate``
        (``PSEUDO_LIKELIHOOD_DRAWS`` draws).
    dtype : {"float64", "float32"}
        ``"float32"`` adds to the deterministic tolerances 4 float32 epsilons
        times the summed magnitudes of each entry's terms (``dtype="float32"``
        of :func:`check_free_energy`), which correct float32 code holds near
        :math:`F = 0` and with large weights alike.
    alpha, power : float
        Family-wise level of each statistical check, and the power its
        stated detectable error refers to.
    verbose : bool, default False
        Print each check's verdict or failure as it runs.
    **provides : callable
        Any name of ``PROVIDES``: ``prob_h_given_v``, ``prob_v_given_h``,
        ``energy``, ``free_energy``, ``log_partition``, ``log_likelihood``,
        ``pseudo_likelihood``, ``sample_h_given_v``, ``sample_v_given_h``,
        ``pseudo_likelihood_estimate``, ``gibbs_step``,
        ``long_run_sampler``, ``log_partition_estimate``, ``gradient``,
        ``training_step``, ``persistent_gradient`` or ``persistent_step``
        with ``chains``.  ``persistent_step`` (a trainer whose parameters
        move) also needs ``impl.parameters`` (a method, or a property), read
        before every call; its check runs last.

    Returns
    -------
    SuiteReport
        One row per check run (check, verdict, power, cause); ``passed`` is
        True when every one passed.  A failure does not stop the others.

    Raises
    ------
    TypeError
        For an unknown keyword or a provided value that is not callable.
    ValueError
        For a bad argument (nothing provided, no model, a missing
        ``learning_rate``, ``chains`` without ``persistent_gradient``...).

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import check_implementation
    >>> from rbm.reference_impl import NumpyRBM
    >>> W = np.array([[1.0, -2.0], [0.5, 1.0]])
    >>> b, c = np.array([0.1, -0.3]), np.array([0.5, -1.0])
    >>> wrong = NumpyRBM(W, b, c, bug="missing hidden bias")
    >>> report = check_implementation(wrong, (W, b, c), log_likelihood=None)
    >>> [row.check for row in report.rows]  # doctest: +NORMALIZE_WHITESPACE
    ['conditionals', 'free energy', 'log Z', 'sampler of h | v',
     'sampler of v | h', 'Gibbs step']
    >>> report.passed, report["conditionals"].verdict
    (False, 'fail')
    >>> report["conditionals"].cause
    'the model with no hidden bias'
    >>> report["free energy"].verdict
    'pass'
    """
    planned, not_run = plan_checks(
        impl, model, data=data, seed=seed, cd_k=cd_k, learning_rate=learning_rate,
        batch_size=batch_size, chain_layer=chain_layer, convention=convention, dtype=dtype,
        alpha=alpha, power=power, **provides)
    rows = []
    for check in planned:
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                result = check()
        except CheckFailed as failure:
            message = str(failure)
            draws = (f"{failure.n_draws} draws, {failure.n_tests} tests, alpha {alpha:g}"
                     if failure.n_draws else f"exact values, {failure.n_tests} entries")
            cause = failure.slip or "no tested cause fits (see the message)"
            rows.append(SuiteRow(check.name, "fail", draws, cause, message, check.seed))
        else:
            message = out.getvalue().strip()
            rows.append(SuiteRow(check.name, "pass", _power_text(result, alpha, dtype), "", message,
                                 check.seed))
        if verbose:
            print(rows[-1].message)
    return SuiteReport(tuple(rows), tuple(not_run))


def parametrize_with_checks(impl=None, model=None, **options):
    """A pytest decorator giving one test per check of :func:`check_implementation`.

    Takes the arguments of :func:`check_implementation` (but `verbose`); the
    test receives each check as ``check`` and calls it: it prints its
    verdict, or fails with the check's message.

    Returns
    -------
    decorator
        ``pytest.mark.parametrize("check", ..., ids=<the checks' names>)``.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import parametrize_with_checks
    >>> from rbm.reference_impl import NumpyRBM
    >>> W, b, c = np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.1, -0.3]), np.zeros(2)
    >>> @parametrize_with_checks(NumpyRBM(W, b, c), (W, b, c))
    ... def test_my_rbm(check):
    ...     check()
    """
    import pytest  # only where pytest runs

    planned, _ = plan_checks(impl, model, **options)
    return pytest.mark.parametrize("check", planned,
                                   ids=[c.name.replace(" ", "-") for c in planned])
