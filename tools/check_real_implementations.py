"""Run ``rbm.testing`` on RBM implementations written by others, as a user would (issues 38, 46).

Eight implementations: scikit-learn's ``BernoulliRBM`` (requirements.txt), ``boltzmannclean``
(NumPy) and ``rbms`` (PyTorch), pinned in tools/requirements-real-implementations.txt;
``learnergy`` and ``kaiwu-torch-plugin`` (PyTorch), ``paysage`` (NumPy, float32) and ``pydbm``
(Cython), pinned in tools/requirements-real-implementations-nodeps.txt; and a small RBM
written here in JAX (jax, pinned there too).  Each gets an adapter written with
``rbm.testing``'s helpers (``from_torch``, ``from_jax``, ``from_numpy``) that returns what
``check_implementation`` takes (its lines are counted and cached), and is checked by one call
on the test model of chapters/checking_an_implementation (4 x 4, weights and biases of scale
1, seed 3; six rows, seed 1): the rows marked ``one_call``.  A few rows more check copies of
the model (weights 40 times larger, hidden biases raised), float32 runs and other options of
the library.  Every failure is classified -- a defect of the library, a convention
difference, or a limitation of the oracle -- with evidence computed here by hand, in NumPy,
without ``rbm.exact`` or ``rbm.testing``.

Writes chapters/data/real_implementations.json.  Run with ``make real-implementations``:
the checks take about 1.5 CPU minutes (6.5 min wall on a loaded two-core machine); the first
install also builds pydbm from its sdist, about 9 CPU minutes (pip caches the wheel).
tests/test_real_implementations_cache.py re-derives the scikit-learn rows, the new libraries'
defects without them, and every row where the library is installed.
"""

import contextlib
import functools
import importlib.metadata
import inspect
import io
import itertools
import json
import pathlib
import sys

import numpy as np
import sklearn.impute

import rbm
from rbm import testing

OUT = pathlib.Path(__file__).resolve().parent.parent / "chapters" / "data" / "real_implementations.json"

MODEL = rbm.RBM.random(4, 4, scale=1.0, bias_scale=1.0, rng=3)
W, B, C = MODEL.W, MODEL.b, MODEL.c
BIG = rbm.RBM(40 * W, B, C)
SHIFTED = rbm.RBM(W, B, C + 10.0)
DATA = np.random.default_rng(1).integers(0, 2, size=(6, 4)).astype(float)
STATES = np.array(list(itertools.product([0.0, 1.0], repeat=4)))


def by_hand_free_energy(v, W, b, c):
    """F(v) = -b.v - sum_j log(1 + exp(c_j + v.W_j)), per row, in NumPy."""
    return -v @ b - np.logaddexp(0.0, v @ W + c).sum(axis=1)


