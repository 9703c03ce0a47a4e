r"""Fused training updates for the package's own estimators, CD-k and persistent CD.

:func:`rbm.training.train` uses this for the estimators made by
:func:`rbm.training.cd` and :func:`rbm.training.pcd`: the same chains and
the same updates as the general loop, with far fewer array operations per
update (for small models and batches the time of a training run is the
count of those operations, not their size).

The parameters are held as one augmented matrix

.. math::
    \Theta = \begin{pmatrix} W & b \\ c^\top & 0 \end{pmatrix}
    \in \mathbb{R}^{(n_\text{visible} + 1) \times (n_\text{hidden} + 1)},

the biases as weights to an always-on unit in each layer.  With a constant
1 appended to every visible row :math:`\tilde v = (v, 1)` and hidden row
:math:`\tilde h = (h, 1)`:

* :math:`\tilde v\,\Theta` holds the hidden pre-activations
  :math:`c + W^\top v` (and one unused column),
  :math:`\tilde h\,\Theta^\top` the visible ones;
* :math:`\tilde v^\top \tilde h = \begin{pmatrix} v h^\top & v \\ h^\top & 1
  \end{pmatrix}`, so one matrix product gives the statistics of ``W``,
  ``b`` and ``c`` at once, and BLAS adds
  :math:`\pm\frac{\eta}{N}\tilde v^\top \tilde h` to :math:`\Theta` in
  place (``dgemm`` with ``beta = 1``).  The corner entry gets
  :math:`\eta - \eta = 0` and is never read.

What is stored is :math:`\Theta / 2`, because
:math:`\sigma(x) = \tfrac12\,(1 + \tanh(x/2))`: a product with it gives
:math:`x/2` directly, and ``tanh`` is about three times faster than
:func:`scipy.special.expit` (error at most 2.3e-16).  Halving and doubling
are exact in floating point.

The generator is drawn in the same order and shapes as
:func:`rbm.estimators.cd_gradient` and
:meth:`rbm.estimators.PersistentCD.gradient`, so a seeded run follows the
same chains as the general loop; the numbers agree to rounding
(``tests/test_training.py`` checks both).
"""

import numpy as np
from scipy.linalg.blas import dgemm
from scipy.special import expit


class _Buffers:
    """Work arrays for one batch size, each with its constant column set to 1."""

    def __init__(self, rows, n_visible, n_hidden):
        def augmented(width):
            arr = np.empty((rows, width + 1))
            arr[:, width] = 1.0
            return arr

        self.p_pos = augmented(n_hidden)   # p(h=1 | data)
        self.h_pos = augmented(n_hidden)   # h sampled from the data (drives CD chains)
        self.h_neg = augmented(n_hidden)   # h sampled at the end of the chain
        self.h = augmented(n_hidden)       # h inside the chain
        self.p = augmented(n_hidden)       # p(h=1 | v) inside the chain
        self.p_neg = augmented(n_hidden)   # p(h=1 | v_k)
        self.v = augmented(n_visible)      # the chain's visible states (CD)
        self.pre_v = np.empty((rows, n_visible + 1))
        self.u_h = np.empty((rows, n_hidden))
        self.u_v = np.empty((rows, n_visible))


