r"""Fused training updates for the package's own estimators, CD-k and persistent CD.

:func:`rbm.training.train` uses this stepper for the package's estimators
:class:`rbm.estimators.CD` and :class:`rbm.estimators.PCD`: the same chains and
the same updates as the general stepper, with far fewer array operations per
update (for small models and batches the time of a training run is the
count of those operations, not their size).  It keeps its own copy of the
Gibbs kernel (products with :math:`\Theta/2`, ``tanh``, a comparison per
unit) for that reason alone: training takes 0.49x the time of scikit-learn's
``BernoulliRBM`` with it, 0.86x before it existed
(``benchmarks/bench_training.py``); ``tests/test_training.py`` checks it
against the general stepper and against an oracle written in the test.

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
  ``b`` and ``c`` at once.  The negative rows are stacked above the batch
  (the persistent chains live there) and their hidden statistics are
  stored already scaled by :math:`-N/M`, so **one** BLAS call adds
  :math:`\frac{\eta}{N}\,[\tilde h_-; \tilde h_+]^\top[\tilde v_-; \tilde v_+]`
  to :math:`\Theta^\top` in place (``dgemm`` with ``beta = 1``).  The
  corner entry gets :math:`\eta - \eta = 0` and is never read.

What is stored is :math:`\Theta / 2`, because
:math:`\sigma(x) = \tfrac12\,(1 + \tanh(x/2))`: a product with it gives
:math:`x/2` directly, and ``tanh`` is about three times faster than
:func:`scipy.special.expit` (error at most 2.3e-16).  Halving and doubling
are exact in floating point.  A unit is sampled as
:math:`[u < \sigma(x)] = [2u - 1 < \tanh(x/2)]`, where :math:`2u - 1` is exact
for every :math:`u` the generator returns; so the uniforms of a whole
epoch are drawn in a few large calls and mapped to :math:`2u - 1` at once,
and a sample costs one comparison.

The generator is drawn in the same order and shapes as
:meth:`rbm.estimators.CD.gradient` and :meth:`rbm.estimators.PCD.gradient`,
so a seeded run follows the same chains as the general stepper; the numbers agree to rounding
(``tests/test_training.py`` checks both).  One difference: if a run is
interrupted, the model holds the last completed update (it is written back
in any case), but the generator has already drawn the rest of the epoch's
uniforms.
"""

import numpy as np
from scipy.linalg.blas import dgemm

from rbm.estimators import PCD

# Half the coupling between the two always-on units: tanh of anything near it is 1.
_ALWAYS_ON = 1e300

# Uniforms drawn ahead in one call: at most this many (8 MiB), never past the epoch's end.
_DRAW_AHEAD = 2**20


def _in_place(result, target):
    """BLAS wrote into `target` (an F-ordered float64 array, so it always does)."""
    if result is not target:
        raise RuntimeError("scipy's dgemm copied its output array instead of updating it")


class _Uniforms:
    """The numbers :math:`2u - 1` that the updates of one epoch draw, in their order.

    `counts` lists the size of every array the epoch's updates draw, in
    order.  They are drawn ahead in calls that end at an array's boundary and
    hold at most ``_DRAW_AHEAD`` numbers (or one array, if it alone is
    larger: the general loop draws that array at once too), and never beyond
    the epoch's last draw, so the generator is left exactly where the general
    loop leaves it.
    """

    def __init__(self):
        self.storage = np.empty(0)  # reused by every refill of every epoch
        self.start(None, [])

    def start(self, rng, counts):
        """Begin an epoch that draws arrays of the sizes `counts` from `rng`."""
        self.rng = rng
        self.counts = counts
        self.next_draw = 0
        self.buffer = self.storage[:0]
        self.position = 0

    def _refill(self):
        stop, total = self.next_draw, 0
        while stop < len(self.counts) and (total == 0 or total + self.counts[stop] <= _DRAW_AHEAD):
            total += self.counts[stop]
            stop += 1
        self.next_draw = stop
        if self.storage.size < total:
            self.storage = np.empty(total)
        # Filling one array again spares the page faults of a fresh 8 MiB per call; the
        # numbers are those of rng.random(total).
        self.buffer = self.rng.random(out=self.storage[:total])
        self.buffer *= 2.0
        self.buffer -= 1.0
        self.position = 0

    def take(self, rows, cols):
        """The next ``rows x cols`` numbers, as an array."""
        size = rows * cols
        if self.position + size > self.buffer.size:
            self._refill()
        out = self.buffer[self.position:self.position + size].reshape(rows, cols)
        self.position += size
        return out


