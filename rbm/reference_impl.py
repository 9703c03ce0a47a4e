r"""A small RBM written in plain NumPy, as a user would write it, and a catalogue of planted bugs.

:class:`NumpyRBM` is an implementation of the binary RBM (energy
:math:`E(v, h) = -b^\top v - c^\top h - v^\top W h`, ``W`` of shape
``(n_visible, n_hidden)``) that shares no code with the rest of the
package: it is the *implementation under test* of :mod:`rbm.testing` and of
the chapter "Checking an RBM implementation".  With ``bug=None`` it is
correct; with ``bug`` one of the keys of :data:`BUGS` it carries one of the
bug classes that users of RBM libraries report, planted at one line.

Every method takes and returns NumPy arrays (rows are samples), and every
method that samples takes ``rng``, a :class:`numpy.random.Generator`.
"""

import numpy as np
from scipy.special import expit

__all__ = ["BUGS", "NumpyRBM", "PersistentCD"]

#: Each planted bug, by name, with what the code does wrong.
BUGS = {
    "h from previous v": "in a chain of Gibbs steps, h_t is drawn from v_{t-1} instead of v_t",
    "v_k paired with h_0": "CD's negative statistic pairs v_k with h_0, the hidden sample of "
                           "the data step, instead of p(h = 1 | v_k)",
    "transposed W": "p(v | h) uses W where W transposed belongs (silent when W is square)",
    "missing hidden bias": "p(h | v) leaves out the hidden bias c",
    "doubled visible bias": "p(v | h) adds the visible bias b twice",
    "one uniform per row": "a sampler compares every unit of a row with one shared uniform "
                           "number, so the units are drawn together instead of independently",
    "softplus overflow": "the free energy is computed in float32 with softplus written as "
                         "log(1 + exp(x)), which overflows for x > 88.7",
    "PL times n_visible": "the pseudo-log-likelihood (a sum over units) is multiplied by "
                          "n_visible once more",
    "gradient sign": "the CD gradient is returned as model term minus data term",
    "learning rate twice": "the training step multiplies the gradient by the learning rate, "
                           "then the update by it again",
    "chains re-initialised": "persistent CD restarts its chains at the data on every call, "
                             "which makes it CD-k",
    "generator re-seeded": "the CD gradient draws from a new generator seeded with 0 at every "
                           "call, not from the one it is given",
    "tempering swap with beta F": "parallel tempering accepts a swap with beta times the free "
                                  "energy at beta = 1 in place of the tempered free energy "
                                  "(F_beta(v) is not beta F(v): the softplus is not linear)",
    "AIS mean of log weights": "AIS returns log Z_0 plus the mean of the runs' log weights, not "
                               "the log of their mean weight (unbiased for log E[w] only in "
                               "expectation of the weights, not of their logs)",
    "chains reset on short batch": "a persistent estimator restarts its chains at the batch "
                                   "(its rows cycled) when a batch has fewer rows than there "
                                   "are chains",
    "centred biases uncorrected": "the centred gradient's bias updates leave out the corrections "
                                  "-dW lambda and -dW' mu",
    "dropout": "p(h | v) multiplies the hidden probabilities by masks of dropout 0.5 drawn from "
               "a generator of the module's own, not the one it is given (learnergy's "
               "DropoutRBM)",
    "batch normalisation": "p(h | v) min-max normalises the hidden inputs over the whole "
                           "batch before the sigmoid, so a row's values depend on the other "
                           "rows (pydbm's LogisticFunction)",
    "temperature 2": "the Gibbs chain's steps after the data's hidden sample run at "
                     "temperature 2 (inputs halved), as learnergy's RBM(temperature=2)",
    "free energy doubled hidden bias": "the free energy adds the hidden bias twice, "
                                       "softplus(vW + 2c) (paysage's TAPLogLikelihood)",
    "gradient sign times sum": "the CD gradient is returned as minus the sum over rows, model "
                               "term minus data term (pydbm's SGD with momentum, by rows)",
    "tempered chains": "persistent CD runs its chains at a random inverse temperature at each "
                       "call (mean 1, standard deviation 0.6, as paysage's default "
                       "beta_std=0.6), so they do not sample p(v)",
    "softplus cut": "the free energy writes softplus(x) as x for x >= 10, leaving out "
                    "log(1 + exp(-x)) past 10 (the rbms library's cut)",
    "softplus cut in float32": "the free energy is computed in float32 with softplus(x) written "
                               "as x for x >= 10 (the rbms library's cut, in float32)",
    "weight decay on biases": "the training step decays every parameter, the biases too, by "
                              "0.1 (learnergy's SGD(weight_decay=...) on all parameters)",
}