class FusedTrainer:
    r"""Holds :math:`\Theta / 2` during one training run; :meth:`write_back` copies it out.

    Parameters
    ----------
    model : RBM
        Its arrays are updated only by :meth:`write_back`.
    k : int
        Gibbs steps per update.
    use_probabilities : bool
        As in :func:`rbm.estimators.cd_gradient`.
    persistent : rbm.estimators.PersistentCD or None
        The chains for PCD; ``None`` for CD.
    learning_rate, momentum, weight_decay : float
        As in :func:`rbm.training.train` (checked there).
    """

    def __init__(self, model, k, use_probabilities, persistent,
                 learning_rate, momentum, weight_decay):
        self.model = model
        self.k = k
        self.use_probabilities = use_probabilities
        self.persistent = persistent
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.weight_decay = weight_decay
        nv, nh = model.n_visible, model.n_hidden
        self.n_visible, self.n_hidden = nv, nh
        half = np.zeros((nv + 1, nh + 1))
        half[:nv, :nh] = model.W
        half[:nv, nh] = model.b
        half[nv, :nh] = model.c
        half *= 0.5
        self.half = half
        # The transpose is F-ordered: BLAS updates it, and so half, in place.
        self.half_T = half.T
        self.velocity_T = np.zeros_like(self.half_T) if momentum or weight_decay else None
        self.chains = None  # augmented persistent chains, created on the first update
        self._buffers = {}

    @staticmethod
    def augment(data):
        """`data` with a column of ones appended (C order: row slices are contiguous)."""
        out = np.empty((data.shape[0], data.shape[1] + 1))
        out[:, :-1] = data
        out[:, -1] = 1.0
        return out

    @staticmethod
    def _sigmoid_of_half(x):
        """Overwrite `x` = pre-activation / 2 with the sigmoid of the pre-activation."""
        np.tanh(x, out=x)
        x += 1.0
        x *= 0.5
        return x

    def _hidden(self, v_aug, out):
        """p(h=1 | v) into `out`, keeping its column of ones."""
        np.dot(v_aug, self.half, out=out)
        self._sigmoid_of_half(out)
        out[:, self.n_hidden] = 1.0
        return out

    def _sample_h(self, p, u, out, rng):
        rng.random(out=u)
        np.less(u, p[:, :self.n_hidden], out=out[:, :self.n_hidden])
        return out

    def _sample_v(self, h_aug, buf, out, rng):
        """v ~ p(v | h) into the visible columns of `out`."""
        pre = buf.pre_v
        np.dot(h_aug, self.half_T, out=pre)
        self._sigmoid_of_half(pre)
        rng.random(out=buf.u_v)
        np.less(buf.u_v, pre[:, :self.n_visible], out=out[:, :self.n_visible])
        return out

    def _gibbs(self, v_aug, steps, buf, rng):
        """`steps` block Gibbs steps of the augmented rows `v_aug`, in place."""
        for _ in range(steps):
            self._sample_h(self._hidden(v_aug, buf.p), buf.u_h, buf.h, rng)
            self._sample_v(buf.h, buf, v_aug, rng)
        return v_aug

    def _buffer(self, rows, role="batch"):
        buf = self._buffers.get((rows, role))
        if buf is None:
            buf = self._buffers[rows, role] = _Buffers(rows, self.n_visible, self.n_hidden)
        return buf

    def update(self, batch_aug, rng):
        """One update from the augmented batch (rows of :meth:`augment`)."""
        n = batch_aug.shape[0]
        buf = self._buffer(n)
        p_pos = self._hidden(batch_aug, buf.p_pos)
        if self.persistent is None:
            chain_rng = rng
            h0 = self._sample_h(p_pos, buf.u_h, buf.h_pos, chain_rng)
            v_neg = self._sample_v(h0, buf, buf.v, chain_rng)
            self._gibbs(v_neg, self.k - 1, buf, chain_rng)
            h_pos = p_pos if self.use_probabilities else h0
            neg_buf = buf
        else:
            chain_rng = self.persistent.rng
            if self.chains is None:
                self.chains = self.augment(self.persistent._start(self.model, batch_aug[:, :-1]))
            v_neg = self.chains
            neg_buf = self._buffer(v_neg.shape[0], "chains")
            self._gibbs(v_neg, self.k, neg_buf, chain_rng)
            h_pos = p_pos if self.use_probabilities else (
                self._sample_h(p_pos, buf.u_h, buf.h_pos, chain_rng))
        p_neg = self._hidden(v_neg, neg_buf.p_neg)
        h_neg = p_neg if self.use_probabilities else (
            self._sample_h(p_neg, neg_buf.u_h, neg_buf.h_neg, chain_rng))
        self._step(batch_aug, h_pos, v_neg, h_neg)

    def _step(self, v_pos, h_pos, v_neg, h_neg):
        r"""theta += eta (<v h>_pos - <v h>_neg), with momentum and weight decay if set.

        Works on the transposes, :math:`\Theta^\top/2 \mathrel{+}= \tfrac{\eta}{2N}
        \tilde h^\top \tilde v`: C-order rows transposed are F-order, so BLAS
        reads and writes every operand without a copy.
        """
        eta = 0.5 * self.learning_rate  # the stored matrix is Theta / 2
        a, z = eta / v_pos.shape[0], -eta / v_neg.shape[0]
        if self.velocity_T is None:
            dgemm(a, h_pos.T, v_pos.T, beta=1.0, c=self.half_T, trans_b=1, overwrite_c=1)
            dgemm(z, h_neg.T, v_neg.T, beta=1.0, c=self.half_T, trans_b=1, overwrite_c=1)
            return
        u = self.velocity_T
        dgemm(a, h_pos.T, v_pos.T, beta=self.momentum, c=u, trans_b=1, overwrite_c=1)
        dgemm(z, h_neg.T, v_neg.T, beta=1.0, c=u, trans_b=1, overwrite_c=1)
        if self.weight_decay:
            nv, nh = self.n_visible, self.n_hidden
            u[:nh, :nv] -= (self.learning_rate * self.weight_decay) * self.half_T[:nh, :nv]
        self.half_T += u

    def write_back(self):
        r"""Copy :math:`\Theta` into the model's arrays (in place) and the chains to `persistent`."""
        nv, nh = self.n_visible, self.n_hidden
        np.multiply(self.half[:nv, :nh], 2.0, out=self.model.W)
        np.multiply(self.half[:nv, nh], 2.0, out=self.model.b)
        np.multiply(self.half[nv, :nh], 2.0, out=self.model.c)
        if self.persistent is not None and self.chains is not None:
            self.persistent.chains = self.chains[:, :nv].copy()