def run(check, *args, **kwargs):
    """Run one check; its verdict or failure message, and whether it held."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            result = check(*args, **kwargs)
    except testing.CheckFailed as failure:
        z = float(failure.z)
        return {"passed": False, "message": str(failure).strip(), "entry": failure.entry,
                "found": failure.found, "expected": failure.expected,
                "z": z if np.isfinite(z) else None, "n_tests": int(failure.n_tests),
                "n_draws": int(failure.n_draws), "slip": failure.slip}
    smallest_p = float(result.smallest_p)  # the worst entry's exact p-value (binomial checks)
    return {"passed": True, "message": out.getvalue().strip(),
            "largest_z": float(result.largest_z), "n_tests": int(result.n_tests),
            "n_draws": int(result.n_draws),
            "smallest_p": smallest_p if np.isfinite(smallest_p) else None}


# ---------------------------------------------------------------- the adapters
# Each returns what check_implementation takes (names of rbm.testing.PROVIDES), built with
# rbm.testing's helpers (from_torch, from_jax, from_numpy); each library is checked by one
# call, suite_rows, and by a few rows more on copies of the model or on its other options.
def wrap_sklearn(W, b, c, batch_size=4, h_chains=None):
    from sklearn.neural_network import BernoulliRBM
    sk = BernoulliRBM(n_components=W.shape[1], batch_size=batch_size, learning_rate=0.1)
    sk.components_ = W.T.copy()  # scikit-learn holds W transposed
    sk.intercept_visible_, sk.intercept_hidden_ = b.copy(), c.copy()
    sk.n_features_in_ = W.shape[0]
    sk.h_samples_ = np.zeros((batch_size, W.shape[1])) if h_chains is None else h_chains.copy()

    def seeded(f):  # it draws from its RandomState, seeded from the check's generator
        def call(x, rng):
            sk.random_state = sk.random_state_ = np.random.RandomState(rng.integers(2**32))
            return f(x)
        return call

    def parameters():
        return sk.components_.T.copy(), sk.intercept_visible_.copy(), sk.intercept_hidden_.copy()
    return dict(prob_h_given_v=sk.transform, gibbs_step=seeded(sk.gibbs),
                pseudo_likelihood_estimate=seeded(sk.score_samples), parameters=parameters,
                persistent_step=seeded(lambda d: (sk.partial_fit(d), parameters())[1]),
                chains=lambda: sk.h_samples_.copy())  # its chains hold hidden states


def wrap_boltzmannclean(W, b, c, dropout=0.5):
    import sklearn.preprocessing  # it imports Imputer, not in scikit-learn 1.9.1; its RBM
    sklearn.preprocessing.Imputer = sklearn.impute.SimpleImputer  # does not use it
    from boltzmannclean import RestrictedBoltzmannMachine
    bc = RestrictedBoltzmannMachine(n_hidden=W.shape[1])
    w, a, hb = W.copy(), b[None, :].copy(), c[None, :].copy()  # its a is b, its b is c

    def chain(n_chains, n_steps):  # fit's negative phase, with its default dropout
        v = np.random.random_sample((n_chains, len(b)))  # fit's start
        for _ in range(n_steps):
            v = bc._reconstruct(v, w, a, hb, dropout_fraction=dropout)
        return v
    return dict(prob_h_given_v=lambda v: bc._logistic(v, w, hb),
                prob_v_given_h=lambda h: bc._logistic(h, w.T, a),
                free_energy=lambda v: bc._free_energy(v, w, a, hb)[:, 0],
                sample_h_given_v=testing.from_numpy(
                    lambda v: bc._sample_hidden(v, w, hb, dropout_fraction=0.0)[1]),
                long_run_sampler=testing.from_numpy(chain))


def wrap_rbms(W, b, c, dtype="float64", n_chains=4):
    import torch
    from rbms.bernoulli_bernoulli.classes import BBRBM
    from rbms.partition_function.ais import compute_partition_function_ais as ais
    from rbms.partition_function.exact import compute_partition_function
    t = lambda x: torch.as_tensor(np.asarray(x), dtype=getattr(torch, dtype))  # noqa: E731
    params, states = BBRBM(t(W), t(b), t(c)), t(list(itertools.product([0, 1], repeat=len(b))))
    with torch.random.fork_rng():  # its persistent chains, kept across calls, seeded
        torch.manual_seed(0)
        chains = [params.init_chains(n_chains)]

    def gradient(d, persistent=False):  # CD-1 from the data, or PCD from its own chains
        params.init_grad()
        negative = params.sample_state(chains[0] if persistent else params.init_chains(
            0, start_v=d), n_steps=1)
        chains[0] = negative if persistent else chains[0]
        params.compute_gradient(params.init_chains(0, start_v=d), negative, centered=False)
        return [p.grad.clone() for p in params.parameters()]
    f = functools.partial(testing.from_torch, dtype=dtype)
    return dict(prob_h_given_v=f(lambda v: params.sample_hiddens({"visible": v})["hidden_mag"]),
                prob_v_given_h=f(lambda h: params.sample_visibles({"hidden": h})["visible_mag"]),
                free_energy=f(params.compute_energy_visibles), gradient=f(gradient),
                log_partition=f(lambda: compute_partition_function(params, states)),
                gibbs_step=f(lambda v: params.sample_state(params.init_chains(
                    0, start_v=v), n_steps=1)["visible"]),
                log_partition_estimate=f(lambda: ais(num_chains=10, num_beta=20, params=params)),
                persistent_gradient=f(lambda d: gradient(d, persistent=True)),
                chains=lambda: chains[0]["visible"].numpy().astype(float), object=params)


def jax_rbm(W, b, c):
    """A small RBM written in JAX, as a user would write it: the code under test."""
    import jax
    import jax.numpy as jnp
    W, b, c = jnp.asarray(W), jnp.asarray(b), jnp.asarray(c)

    def free_energy(v):
        return -v @ b - jnp.logaddexp(0.0, v @ W + c).sum(axis=-1)

    def p_h(v):
        return jax.nn.sigmoid(v @ W + c)

    def p_v(h):
        return jax.nn.sigmoid(h @ W.T + b)

    def gibbs(key, v):
        key_h, key_v = jax.random.split(key)
        h = jax.random.bernoulli(key_h, p_h(v)).astype(v.dtype)
        return jax.random.bernoulli(key_v, p_v(h)).astype(v.dtype)

    return {"free_energy": free_energy, "p_h": p_h, "p_v": p_v, "gibbs": gibbs}


def wrap_jax(W, b, c, x64=True):
    import jax
    with jax.enable_x64(x64):  # its parameters in float64, or in JAX's default float32
        code = jax_rbm(W, b, c)
    f = functools.partial(testing.from_jax, x64=x64)  # a JAX key from the check's generator
    return dict(free_energy=f(code["free_energy"]), prob_h_given_v=f(code["p_h"]),
                prob_v_given_h=f(code["p_v"]), gibbs_step=f(code["gibbs"]))


# ------------------------------------------- four more libraries, wrapped with rbm.testing's
# adapters (from_torch, from_numpy): each wrapper returns what check_implementation takes.
def wrap_learnergy(W, b, c, dtype="float64", cls="RBM", **options):
    import torch
    from learnergy.models import bernoulli
    model = getattr(bernoulli, cls)(len(b), len(c), **options).to(getattr(torch, dtype))
    for p, x in zip((model.W, model.a, model.b), (W, b, c)):  # its a is b, its b is c
        p.data = torch.as_tensor(x, dtype=getattr(torch, dtype))

    def gradient(v):  # fit's cost, mean F(data) - mean F(v_k), differentiated: minus ascent
        cost = model.energy(v).mean() - model.energy(model.gibbs_sampling(v)[4]).mean()
        return [-g for g in torch.autograd.grad(cost, (model.W, model.a, model.b))]
    f = functools.partial(testing.from_torch, dtype=dtype)
    return dict(prob_h_given_v=f(lambda v: model.hidden_sampling(v)[0]), free_energy=f(
        model.energy), sample_h_given_v=f(lambda v: model.hidden_sampling(v)[1]),
        prob_v_given_h=f(lambda h: model.visible_sampling(h)[0]), gradient=f(gradient),
        sample_v_given_h=f(lambda h: model.visible_sampling(h)[1]),
        gibbs_step=f(lambda v: model.gibbs_sampling(v)[4]))


def wrap_paysage(W, b, c):
    from paysage import layers, models, fit, samplers as ps
    from paysage.models.state import State
    m = models.BoltzmannMachine([layers.BernoulliLayer(len(b)), layers.BernoulliLayer(len(c))])
    m.layers[0].params.loc[:], m.layers[1].params.loc[:] = b, c
    m.connections[0].weights.params.matrix[:] = W
    hidden = lambda v: m.layers[1].conditional_mean(m._connected_rescaled_units(  # noqa: E731
        1, State.from_visible(v, m)), m._connected_weights(1))

    def gradient(v):  # its cd, with the trainer's samplers; it returns the descent direction
        g = fit.methods.cd(v, m, *(ps.SequentialMC(m, clamped=k, beta_std=0) for k in ([0], [])))
        return -g.weights[0][0].matrix, -g.layers[0][0].loc, -g.layers[1][0].loc
    return {"object": m, "gradient": testing.from_numpy(gradient), "prob_h_given_v": hidden,
            "energy": lambda v, h: m.joint_energy(State([v.astype("f"), h.astype("f")])),
            "gibbs_step": testing.from_numpy(lambda v: m.markov_chain(1, State.from_visible(
                v.astype("f"), m))[0])}


def wrap_kaiwu(W, b, c, dtype="float32"):
    import torch
    from kaiwu.torch_plugin import RestrictedBoltzmannMachine as KaiwuRBM
    t, n = (lambda x: torch.as_tensor(x, dtype=getattr(torch, dtype))), len(b)
    m = KaiwuRBM(n, len(c), t(W), t(np.concatenate([b, c])), device="cpu")
    hidden = lambda v, s=False: m.get_hidden(v, bernoulli=s)  # noqa: E731  (v, h) concatenated
    visible = lambda h, s=False: m.get_visible(h, bernoulli=s)  # noqa: E731

    def gradient(v):  # objective = mean E(data) - mean E(model): its negated gradient
        pos = hidden(v, True)
        m.zero_grad()
        m.objective(pos, hidden(visible(pos[:, n:], True)[:, :n], True)).backward()
        return -m.quadratic_coef.grad, -m.linear_bias.grad[:n], -m.linear_bias.grad[n:]
    f = functools.partial(testing.from_torch, dtype=dtype)
    return dict(prob_h_given_v=f(lambda v: hidden(v)[:, n:]), energy=f(lambda v, h: m(
        torch.cat([v, h], 1))), prob_v_given_h=f(lambda h: visible(h)[:, :n]), gradient=f(
        gradient), gibbs_step=f(lambda v: visible(hidden(v, True)[:, n:], True)[:, :n]))


def wrap_pydbm(W, b, c, unit=None, momentum=0.0, dropout=None, learning_rate=0.1):
    from pydbm.activation.logistic_function import LogisticFunction
    from pydbm.approximation.contrastive_divergence import ContrastiveDivergence as CD
    from pydbm.dbm.restricted_boltzmann_machines import RestrictedBoltzmannMachine as RBM
    from pydbm.optimization.optparams.sgd import SGD
    from pydbm.synapse.complete_bipartite_graph import CompleteBipartiteGraph
    unit = unit or LogisticFunction

    def step(W, b, c, data):  # one approximate_learning epoch on the whole batch
        g, opt = CompleteBipartiteGraph(), SGD(momentum=momentum)
        g.create_node(len(b), len(c), unit(), unit(), W.copy())
        g.visible_bias_arr, g.hidden_bias_arr = b.copy(), c.copy()
        if dropout is not None:  # None: OptParams' default, 0.5
            opt.dropout_rate = dropout
        rbm_ = RBM(g, learning_rate, approximate_interface=CD(opt_params=opt))
        rbm_.approximate_learning(data, training_count=1, batch_size=0)
        return g.weights_arr, g.visible_bias_arr, g.hidden_bias_arr
    return dict(prob_h_given_v=lambda v: unit().activate(v @ W + c), training_step=(
        testing.from_numpy(step)), prob_v_given_h=lambda h: unit().activate(h @ W.T + b))


def pydbm_logistic_by_hand(x):
    """pydbm's LogisticFunction.activate in NumPy (logistic_function.pyx:108-182): the whole
    array min-max normalised, then sigma(x - 1), then the outputs min-max normalised."""
    if x.max() != x.min():
        x = (x - x.min()) / (x.max() - x.min())
    a = 1.0 / (1.0 + np.exp(x.max() - x))
    return (a - a.min()) / (a.max() - a.min()) if a.max() != a.min() else a


def pydbm_bernoulli_unit():
    """A true Bernoulli unit, sigma(x) sampled from NumPy's global generator, in pydbm's
    interface: pydbm's CD machinery checked apart from its LogisticFunction."""
    from pydbm.activation.logistic_function import LogisticFunction

    class Bernoulli(LogisticFunction):
        def activate(self, x):
            return (np.random.random_sample(x.shape) < 1 / (1 + np.exp(-x))) * 1.0
    return Bernoulli