#: The weight decay, temperature and softplus threshold of the planted bugs of those names.
DECAY, TEMPERATURE, SOFTPLUS_CUT = 0.1, 2.0, 10.0
# Dropout masks are drawn from this generator, not the one a method is given.
_OWN_GENERATOR = np.random.default_rng(2026)


def _softplus(x):
    return np.logaddexp(0.0, x)


class NumpyRBM:
    r"""A binary RBM in plain NumPy, correct or with one planted bug.

    Parameters
    ----------
    W : array_like of shape (n_visible, n_hidden)
    b : array_like of shape (n_visible,)
    c : array_like of shape (n_hidden,)
    bug : str, optional
        One of the keys of :data:`BUGS`; ``None`` (default) for the correct code.

    Raises
    ------
    ValueError
        If the shapes do not fit together, or `bug` is not a key of :data:`BUGS`.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.reference_impl import NumpyRBM
    >>> W = np.array([[1.0, -1.0], [0.5, 0.0], [0.0, 2.0]])
    >>> impl = NumpyRBM(W, np.zeros(3), np.zeros(2))
    >>> impl.prob_h_given_v(np.array([[1.0, 1.0, 0.0]])).round(4).tolist()
    [[0.8176, 0.2689]]
    >>> impl.cd_gradient(np.eye(3), k=1, rng=np.random.default_rng(0))[0].shape
    (3, 2)
    """

    def __init__(self, W, b, c, *, bug=None):
        W, b, c = (np.array(x, dtype=float) for x in (W, b, c))
        if W.ndim != 2 or b.shape != (W.shape[0],) or c.shape != (W.shape[1],):
            raise ValueError(f"W must have shape (n_visible, n_hidden), b (n_visible,) and c "
                             f"(n_hidden,), got W {W.shape}, b {b.shape}, c {c.shape}")
        if bug is not None and bug not in BUGS:
            raise ValueError(f"bug must be None or one of {sorted(BUGS)}, got {bug!r}")
        self.W, self.b, self.c, self.bug = W, b, c, bug

    @property
    def parameters(self):
        """``(W, b, c)``, copies."""
        return self.W.copy(), self.b.copy(), self.c.copy()

    # -- conditionals and sampling ---------------------------------------------------

    def prob_h_given_v(self, v):
        """:math:`p(h_j = 1 \\mid v) = \\sigma(c_j + (v^\\top W)_j)`, rows of ``v`` (n, n_visible)."""
        c = 0.0 if self.bug == "missing hidden bias" else self.c
        x = v @ self.W + c
        if self.bug == "batch normalisation":
            x = (x - x.min()) / max(x.max() - x.min(), 1e-12)
        if self.bug == "dropout":
            return expit(x) * (_OWN_GENERATOR.random(x.shape) >= 0.5)
        return expit(x)

    def prob_v_given_h(self, h):
        """:math:`p(v_i = 1 \\mid h) = \\sigma(b_i + (W h)_i)`, rows of ``h`` (n, n_hidden)."""
        return expit(self._input_v(h))

    def _bernoulli(self, p, rng):
        if self.bug == "one uniform per row":
            return (rng.random((p.shape[0], 1)) < p).astype(float)
        return (rng.random(p.shape) < p).astype(float)

    def sample_h_given_v(self, v, rng):
        """Draw ``h ~ p(h | v)`` for each row of ``v``: (n, n_hidden) zeros and ones."""
        return self._bernoulli(self.prob_h_given_v(v), rng)

    def sample_v_given_h(self, h, rng):
        """Draw ``v ~ p(v | h)`` for each row of ``h``: (n, n_visible) zeros and ones."""
        return self._bernoulli(self.prob_v_given_h(h), rng)

    def gibbs_chain(self, v, k, rng):
        """`k` block Gibbs steps from the rows of ``v``; returns ``(v_k, h_0)``."""
        h = h0 = self.sample_h_given_v(v, rng)
        beta = 1 / TEMPERATURE if self.bug == "temperature 2" else 1.0
        for t in range(k):
            v_next = self._bernoulli(expit(beta * self._input_v(h)), rng)
            if t < k - 1:
                x = v if self.bug == "h from previous v" else v_next
                h = self._bernoulli(expit(beta * (x @ self.W + self.c)), rng) if beta != 1 \
                    else self.sample_h_given_v(x, rng)
            v = v_next
        return v, h0

    def _input_v(self, h):
        W_t = self.W if self.bug == "transposed W" else self.W.T
        b = 2.0 * self.b if self.bug == "doubled visible bias" else self.b
        return h @ W_t + b

    def gibbs_step(self, v, rng):
        """One block Gibbs step ``v -> h -> v'`` for each row of ``v``."""
        return self.gibbs_chain(v, 1, rng)[0]

    # -- free energy, likelihoods ------------------------------------------------------

    def free_energy(self, v):
        """:math:`F(v) = -b^\\top v - \\sum_j \\operatorname{softplus}(c_j + (v^\\top W)_j)`, per row."""
        x = v @ self.W + (2 * self.c if self.bug == "free energy doubled hidden bias" else self.c)
        if self.bug == "softplus overflow":
            x = x.astype(np.float32)
            return -(v @ self.b).astype(np.float32) - np.log(1 + np.exp(x)).sum(axis=1)
        if self.bug in ("softplus cut", "softplus cut in float32"):
            if self.bug.endswith("float32"):
                x, v, b = x.astype(np.float32), v.astype(np.float32), self.b.astype(np.float32)
            else:
                b = self.b
            cut = np.where(x < SOFTPLUS_CUT, np.log1p(np.exp(np.minimum(x, SOFTPLUS_CUT))), x)
            return -(v @ b) - cut.sum(axis=1)
        return -(v @ self.b) - _softplus(x).sum(axis=1)

    def log_partition(self):
        """:math:`\\log Z`, by summing :math:`e^{-F(v)}` over every visible state."""
        n = self.W.shape[0]
        V = (np.arange(2**n)[:, None] >> np.arange(n - 1, -1, -1)) & 1
        neg_f = -self.free_energy(V.astype(float))
        top = neg_f.max()
        return float(top + np.log(np.exp(neg_f - top).sum()))

    def log_likelihood(self, data):
        """Mean :math:`\\log p(v) = -F(v) - \\log Z` over the rows of `data`."""
        return float(np.mean(-self.free_energy(data) - self.log_partition()))

    def pseudo_log_likelihood(self, data):
        """Per row, :math:`\\sum_i \\log p(v_i \\mid v_{-i})`: an array of shape (n,)."""
        f = self.free_energy(data)
        total = np.zeros(len(data))
        for i in range(data.shape[1]):
            flipped = data.copy()
            flipped[:, i] = 1 - flipped[:, i]
            total -= _softplus(f - self.free_energy(flipped))  # log sigma(F(flip) - F(v))
        return data.shape[1] * total if self.bug == "PL times n_visible" else total

    def one_bit_pseudo_log_likelihood(self, data, rng):
        """Per row, ``n_visible * log p(v_i | v_-i)`` of one bit ``i`` drawn uniformly: shape (n,).

        Unbiased for :meth:`pseudo_log_likelihood` (the scheme of scikit-learn's
        ``BernoulliRBM.score_samples``).
        """
        n, n_visible = data.shape
        bits = rng.integers(0, n_visible, size=n)
        flipped = data.copy()
        flipped[np.arange(n), bits] = 1 - flipped[np.arange(n), bits]
        return -n_visible * _softplus(self.free_energy(data) - self.free_energy(flipped))

    # -- gradient estimates and training --------------------------------------------

    def _contrast(self, v0, vk, hk):
        n = len(v0)
        p0 = self.prob_h_given_v(v0)
        grad = ((v0.T @ p0) / n - (vk.T @ hk) / len(vk), v0.mean(axis=0) - vk.mean(axis=0),
                p0.mean(axis=0) - hk.mean(axis=0))
        if self.bug == "gradient sign":
            return tuple(-g for g in grad)
        if self.bug == "gradient sign times sum":
            return tuple(-n * g for g in grad)
        return grad

    def cd_gradient(self, data, k, rng):
        """The CD-k estimate ``(dW, db, dc)``, data term minus model term (the ascent direction)."""
        if self.bug == "generator re-seeded":
            rng = np.random.default_rng(0)
        vk, h0 = self.gibbs_chain(data, k, rng)
        hk = h0 if self.bug == "v_k paired with h_0" else self.prob_h_given_v(vk)
        return self._contrast(data, vk, hk)

    def pcd_gradient(self, data, chains, k, rng):
        """Persistent CD: `k` steps from ``chains``; returns ``((dW, db, dc), new_chains)``."""
        start = data.copy() if self.bug == "chains re-initialised" else chains
        vk, _ = self.gibbs_chain(start, k, rng)
        return self._contrast(data, vk, self.prob_h_given_v(vk)), vk

    def centred_cd_gradient(self, data, k, rng, visible_offset, hidden_offset):
        """The centred CD-k estimate (Melchior et al. 2016) in the parameters ``(W, b, c)``.

        Statistics are taken about the offsets ``mu`` (visible) and ``lambda``
        (hidden); the biases' updates carry the corrections ``-dW lambda`` and
        ``-dW' mu`` that map the centred model's gradient back to ``(W, b, c)``.
        """
        mu, lam = np.asarray(visible_offset, float), np.asarray(hidden_offset, float)
        vk, _ = self.gibbs_chain(data, k, rng)
        p0, pk = self.prob_h_given_v(data), self.prob_h_given_v(vk)
        dW = ((data - mu).T @ (p0 - lam)) / len(data) - ((vk - mu).T @ (pk - lam)) / len(vk)
        db = data.mean(axis=0) - vk.mean(axis=0)
        dc = p0.mean(axis=0) - pk.mean(axis=0)
        if self.bug == "centred biases uncorrected":
            return dW, db, dc
        return dW, db - dW @ lam, dc - dW.T @ mu

    def tempered_free_energy(self, v, beta):
        """:math:`F_\\beta(v)` of the model with every parameter times ``beta``, per row."""
        return -beta * (v @ self.b) - _softplus(beta * (v @ self.W + self.c)).sum(axis=1)

    def tempering_chains(self, n_chains, n_steps, betas, rng):
        """Parallel tempering: `n_chains` independent runs of `n_steps` steps, each step a Gibbs
        step in every replica then swap proposals between neighbours (0-1, 1-2, ...); returns
        the visible states of the ``betas[0] = 1`` replica, shape (n_chains, n_visible)."""
        betas = np.asarray(betas, dtype=float)
        n_visible = self.W.shape[0]
        v = (rng.random((len(betas), n_chains, n_visible)) < 0.5).astype(float)
        for _ in range(n_steps):
            for r, beta in enumerate(betas):
                h = (rng.random((n_chains, self.W.shape[1]))
                     < expit(beta * (v[r] @ self.W + self.c))).astype(float)
                v[r] = (rng.random((n_chains, n_visible))
                        < expit(beta * (h @ self.W.T + self.b))).astype(float)
            for r in range(len(betas) - 1):
                if self.bug == "tempering swap with beta F":
                    def f(x, beta):
                        return beta * self.free_energy(x)
                else:
                    f = self.tempered_free_energy
                b1, b2 = betas[r], betas[r + 1]
                log_a = f(v[r], b1) + f(v[r + 1], b2) - f(v[r + 1], b1) - f(v[r], b2)
                swap = np.log(rng.random(n_chains)) < log_a
                v[r, swap], v[r + 1, swap] = v[r + 1, swap], v[r, swap].copy()
        return v[0]

    def ais_log_partition(self, n_runs, betas, rng):
        """One AIS estimate of :math:`\\log Z`, from the uniform model at ``beta = 0``.

        `n_runs` runs anneal through ``betas`` (0 first, 1 last), one Gibbs
        step at each; the estimate is :math:`\\log Z_0 + \\log` of the mean
        weight, with :math:`\\log Z_0 = (n_v + n_h) \\log 2`.
        """
        n_visible, n_hidden = self.W.shape
        v = (rng.random((n_runs, n_visible)) < 0.5).astype(float)
        log_w = np.zeros(n_runs)
        for b0, b1 in zip(betas[:-1], betas[1:]):
            log_w += self.tempered_free_energy(v, b0) - self.tempered_free_energy(v, b1)
            h = (rng.random((n_runs, n_hidden)) < expit(b1 * (v @ self.W + self.c))).astype(float)
            v = (rng.random((n_runs, n_visible)) < expit(b1 * (h @ self.W.T + self.b))).astype(
                float)
        log_z0 = (n_visible + n_hidden) * np.log(2.0)
        if self.bug == "AIS mean of log weights":
            return float(log_z0 + log_w.mean())
        top = log_w.max()
        return float(log_z0 + top + np.log(np.mean(np.exp(log_w - top))))

    def cd_update(self, data, learning_rate, k, rng):
        """One CD-k training step: the new ``(W, b, c)``, each ``+ learning_rate * gradient``."""
        grad = self.cd_gradient(data, k, rng)
        if self.bug == "learning rate twice":
            grad = tuple(learning_rate * g for g in grad)
        params = (self.W, self.b, self.c)
        if self.bug == "weight decay on biases":
            grad = tuple(g - DECAY * p for g, p in zip(grad, params))
        return tuple(p + learning_rate * g for p, g in zip(params, grad))


