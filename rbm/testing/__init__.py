r"""Exact oracles for any RBM implementation: checks with a stated significance and power.

Each check takes *callables* from the implementation under test (NumPy
arrays in, NumPy arrays out) and the parameters they were built with, and
compares what they return with the exact values this package computes by
enumeration: the conditionals, the Gibbs transition matrix, the free
energy, :math:`\log Z`, the likelihood, the pseudo-likelihood, the exact
gradient and the exact expectation of the CD-k and persistent-CD
estimates.  A PyTorch or JAX implementation is wrapped by :func:`from_torch` or
:func:`from_jax` (tensors of a stated dtype and device in, ``.detach()`` and NumPy out, the
library's global generator seeded from the check's at every call), e.g.
``from_torch(my_rbm.p_h)``; :func:`from_numpy` seeds NumPy's global generator, and
:func:`free_energy_from_energy` builds a free energy from a joint energy.

**Parameters.**  ``model`` is an :class:`~rbm.model.RBM` or a tuple ``(W, b, c)``
(the binary model).  The convention is the book's,
:math:`E(v, h) = -b^\top v - c^\top h - v^\top W h` with ``W`` of shape
``(n_visible, n_hidden)``; scikit-learn's ``components_`` is ``W.T``.  A
model of ±1 spins is ``RBM(W, Spin(b), Spin(c))`` (:mod:`rbm.layers`): its
states are ±1, its conditional means are :math:`\tanh` of the inputs, and
every check below works on it unchanged (:func:`check_training_step` passes
the step the spin layers' biases as ``b`` and ``c``).  Other layers (Potts, Gaussian,
ReLU) are refused with a ValueError naming the layer: their statistics are
not the units themselves.  The exact functions enumerate states, so models
are small: the checks refuse more than ``MAX_BITS`` units in a layer.

**Conventions.**  The free energy is :math:`F(v) = -\log\sum_h e^{-E(v,h)}`
with no additive constant, so :math:`\log Z = \log\sum_v e^{-F(v)}`
exactly; an implementation whose energy carries a constant passes
:func:`check_free_energy` with ``up_to_constant=True``, and its
:math:`\log Z` is off by minus that constant.  The log-likelihood is per
row, :math:`\log p(v) = -F(v) - \log Z` (a callable that returns one
number is compared with the mean over the rows).  The pseudo-log-likelihood
of a row is :math:`\sum_i \log p(v_i \mid v_{-i})`, the sum over units
(``convention="sum"``), or its mean over units (``"mean"``).

**Statistics.**  Frequencies of sampled states are compared with their
exact probabilities by exact two-sided binomial tests; means of draws (of
a gradient estimate, of a stochastic score) by two-sided t-tests on the
draws.  Every check runs one test per entry and holds its family-wise
false-alarm rate at ``alpha`` by Bonferroni's correction: exactly for the
binomial tests; for the t-tests only approximately (Student's quantiles
are exact for normal draws; on discrete draws their level can be above
``alpha``: :func:`t_test_level` computes it).  The t-tests therefore refuse
fewer than ``MIN_MEAN_DRAWS`` draws, and refuse an entry whose draws are
all equal but differ from its exact value (its standard error is 0, so
no t statistic exists); draws identical at every call fail, naming a
random generator that does not advance.  Its power is reported as the
smallest error in any single entry that it detects with probability
``power`` (0.99 by default): exactly for the binomial tests
(:func:`binomial_power`) at a probability of 1/2 (not quite the worst
case of a discrete test: :func:`binomial_power` takes the probabilities
to minimise over), by the normal approximation for the t-tests;
:func:`binomial_draws_needed` and :func:`draws_needed` give the number of
draws for a stated power against a stated error.

**Results.**  A check that holds prints a one-line verdict
(:func:`rbm.checks.verdict`) and returns a :class:`CheckResult`.  A check
that fails raises :class:`CheckFailed`, an :class:`AssertionError` whose
message names the worst entries, their difference from the exact value
(and for draws, in standard errors), and a cause only where the values
were tested against it.  Probes run first: the code is called twice on the
same input (a random function, e.g. dropout masks from a global
generator), the worst rows are computed alone (rows not independent, e.g.
a normalisation over the batch), and samplers and estimators are called
twice with generators in the same state.  Then a known mistake (the
gradient's sign, CD-(k-1) in place of CD-k, a transposed ``W``, a missing
or doubled bias, two slips at once such as the sign times a sum over the
rows...) and, when none fits, a cause fitted to the values or draws (a
temperature, a factor, a weight decay on ``W`` or on every parameter, a softplus cut
at a threshold).  A
stochastic candidate is named only when the check's tests tell it from
every other tested cause, the exact values included, with the stated power
(exact for the binomial tests, normal for the t-tests); otherwise the
message says that no tested cause fits and lists what was tested.  Float32
code with no float64 counterpart passes ``dtype="float32"`` (4 float32
epsilons times the summed magnitudes of each entry's terms).  Float32 rounding
is named only when the values are float32 numbers, the same computation in
float64, passed as ``float64=``, holds the tolerance, *and* the float32
values are within 8 float32 spacings of it; a float64 counterpart that
fails while the float32 values are near exact is named instead, a shared
defect only when both agree and fail; without it rounding is called
untested.  So are an additive constant (named only when every state's
difference agrees within the tolerance), an overflow (only at inputs past
the overflow threshold),
a generator that does not advance (only when fresh generators give other
values).  An exception raised inside the code under test is reported as
such.  It runs inside pytest as it is.

**Beyond one call.**  :func:`check_stationary_law` tests the long-run
law of a sampler that carries state (persistent chains, the replicas of
parallel tempering) against the exact :math:`p(v)`;
:func:`check_log_partition_estimator` tests a stochastic estimate of
:math:`\log Z` (AIS and its kin) through :math:`\mathbb E[\hat Z]/Z = 1`;
:func:`check_persistent_estimator` drives a stateful estimator object
across calls, short batches included; :func:`centred_gradient` gives the
target of a centred estimator (Melchior et al. 2016).

**Stacks of RBMs.**  :func:`check_stationary_law` and
:func:`check_log_partition_estimator` also take an :class:`rbm.deep.DBM` or
:class:`rbm.deep.DBN` (exact :math:`p(v)` and :math:`\log Z` by
:mod:`rbm.deep`'s enumeration): a DBM's block-Gibbs sampler, AIS for a DBM;
:func:`check_gradient_estimator` takes a DBM with ``target="exact"``
(:func:`rbm.deep.gradient`, as a Gradient by :func:`network_gradient`) and
names the mean-field data term of Salakhutdinov & Hinton (2009) when an
estimate's mean matches it.
"""