def pydbm_rows():
    rows = suite_rows(wrap_pydbm(W, B, C), learning_rate=0.1)
    p = wrap_pydbm(W, B, C)["prob_h_given_v"](STATES)
    by_hand = pydbm_logistic_by_hand(STATES @ W + C)
    for row in rows:
        if row["check"] == "conditionals":
            row.update(classification="defect of the library", evidence={
                "what": "LogisticFunction.activate min-max normalises the whole input array, "
                        "takes sigma(x - 1), and min-max normalises the output "
                        "(logistic_function.pyx:108-114, 116-123, 162, 165-182): one row's "
                        "values depend on the other rows; by hand in NumPy over the 16 states",
                "largest difference from the library, by hand": float(np.abs(p - by_hand).max()),
                "largest difference from sigma": float(np.abs(p - sigmoid(STATES @ W + C)).max()),
                "row 5 alone": pydbm_logistic_by_hand(STATES[5:6] @ W + C)[0].tolist(),
                "row 5 in the batch of 16": by_hand[5].tolist()})
        elif not row["passed"]:
            row.update(classification="defect of the library", evidence={
                "what": "its defaults: LogisticFunction (the row above), dropout 0.5 "
                        "(OptParams, opt_params.pyx:35) on the wake and sleep phases "
                        "(contrastive_divergence.pyx:198, 230), statistics summed over rows"})
    bernoulli = pydbm_bernoulli_unit()
    for what, options, seed in (
            ("momentum 0, dropout 0", {"dropout": 0.0}, 40),
            ("SGD(momentum=0.9), dropout 0", {"dropout": 0.0, "momentum": 0.9}, 41),
            ("momentum 0, dropout 0.5 (its default)", {}, 42)):
        step = wrap_pydbm(W, B, C, unit=bernoulli, **options)["training_step"]
        row = {"check": f"training step, a true Bernoulli unit, {what}", **run(
            testing.check_training_step, step, MODEL, DATA, learning_rate=0.1, target=1,
            rng=seed)}
        row.update(classification="defect of the library", evidence={"what": {
            "momentum 0, dropout 0": "contrastive_divergence.pyx:200-206 and 232-238 sum "
                                     "np.dot(v.T, h) and nansum over the rows and never divide",
            "SGD(momentum=0.9), dropout 0": "SGD.optimize subtracts lr * grad when momentum "
                                            "> 0 (sgd.pyx:71-76) and adds it when momentum = 0 "
                                            "(sgd.pyx:108-120); CD's grad is data - model",
            "momentum 0, dropout 0.5 (its default)": "OptParams' dropout_rate 0.5 "
                                                     "(opt_params.pyx:35) masks the hidden "
                                                     "activities (contrastive_divergence.pyx:"
                                                     "198, 230)"}[what]})
        rows.append(row)
    return rows