class _Stack:
    """Rows for one update: the negative rows (M) stacked above the batch rows (N).

    ``v`` holds the augmented visible rows, ``p`` their hidden statistics
    (the negative ones scaled by -N/M); both are C-ordered, so every block
    of rows is contiguous.
    """

    def __init__(self, n_negative, n_batch, n_visible, n_hidden):
        rows = n_negative + n_batch
        self.v = np.empty((rows, n_visible + 1))
        self.v[:, n_visible] = 1.0
        self.p = np.empty((rows, n_hidden + 1))
        self.h = np.empty((rows, n_hidden + 1))  # sampled h (chains, and sampled statistics)
        self.h[:, n_hidden] = 1.0
        self.t_v = np.empty((rows, n_visible + 1))
        self.n_negative = n_negative
        self._scales = {}

    def scale(self, n_batch):
        """(M + n_batch, 1): 1/2 on the batch rows and -n_batch/(2M) on the negative rows.

        sigma = (1 + tanh) / 2, and the negative rows' -N/M, in one multiplication.
        """
        scale = self._scales.get(n_batch)
        if scale is None:
            scale = self._scales[n_batch] = np.full((self.n_negative + n_batch, 1), 0.5)
            scale[:self.n_negative] = -0.5 * n_batch / self.n_negative
        return scale