from rbm.testing._shared import MAX_BITS, MIN_MEAN_DRAWS, SIZING_Z, as_model
from rbm.testing.power import (failure_rate, draws_needed, binomial_power, binomial_draws_needed,
                               t_test_level)
from rbm.testing.results import CheckResult, CheckFailed
from rbm.testing.gradients import expected_pcd_gradient, centred_gradient, network_gradient
from rbm.testing.samplers import check_sampler, check_gibbs_step, check_stationary_law
from rbm.testing.exact_values import (check_conditionals, check_free_energy, check_log_likelihood,
                                      check_pseudo_likelihood, check_joint_energy)
from rbm.testing.adapters import (free_energy_from_energy, from_jax, from_numpy, from_torch,
                                   per_row)
from rbm.testing.log_partition import check_log_partition, check_log_partition_estimator
from rbm.testing.estimators import (check_gradient_estimator, check_training_step,
                                    check_persistent_estimator)
from rbm.testing.suite import (PROVIDES, SuiteReport, SuiteRow, check_implementation,
                               parametrize_with_checks)

# Private names the package's tests read (float32 rounding is measured against the limit).
from rbm.testing._causes import (ROUNDING_SPACINGS as _ROUNDING_SPACINGS,
                                 float32_spacings as _float32_spacings,
                                 free_energy_terms as _free_energy_terms)

__all__ = ["MAX_BITS", "MIN_MEAN_DRAWS", "SIZING_Z", "CheckResult", "CheckFailed", "as_model",
           "failure_rate", "draws_needed", "binomial_power", "binomial_draws_needed",
           "t_test_level", "check_conditionals", "check_sampler", "check_gibbs_step",
           "check_stationary_law", "check_free_energy", "check_log_partition",
           "check_log_partition_estimator", "check_log_likelihood", "check_pseudo_likelihood",
           "expected_pcd_gradient", "centred_gradient", "network_gradient",
           "check_gradient_estimator", "check_training_step", "check_persistent_estimator",
           "check_joint_energy", "free_energy_from_energy", "from_torch", "from_jax",
           "from_numpy", "per_row", "PROVIDES", "SuiteReport", "SuiteRow",
           "check_implementation", "parametrize_with_checks"]

# The classes are rbm.testing's, wherever they are written: tracebacks and reprs say
# rbm.testing.CheckFailed, as before the split (the functions keep their modules, where doctest
# finds their examples).
for _cls in (CheckResult, CheckFailed, SuiteReport, SuiteRow):
    _cls.__module__ = __name__
del _cls