def paysage_tap_free_energy(m):
    """F(v) as metrics.TAPLogLikelihood computes its data term: -E_vis(v) + the sum over hidden
    units of log_partition_function(conditional_params(v)) (generator_metrics.py:937-941)."""
    from paysage.models.state import State

    def free_energy(v):
        s = State.from_visible(v.astype("f"), m)
        params = m.layers[1].conditional_params(m._connected_rescaled_units(1, s),
                                                m._connected_weights(1))
        log_z = m.layers[1].log_partition_function(params, np.zeros_like(params))
        return m.layers[0].energy(s[0]) - log_z.sum(axis=1)
    return free_energy


def paysage_persistent(m, n_chains, beta_std):
    """Its pcd with the trainer's samplers: the negative phase's chains persist across calls,
    at inverse temperatures drawn with standard deviation beta_std (0.6 by default, sgd.py:31)."""
    from paysage import fit, samplers as ps
    pos = ps.SequentialMC(m, clamped=[0], beta_std=0)
    neg = ps.SequentialMC.from_model(m, n_chains, beta_std=beta_std)

    def step(batch):
        g = fit.methods.pcd(batch.astype("f"), m, pos, neg)
        return -g.weights[0][0].matrix, -g.layers[0][0].loc, -g.layers[1][0].loc
    return {"persistent_gradient": testing.from_numpy(step),
            "chains": lambda: np.asarray(neg.state[0], dtype=float)}


def suite_rows(impl, model=MODEL, **options):
    """The one call: check_implementation's checks on the test model and its six rows, each
    run by `run` (its row keeps the numbers), marked ``one_call``."""
    planned, _ = testing.suite.plan_checks(impl, model, data=DATA, **options)
    return [{"check": check.name, "one_call": True, **run(check)} for check in planned]


def wb(model):
    return model.W, model.b, model.c


def hot(shift):
    return rbm.RBM(W, B, C + shift)


def learnergy_rows():
    rows = suite_rows(wrap_learnergy(W, B, C))
    model = hot(20.3)  # hidden inputs past 20, torch's Softplus threshold
    row = {"check": "free energy (energy), hidden biases + 20.3", **run(
        testing.check_free_energy, wrap_learnergy(*wb(model))["free_energy"], model)}
    inputs = STATES @ model.W + model.c
    dropped = np.where(inputs > 20, np.log1p(np.exp(-inputs)), 0.0).sum(axis=1)
    found = wrap_learnergy(*wb(model))["free_energy"](STATES)
    row.update(classification="defect of the library", evidence={
        "what": "energy() takes torch's nn.Softplus() (rbm.py:237), which returns x itself for "
                "x > 20 (its default threshold), leaving out log(1 + exp(-x)) per hidden unit; "
                "by hand in NumPy over the 16 states",
        "largest difference from F by hand": float(np.abs(
            found - by_hand_free_energy(STATES, *wb(model))).max()),
        "largest difference from F by hand less the dropped terms": float(np.abs(
            found - by_hand_free_energy(STATES, *wb(model)) - dropped).max()),
        "largest dropped term sum": float(dropped.max())})
    rows.append(row)
    for what, options, seed in (("DropoutRBM, dropout 0.5 (its default)", {"cls": "DropoutRBM"}, 30),
                                ("RBM(temperature=2)", {"temperature": 2.0}, 31)):
        impl = wrap_learnergy(W, B, C, **options)
        check = (testing.check_conditionals, MODEL) if "Dropout" in what else (
            testing.check_gibbs_step, impl["gibbs_step"], MODEL)
        kwargs = ({"prob_h_given_v": impl["prob_h_given_v"]} if "Dropout" in what
                  else {"rng": seed})
        row = {"check": f"{check[0].__name__.removeprefix('check_').replace('_', ' ')}, {what}",
               **run(*check, **kwargs)}
        row.update(classification="convention difference", evidence={"what": (
            "documented random dropout masks, drawn anew at every hidden_sampling call "
            "(dropout_rbm.py:91-105)" if "Dropout" in what else
            "a documented sampling temperature, used in the chain's steps "
            "(gibbs_sampling: visible_sampling(..., True), rbm.py:212-213)")})
        rows.append(row)
    return rows