class FusedTrainer:
    r"""A stepper for :func:`rbm.training.train` that holds :math:`\Theta / 2` during a run.

    :meth:`shuffle` gives each epoch's shuffled, augmented rows; then
    :meth:`begin_epoch` with them, :meth:`step` once per batch, in order, and
    :meth:`sync` whenever the model must hold the current parameters.

    Parameters
    ----------
    model : RBM
        Its arrays are updated only by :meth:`sync`.
    estimator : rbm.estimators.CD or rbm.estimators.PCD
        Its ``k`` and ``use_probabilities``; for PCD, its chains (read at the
        start, written back by :meth:`sync`).
    learning_rate, momentum, weight_decay : float
        As in :func:`rbm.training.train` (checked there).
    """

    def __init__(self, model, estimator, learning_rate, momentum, weight_decay):
        self.model = model
        self.k = estimator.k
        self.use_probabilities = estimator.use_probabilities
        self.persistent = estimator if isinstance(estimator, PCD) else None
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
        # The coupling of the two always-on units is never used by the model. Made huge, it
        # gives the hidden always-on unit tanh = 1, so sigma = 1 comes out of the products
        # with no extra step; the updates add 0 to it (the rows' constant columns cancel).
        half[nv, nh] = _ALWAYS_ON
        self.half = half
        # The transpose is F-ordered: BLAS updates it, and so half, in place.
        self.half_T = half.T
        self.velocity_T = np.zeros_like(self.half_T) if momentum or weight_decay else None
        self.stack = None     # PCD: one stack, whose first rows are the chains
        self.n_chains = 0
        self.uniforms = _Uniforms()
        self._stacks = {}     # CD: a stack per batch size
        self._shuffled = None  # the epoch's shuffled, augmented rows

    def shuffle(self, data, order):
        """The rows ``data[order]`` with a column of ones appended (C order: row slices are
        contiguous), written into one array that every epoch reuses."""
        out = self._shuffled
        if out is None or out.shape != (data.shape[0], data.shape[1] + 1):
            out = self._shuffled = np.empty((data.shape[0], data.shape[1] + 1))
            out[:, -1] = 1.0
        # mode="clip" writes straight into the strided view (`order` is a permutation)
        np.take(data, order, axis=0, out=out[:, :-1], mode="clip")
        return out

    def _draws(self, n):
        """Sizes of the arrays an update with `n` data rows draws, in the general loop's order."""
        nv, nh, k = self.n_visible, self.n_hidden, self.k
        sampled = not self.use_probabilities
        if self.persistent is None:  # h0, v1, then k - 1 steps, then h_k if sampled
            return [n * nh, n * nv] * k + ([n * nh] if sampled else [])
        m = self.n_chains  # k steps of the chains, then h_pos and h_neg if sampled
        return [m * nh, m * nv] * k + ([n * nh, m * nh] if sampled else [])

    def begin_epoch(self, shuffled, batch_size, rng):
        """Prepare the epoch's draws; start the persistent chains if they are new."""
        if self.persistent is not None and self.stack is None:
            # drawn first, as in the general stepper's first update
            chains = self.persistent.current_chains(self.model, shuffled[:batch_size, :-1],
                                                    rng=rng)
            self.n_chains = chains.shape[0]
            rows = min(batch_size, shuffled.shape[0])
            self.stack = _Stack(self.n_chains, rows, self.n_visible, self.n_hidden)
            self.stack.v[:self.n_chains, :-1] = chains
        n = shuffled.shape[0]
        counts = [size for start in range(0, n, batch_size)
                  for size in self._draws(min(batch_size, n - start))]
        self.uniforms.start(rng, counts)

    def _tanh_hidden(self, v_aug, out):
        """tanh of half the hidden pre-activations, into `out`."""
        np.dot(v_aug, self.half, out=out)
        return np.tanh(out, out=out)

    def _sample(self, t, out, width):
        """Units ``[2u - 1 < t]`` into the first `width` columns of `out`."""
        u = self.uniforms.take(t.shape[0], width)
        np.less(u, t[:, :width], out=out[:, :width])
        return out

    def _sample_visible(self, h_aug, t_v, out):
        np.dot(h_aug, self.half_T, out=t_v)
        return self._sample(np.tanh(t_v, out=t_v), out, self.n_visible)

    def _gibbs(self, v_aug, steps, stack, first_t=None):
        """`steps` block Gibbs steps of the augmented rows `v_aug`, in place.

        `first_t`, if given, is tanh of the first step's hidden pre-activations/2.
        """
        rows, nh = v_aug.shape[0], self.n_hidden
        h, t_v = stack.h[:rows], stack.t_v[:rows]
        for step in range(steps):
            t = first_t if step == 0 and first_t is not None else (
                self._tanh_hidden(v_aug, stack.p[:rows]))
            self._sample(t, h, nh)
            self._sample_visible(h, t_v, v_aug)
        return v_aug

    def step(self, batch_aug, rng):
        """One update from a batch of the epoch's shuffled, augmented rows.

        The draws were made by :meth:`begin_epoch` from the same generator.
        """
        nh, n = self.n_hidden, batch_aug.shape[0]
        if self.persistent is None:
            stack = self._stacks.get(n)
            if stack is None:
                stack = self._stacks[n] = _Stack(n, n, self.n_visible, self.n_hidden)
            m = n
            v, p, scale = stack.v, stack.p, stack.scale(n)
            v[m:] = batch_aug
            t_pos = self._tanh_hidden(v[m:], p[m:])
            h_pos = self._sample(t_pos, stack.h[m:], nh)
            self._sample_visible(h_pos, stack.t_v[:m], v[:m])
            self._gibbs(v[:m], self.k - 1, stack)
        else:
            stack, m = self.stack, self.n_chains
            v, p, scale = stack.v[:m + n], stack.p[:m + n], stack.scale(n)
            v[m:] = batch_aug
            t_all = self._tanh_hidden(v, p)  # the batch and the chains' first step at once
            self._gibbs(v[:m], self.k, stack, first_t=t_all[:m])
            if not self.use_probabilities:
                h_pos = self._sample(t_all[m:], stack.h[m:m + n], nh)
        t_neg = self._tanh_hidden(v[:m], p[:m])
        if self.use_probabilities:
            p += 1.0
            p *= scale  # sigma on the batch rows, -N/M sigma on the negative rows
            self._step(v, p, n)
        else:
            h = np.concatenate([self._sample(t_neg, stack.h[:m], nh), h_pos])
            h[:m] *= -n / m
            self._step(v, h, n)

    def _step(self, v, h, n):
        r"""theta += eta / n * h^T v, with momentum and weight decay if set.

        `h` holds the negative rows' statistics already scaled by -n/m.
        Works on the transposes, :math:`\Theta^\top/2 \mathrel{+}= \tfrac{\eta}{2N}
        \tilde h^\top \tilde v`: C-order rows transposed are F-order, so BLAS
        reads and writes every operand without a copy.
        """
        a = 0.5 * self.learning_rate / n  # the stored matrix is Theta / 2
        if self.velocity_T is None:
            _in_place(dgemm(a, h.T, v.T, beta=1.0, c=self.half_T, trans_b=1, overwrite_c=1),
                      self.half_T)
            return
        u = self.velocity_T
        _in_place(dgemm(a, h.T, v.T, beta=self.momentum, c=u, trans_b=1, overwrite_c=1), u)
        if self.weight_decay:
            nv, nh = self.n_visible, self.n_hidden
            u[:nh, :nv] -= (self.learning_rate * self.weight_decay) * self.half_T[:nh, :nv]
        self.half_T += u

    def sync(self):
        r"""Copy :math:`\Theta` into the model's arrays (in place) and the chains to the PCD estimator."""
        nv, nh = self.n_visible, self.n_hidden
        np.multiply(self.half[:nv, :nh], 2.0, out=self.model.W)
        np.multiply(self.half[:nv, nh], 2.0, out=self.model.b)
        np.multiply(self.half[nv, :nh], 2.0, out=self.model.c)  # the corner is not written
        if self.stack is not None:
            self.persistent.chains = self.stack.v[:self.n_chains, :nv].copy()