class PersistentCD:
    r"""Persistent CD as an object that keeps its chains between calls, as training libraries do.

    Parameters
    ----------
    W, b, c : array_like
        The model, as in :class:`NumpyRBM`.
    chains : array_like of shape (n_chains, n_visible)
        The chains' first states (visible).
    k : int, default 1
        Gibbs steps per call.
    bug : str, optional
        ``"chains reset on short batch"``, ``"tempered chains"`` (see
        :data:`BUGS`) or ``None``.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.reference_impl import PersistentCD
    >>> pcd = PersistentCD(np.zeros((3, 2)), np.zeros(3), np.zeros(2), np.ones((4, 3)))
    >>> dW, db, dc = pcd.gradient(np.eye(3), np.random.default_rng(0))
    >>> dW.shape, pcd.chains.shape
    ((3, 2), (4, 3))
    """

    def __init__(self, W, b, c, chains, *, k=1, bug=None):
        if bug not in (None, "chains reset on short batch", "tempered chains"):
            raise ValueError(f"bug must be None, 'chains reset on short batch' or 'tempered "
                             f"chains', got {bug!r}")
        self.rbm = NumpyRBM(W, b, c)
        self.chains = np.array(chains, dtype=float)
        self.k, self.bug = k, bug

    @property
    def parameters(self):
        """``(W, b, c)`` now, copies."""
        return self.rbm.parameters

    def update(self, batch, learning_rate, rng):
        """One PCD-k training step: the parameters move by ``learning_rate`` times the estimate;
        returns the new ``(W, b, c)``."""
        grad = self.gradient(batch, rng)
        W, b, c = (p + learning_rate * g for p, g in zip(self.rbm.parameters, grad))
        self.rbm = NumpyRBM(W, b, c)
        return self.rbm.parameters

    def gradient(self, batch, rng):
        """The PCD-k estimate ``(dW, db, dc)`` of `batch` from the chains held; advances them."""
        if self.bug == "chains reset on short batch" and len(batch) < len(self.chains):
            self.chains = batch[np.arange(len(self.chains)) % len(batch)]  # the batch, cycled
        if self.bug == "tempered chains":
            beta = rng.gamma(1 / 0.36, 0.36)
            W, b, c = self.rbm.parameters
            for _ in range(self.k):
                h = (rng.random((len(self.chains), len(c)))
                     < expit(beta * (self.chains @ W + c))).astype(float)
                self.chains = (rng.random(self.chains.shape)
                               < expit(beta * (h @ W.T + b))).astype(float)
        else:
            self.chains, _ = self.rbm.gibbs_chain(self.chains, self.k, rng)
        return self.rbm._contrast(batch, self.chains, self.rbm.prob_h_given_v(self.chains))