def paysage_rows():
    rows = suite_rows(wrap_paysage(W, B, C), dtype="float32")
    for what, model in (("", MODEL), (", hidden biases + 10", hot(10.0))):
        m = wrap_paysage(*wb(model))["object"]
        tap = paysage_tap_free_energy(m)
        row = {"check": f"free energy as TAPLogLikelihood computes it{what}", **run(
            testing.check_free_energy, tap, model, dtype="float32")}
        doubled = rbm.RBM(model.W, model.b, 2 * model.c)
        row.update(classification="defect of the library", evidence={
            "what": "conditional_params already adds the hidden bias loc "
                    "(bernoulli_layer.py:439) and log_partition_function adds it again "
                    "(bernoulli_layer.py:136): softplus(vW + 2c); by hand in NumPy over the "
                    "16 states",
            "largest difference from F by hand": float(np.abs(
                tap(STATES) - by_hand_free_energy(STATES, *wb(model))).max()),
            "largest difference from F by hand with 2c": float(np.abs(
                tap(STATES) - by_hand_free_energy(STATES, *wb(doubled))).max())})
        rows.append(row)
    for beta_std, seed in ((0.0, 32), (0.6, 33)):
        np.random.seed(seed)  # its chains start from NumPy's global generator
        m = wrap_paysage(W, B, C)["object"]
        est = paysage_persistent(m, 6, beta_std)
        row = {"check": f"pcd's persistent chains across calls, beta_std {beta_std}"
                        + (" (the trainer's default)" if beta_std else ""), **run(
            testing.check_persistent_estimator, est["persistent_gradient"], est["chains"],
            MODEL, DATA, batch_size=3, n_passes=300, rng=seed)}
        if not row["passed"]:
            row.update(classification="convention difference", evidence={
                "what": "its negative chains run at random inverse temperatures, an "
                        "autoregressive Gamma process of standard deviation beta_std "
                        "(samplers.py:116-118, bernoulli_layer.py:441); their law is not p(v); "
                        "with beta_std 0 the same object passes (the row above)"})
        rows.append(row)
    return rows


def kaiwu_rows():
    rows = suite_rows(wrap_kaiwu(W, B, C), dtype="float32")
    k64 = wrap_kaiwu(W, B, C, dtype="float64")
    row = {"check": "conditionals of a float64 model (get_hidden, get_visible)", **run(
        testing.check_conditionals, MODEL, prob_h_given_v=k64["prob_h_given_v"],
        prob_v_given_h=k64["prob_v_given_h"])}
    found = k64["prob_h_given_v"](STATES)
    row.update(classification="defect of the library", evidence={
        "what": "get_hidden and get_visible write the probabilities into a buffer made by "
                "torch.zeros in the default dtype, float32 (restricted_boltzmann_machine.py:83 "
                "and 103), whatever the model's dtype",
        **float32_evidence({"E[h|v] by hand": (found, sigmoid(STATES @ W + C))})})
    rows.append(row)
    return rows


WRAPPERS = {"scikit-learn": wrap_sklearn, "boltzmannclean": wrap_boltzmannclean,
            "rbms": wrap_rbms, "jax": wrap_jax, "learnergy": wrap_learnergy,
            "paysage": wrap_paysage, "pydbm": wrap_pydbm, "kaiwu-torch-plugin": wrap_kaiwu}
DISTRIBUTIONS = {"scikit-learn": "scikit-learn", "boltzmannclean": "boltzmannclean",
                 "rbms": "rbms", "jax": "jax", "learnergy": "learnergy", "paysage": "paysage",
                 "pydbm": "pydbm", "kaiwu-torch-plugin": "kaiwu-torch-plugin"}
# The four libraries added by issue 46; the target for learnergy's and paysage's adapters: at
# most 15 lines.
NEW_LIBRARIES = ("learnergy", "paysage", "pydbm", "kaiwu-torch-plugin")


def code_lines(function):
    """Lines of a function's source, blank lines and comments excluded."""
    source = inspect.getsource(function).splitlines()
    return sum(1 for line in source if line.strip() and not line.strip().startswith("#"))


def wrapper_lines(library):
    """Lines of the library's wrapper, blank lines and comments excluded."""
    return code_lines(WRAPPERS[library])


# ---------------------------------------------------------------- the checks
def sklearn_one_step(h_chains):
    """partial_fit as one step from the hidden chains `h_chains` (a new object at every call):
    persistent CD's training step given the chains."""
    def step(W1, b1, c1, d, rng):
        return wrap_sklearn(W1, b1, c1, len(h_chains), h_chains)["persistent_step"](d, rng)
    return step


def sklearn_rows():
    """scikit-learn's rows: the one call (its own object across calls, batches of 4 rows and
    4 chains on 6 rows), then score_samples per feature and partial_fit as one step of
    persistent CD from given chains; each failure with its evidence by hand."""
    rows = suite_rows(wrap_sklearn(W, B, C), learning_rate=0.1, chain_layer="hidden")
    for row in rows:
        if row["check"] == "persistent trainer" and not row["passed"]:
            row.update(classification="defect of the library",
                       evidence=sklearn_short_batch_by_hand(((2, 4), (4, 4), (3, 3))))
    score = wrap_sklearn(W, B, C)["pseudo_likelihood_estimate"]
    per_unit = {"check": "score_samples as the pseudo-likelihood per feature", **run(
        testing.check_pseudo_likelihood, score, MODEL, DATA, convention="mean",
        n_draws=1000, rng=8)}
    per_unit.update(classification="convention difference", evidence=(
        "the same draws pass as the sum over features (the one call's row 'pseudo-likelihood "
        "estimate'): score_samples estimates n_features times the mean per feature"))
    rows.append(per_unit)
    h6 = np.random.default_rng(5).integers(0, 2, size=(6, 4)).astype(float)
    rows.append({"check": "partial_fit as one step of persistent CD (6 rows, 6 chains)", **run(
        testing.check_training_step, sklearn_one_step(h6), MODEL, DATA, learning_rate=0.1,
        target=testing.expected_pcd_gradient(MODEL, DATA, h6, chain_layer="hidden"),
        n_draws=500, rng=9)})
    h10 = np.random.default_rng(5).integers(0, 2, size=(10, 4)).astype(float)
    short = {"check": "partial_fit as one step of persistent CD (5 rows, 10 chains)", **run(
        testing.check_training_step, sklearn_one_step(h10), MODEL, DATA[:5],
        learning_rate=0.1,
        target=testing.expected_pcd_gradient(MODEL, DATA[:5], h10, chain_layer="hidden"),
        n_draws=500, rng=10)}
    short.update(classification="defect of the library", evidence=sklearn_short_batch_by_hand())
    rows.append(short)
    return rows


def sklearn_short_batch_by_hand(sizes=((5, 10), (10, 10), (12, 7))):
    """At W = 0 and zero biases, every p(h=1|v) is 1/2 for data and chains alike, so the
    exact expected PCD update of the hidden biases is 0; partial_fit's update of r rows with
    C chains is lr (r/2 - C/2) / r, deterministic.  Returned: the measured updates, for each
    (rows, chains) of `sizes`."""
    found = {}
    for rows, chains in sizes:
        step = sklearn_one_step(np.zeros((chains, 4)))
        _, _, c1 = step(np.zeros((4, 4)), np.zeros(4), np.zeros(4), np.ones((rows, 4)),
                        np.random.default_rng(0))
        found[f"{rows} rows, {chains} chains"] = {
            "hidden bias update": float(c1.mean()), "spread": float(np.ptp(c1)),
            "by hand lr (r - C) / (2 r)": 0.1 * (rows - chains) / (2 * rows),
            "persistent CD's expectation": 0.0}
    return {"what": "at W = 0 and zero biases p(h=1|v) = 1/2 everywhere, so persistent CD's "
                    "expected hidden-bias update is 0; partial_fit divides the chains' sum by "
                    "the batch's rows and updates by lr (r - C) / (2 r)",
            "values": found}


def boltzmannclean_rows():
    """Its one call (the free energy of a batch and the chain of fit fail), and its free
    energy called on one row at a time (testing.per_row) on the copy with weights x 40."""
    rows = suite_rows(wrap_boltzmannclean(W, B, C))
    found = wrap_boltzmannclean(W, B, C)["free_energy"](STATES)
    by_hand = by_hand_free_energy(STATES, W, B, C)
    summed = -STATES @ B - np.logaddexp(0.0, STATES @ W + C).sum()  # over every row
    F = by_hand_free_energy(STATES, W, B, C)
    mean_v = np.exp(-F - np.logaddexp.reduce(-F)) @ STATES  # E[v] by hand
    chain = {}
    for dropout in (0.5, 0.0):
        v = wrap_boltzmannclean(W, B, C, dropout)["long_run_sampler"](
            20000, 200, np.random.default_rng(19))
        chain[f"dropout {dropout}"] = {
            "long-run mean of v": v.mean(axis=0).tolist(),
            "largest difference from E[v]": float(np.abs(v.mean(axis=0) - mean_v).max()),
            "largest standard error": float((v.std(axis=0) / np.sqrt(len(v))).max())}
    evidence = {
        "free energy": ("defect of the library", {
            "what": "its log term sums softplus over all rows of the batch, not per row "
                    "(np.sum without axis): its value for row v is -b.v minus the softplus "
                    "terms of every row; by hand in NumPy over the 16 states",
            "largest difference from F by hand": float(np.abs(found - by_hand).max()),
            "largest difference from -b.v - sum over all rows": float(
                np.abs(found - summed).max()),
            "used by": "transform (imputation) stops when this value changes by less than "
                       "1 %"}),
        "stationary law": ("limitation of the oracle", {
            "what": "its chain (_reconstruct, dropout 0.5 as in fit) carries the probabilities "
                    "p(v=1|h), not sampled states, so the check of a stationary law, which "
                    "counts 0/1 states, cannot take it; by hand, the long-run mean of the "
                    "chain's v (20000 chains, 200 steps, seed 19) against E[v] by enumeration "
                    "in NumPy shows that the chain fit uses for the model term does not have "
                    "the model's law: a defect of the library the check cannot see",
            "E[v] by hand": mean_v.tolist(), **chain})}
    for row in rows:
        if not row["passed"] and row["check"] in evidence:
            kind, what = evidence[row["check"]]
            row.update(classification=kind, evidence=what)
    big = wrap_boltzmannclean(BIG.W, BIG.b, BIG.c)
    rows.append({"check": "free energy, one row per call (testing.per_row), weights x 40", **run(
        testing.check_free_energy, testing.per_row(big["free_energy"]), BIG)})
    return rows


def rbms_pcd(chains0, centered, normalised=False):
    """rbms' persistent-CD gradient from the chains `chains0` at every call (its default
    centring, or its training step fit_batch_pcd, which normalises the gradient)."""
    import torch
    from rbms.training.pcd import fit_batch_pcd
    params = wrap_rbms(W, B, C)["object"]

    def estimate(d, rng):
        torch.manual_seed(int(rng.integers(2**62)))
        params.init_grad()
        t = lambda x: torch.from_numpy(np.ascontiguousarray(x, dtype=np.float64))  # noqa: E731
        chains = params.init_chains(0, start_v=t(chains0))
        if normalised:  # its training step: the gradient divided by its norm
            fit_batch_pcd((t(d), torch.ones(len(d), dtype=torch.float64)), chains, params,
                          gibbs_steps=1, beta=1.0, centered=centered)
        else:
            chains = params.sample_state(chains, n_steps=1)
            params.compute_gradient(params.init_chains(0, start_v=t(d)), chains,
                                    centered=centered)
        return tuple(p.grad.numpy().copy() for p in params.parameters())
    return estimate


def rbms_tempering(model, betas):
    """rbms' pt_sampling loop: Gibbs steps at each beta, then swaps; its beta = 1 replica."""
    import torch
    from rbms.sampling.pt import swap_configurations
    params = wrap_rbms(model.W, model.b, model.c)["object"]

    def sample(n_chains, n_steps, rng):
        torch.manual_seed(int(rng.integers(2**62)))
        chains = [params.init_chains(n_chains) for _ in betas]
        for _ in range(n_steps):
            chains = [params.sample_state(ch, n_steps=1, beta=beta)
                      for ch, beta in zip(chains, betas)]
            chains = swap_configurations(chains, params, torch.tensor(betas))[0]
        return chains[-1]["visible"].numpy()
    return sample


def rbms_rows():
    """Its one call on the test model (conditionals, F, log Z, Gibbs step, AIS, CD-1, its
    persistent chains across calls), then its centred gradient, its training step, its
    tempering, and its free energy on the copies (weights x 40, hidden biases + 10) and in
    float32."""
    rows = suite_rows(wrap_rbms(W, B, C))
    chains0 = np.random.default_rng(5).integers(0, 2, size=(6, 4)).astype(float)
    pcd = testing.expected_pcd_gradient(MODEL, DATA, chains0, k=1)
    mu = np.clip(DATA.mean(axis=0), 1e-7, 1 - 1e-7)  # its offsets: the batch's means
    lam = MODEL.prob_h_given_v(DATA).mean(axis=0)
    rows.append({"check": "persistent-CD gradient, centred, its default (compute_gradient)",
                 **run(testing.check_gradient_estimator, rbms_pcd(chains0, True), MODEL, DATA,
                       target=pcd, offsets=(mu, lam), rng=15)})
    step = {"check": "training step fit_batch_pcd as persistent CD", **run(
        testing.check_gradient_estimator, rbms_pcd(chains0, False, normalised=True), MODEL,
        DATA, target=pcd, rng=16)}
    draws = [rbms_pcd(chains0, False, normalised=True)(DATA, np.random.default_rng(s))
             for s in range(20)]
    norms = [float(np.sqrt(sum((g ** 2).sum() for g in d))) for d in draws]
    step.update(classification="convention difference", evidence={
        "what": "fit_batch_pcd divides the gradient by its norm (normalize_grad) before the "
                "optimiser's step; the norm of its gradient, by hand over 20 calls",
        "smallest norm": min(norms), "largest norm": max(norms),
        "norm of the exact expected persistent-CD gradient": float(np.sqrt(
            (pcd.W ** 2).sum() + (pcd.b ** 2).sum() + (pcd.c ** 2).sum()))})
    rows.append(step)
    rows.append(rbms_tempering_row())
    for what, model, dtype in (("weights x 40", BIG, "float64"),
                               ("hidden biases + 10", SHIFTED, "float64"),
                               ("float32", MODEL, "float32"),
                               ("float32, hidden biases + 10", SHIFTED, "float32")):
        wrapped = wrap_rbms(model.W, model.b, model.c, dtype)
        loose, loose_cond = {}, {}
        if dtype == "float32":  # float32 tolerances, and the float64 run that tests rounding
            in64 = wrap_rbms(model.W, model.b, model.c)
            loose = {"rtol": 1e-6, "float64": in64["free_energy"]}
            loose_cond = {"float64": {key: in64[key]
                                      for key in ("prob_h_given_v", "prob_v_given_h")}}
        inputs = STATES @ model.W + model.c
        evidence = {
            "what": "its softplus is log(1 + exp(x)) for x < 10 and x itself from 10 on, "
                    "which leaves out log(1 + exp(-x)), up to log(1 + exp(-10)) per hidden "
                    "unit; by hand in NumPy over the 16 states",
            "largest difference from F by hand": float(np.abs(
                wrapped["free_energy"](STATES)
                - by_hand_free_energy(STATES, model.W, model.b, model.c)).max()),
            "log(1 + exp(-10))": float(np.log1p(np.exp(-10.0))),
            "hidden inputs at or above 10": int((inputs >= 10).sum()),
            "of": int(inputs.size)}
        rows.append({"check": f"free energy (compute_energy_visibles), {what}",
                     **run(testing.check_free_energy, wrapped["free_energy"], model, **loose)})
        if dtype == "float64":
            rows.append({"check": f"log Z by enumeration (compute_partition_function), {what}",
                         **run(testing.check_log_partition, wrapped["log_partition"], model)})
        else:
            rows.append({"check": f"conditionals p(h|v), p(v|h), {what}", **run(
                testing.check_conditionals, model, prob_h_given_v=wrapped["prob_h_given_v"],
                prob_v_given_h=wrapped["prob_v_given_h"], tol=1e-6, rtol=1e-6,
                **loose_cond)})
        for row in rows[-2:]:
            if not row["passed"]:
                row.update(classification="defect of the library", evidence=dict(evidence))
    return rows


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def float32_evidence(pairs):
    """Whether the first pair's values are float32 numbers, and each pair's largest difference
    (keys "largest difference from <name>")."""
    found = next(iter(pairs.values()))[0]
    return {"float32 values": bool(np.array_equal(found.astype(np.float32), found)),
            **{f"largest difference from {name}": float(np.abs(a - b).max())
               for name, (a, b) in pairs.items()}}


def tempering_law_by_hand(W, b, c, betas):
    """The exact stationary law of the beta = 1 replica of two-replica tempering as rbms
    runs it: one Gibbs step at each beta of exp(-beta E(v, h)), then a swap accepted with
    probability min(1, exp((beta_1 - beta_0)(F(v_1) - F(v_0)))); in NumPy, on the 256 pairs."""
    H = np.array(list(itertools.product([0.0, 1.0], repeat=W.shape[1])))

    def gibbs(beta):  # T(v, v') = sum_h p_beta(h | v) p_beta(v' | h)
        ph = sigmoid(beta * (STATES @ W + c))
        p_hv = np.prod(np.where(H[None] == 1, ph[:, None], 1 - ph[:, None]), axis=2)
        pv = sigmoid(beta * (H @ W.T + b))
        p_vh = np.prod(np.where(STATES[None] == 1, pv[:, None], 1 - pv[:, None]), axis=2)
        return p_hv @ p_vh

    F = by_hand_free_energy(STATES, W, b, c)
    n = len(STATES)
    step = np.kron(gibbs(betas[0]), gibbs(betas[1]))  # pair (v0, v1) -> index v0 * n + v1
    swap = np.zeros((n * n, n * n))
    for i in range(n):
        for j in range(n):
            accept = min(1.0, np.exp((betas[1] - betas[0]) * (F[j] - F[i])))
            swap[i * n + j, j * n + i] += accept
            swap[i * n + j, i * n + j] += 1 - accept
    kernel = step @ swap
    values, vectors = np.linalg.eig(kernel.T)
    pi = np.real(vectors[:, np.argmin(np.abs(values - 1))])
    pi = (pi / pi.sum()).reshape(n, n)
    exact = np.exp(-F - np.logaddexp.reduce(-F))
    return pi.sum(axis=0), exact


def rbms_tempering_row():
    stiff = rbm.RBM.random(4, 4, scale=2.0, bias_scale=1.0, rng=3)  # the chapter's
    sample = rbms_tempering(stiff, [0.5, 1.0])
    row = {"check": "parallel tempering's beta = 1 replica (sample_state, swap_configurations), "
                    "betas 1/2 and 1, weight scale 2", **run(
        testing.check_stationary_law, sample, stiff, burn_in=100, rng=17)}
    law, exact = tempering_law_by_hand(stiff.W, stiff.b, stiff.c, [0.5, 1.0])
    beta = 0.5  # its replica at beta samples exp(-F_beta), its swap assumes exp(-beta F)
    f_beta = -beta * STATES @ stiff.b - np.logaddexp(0.0, beta * (STATES @ stiff.W + stiff.c)).sum(1)
    gap = f_beta - beta * by_hand_free_energy(STATES, stiff.W, stiff.b, stiff.c)
    row.update(classification="defect of the library", evidence={
        "what": "its replica at beta runs Gibbs steps of exp(-beta E(v, h)), whose law of v is "
                "exp(-F_beta(v)), while its swap assumes exp(-beta F(v)); F_beta - beta F is "
                "not constant, and the exact stationary law of its beta = 1 replica (two "
                "replicas, the 256 pairs, by hand in NumPy) is not p(v)",
        "spread of F_beta - beta F over the states, beta = 1/2": float(np.ptp(gap)),
        "largest |stationary law - p(v)| by hand": float(np.abs(law - exact).max()),
        "states": STATES.astype(int).tolist(),
        "stationary law by hand": law.tolist(), "p(v) by hand": exact.tolist()})
    return row


def jax_rows():
    """The RBM written in JAX, through the adapter: one call with 64-bit types (x64); its free
    energy on the copy with weights x 40; in JAX's default float32, its free energy with a
    relative tolerance and its Gibbs step, and its free energy at float64's tolerance, whose
    failure is tested against the x64 run."""
    x64, x32 = wrap_jax(W, B, C), wrap_jax(W, B, C, x64=False)
    big = wrap_jax(BIG.W, BIG.b, BIG.c)
    rows = suite_rows(x64)
    rows += [{"check": "free energy, x64, weights x 40", **run(
                 testing.check_free_energy, big["free_energy"], BIG)},
             {"check": "free energy, float32 (JAX's default), rtol 1e-6", **run(
                 testing.check_free_energy, x32["free_energy"], MODEL, rtol=1e-6)},
             {"check": "Gibbs step (jax.random), float32 (JAX's default)", **run(
                 testing.check_gibbs_step, x32["gibbs_step"], MODEL, rng=21)}]
    strict = {"check": "free energy, float32 (JAX's default), float64's tolerance, its x64 run "
                       "as float64", **run(testing.check_free_energy, x32["free_energy"], MODEL,
                                           float64=x64["free_energy"])}
    by_hand = by_hand_free_energy(STATES, W, B, C)
    found32 = x32["free_energy"](STATES)
    strict.update(classification="convention difference", evidence={
        "what": "JAX computes in float32 unless 64-bit types are enabled (jax_enable_x64); "
                "the same code with them passes (the one call's row 'free energy'); by hand in "
                "NumPy over the 16 states",
        **float32_evidence({"F by hand, float32": (found32, by_hand),
                            "F by hand, x64": (x64["free_energy"](STATES), by_hand)})})
    rows.append(strict)
    return rows


ROWS = {"scikit-learn": sklearn_rows, "boltzmannclean": boltzmannclean_rows, "rbms": rbms_rows,
        "jax": jax_rows, "learnergy": learnergy_rows, "paysage": paysage_rows,
        "pydbm": pydbm_rows, "kaiwu-torch-plugin": kaiwu_rows}


def main(libraries=tuple(ROWS)):
    cache = {"model": "4 x 4, weights and biases of scale 1 (seed 3); six rows (seed 1); "
                      "'weights x 40': the same model with W 40 times larger",
             "libraries": {}}
    for library in libraries:
        rows = ROWS[library]()
        for row in rows:
            if not row["passed"] and "classification" not in row:
                raise SystemExit(f"{library}: {row['check']} failed unclassified:\n"
                                 f"{row['message']}")
        cache["libraries"][library] = {
            "version": importlib.metadata.version(DISTRIBUTIONS[library]),
            "wrapper_lines": wrapper_lines(library), "checks": rows}
        # the adapter, shown in the chapter (and the code under test, for JAX)
        cache["libraries"][library]["adapter"] = inspect.getsource(WRAPPERS[library])
        if library == "jax":
            cache["libraries"][library].update(code_lines=code_lines(jax_rbm),
                                               code=inspect.getsource(jax_rbm))
        print(f"{library}: {sum(r['passed'] for r in rows)} of {len(rows)} checks hold")
    return cache


if __name__ == "__main__":
    cache = main()
    OUT.write_text(json.dumps(cache, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT.relative_to(OUT.parent.parent.parent)}", file=sys.stderr)
