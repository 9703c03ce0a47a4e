"""Helpers that build what a check needs from what a library provides.

:func:`free_energy_from_energy` makes a free energy of a library that exposes only the joint
energy :math:`E(v, h)`, by enumerating the smaller layer.
"""

import numpy as np
from scipy.special import logsumexp

from rbm.testing._shared import all_states, as_array, as_model, valid_callable

# Rows of (state, enumerated state) pairs passed to the energy at once.
PAIRS_PER_CALL = 1 << 16


def free_energy_from_energy(energy, model, *, over=None):
    r"""A free energy built from a joint energy :math:`E(v, h)` by enumerating one layer.

    :math:`F(v) = -\log \sum_h e^{-E(v, h)}` (``over="hidden"``) or
    :math:`F(h) = -\log \sum_v e^{-E(v, h)}` (``over="visible"``): every
    state of the enumerated layer is paired with every row, and `energy` is
    called on the pairs in blocks of at most ``2**16`` rows.

    Parameters
    ----------
    energy : callable
        ``energy(v, h) -> (n,)``, rows of visible and hidden states.
    model : RBM or tuple
        Gives the layers' sizes and unit values ({0,1} or ±1); see
        :func:`~rbm.testing.as_model`.
    over : {"hidden", "visible"}, optional
        The layer summed over; by default the smaller (``"hidden"`` on a
        tie), the cheaper one.  Summed over the visible layer, the result is
        the free energy of ``model.transpose()``'s visible layer: check it
        against that model.

    Returns
    -------
    callable
        ``f(x) -> (n,)`` for rows ``x`` of the layer not summed over, with
        the attribute ``over``.

    Raises
    ------
    TypeError
        If `energy` is not callable.
    ValueError
        If `over` is not ``"hidden"``, ``"visible"`` or None.

    Examples
    --------
    >>> import numpy as np
    >>> from rbm.testing import check_free_energy, free_energy_from_energy
    >>> W, b, c = np.array([[1.0, -2.0], [0.5, 1.0]]), np.array([0.1, -0.3]), np.zeros(2)
    >>> energy = lambda v, h: -v @ b - h @ c - np.einsum("ni,ij,nj->n", v, W, h)
    >>> f = free_energy_from_energy(energy, (W, b, c))
    >>> f.over
    'hidden'
    >>> _ = check_free_energy(f, (W, b, c))
    verdict: free energy: every visible state (4) within 1e-09 + 1e-12 |exact|
    """
    valid_callable(energy, "energy")
    model = as_model(model)
    if over is None:
        over = "hidden" if model.n_hidden <= model.n_visible else "visible"
    if over not in ("hidden", "visible"):
        raise ValueError(f"over must be 'hidden', 'visible' or None, got {over!r}")
    summed = all_states(getattr(model, over))
    per_call = max(1, PAIRS_PER_CALL // len(summed))

    def free_energy(x):
        x = np.asarray(x, dtype=float)
        out = []
        for start in range(0, len(x), per_call):
            rows = x[start:start + per_call]
            kept = np.repeat(rows, len(summed), axis=0)
            enumerated = np.tile(summed, (len(rows), 1))
            pair = (kept, enumerated) if over == "hidden" else (enumerated, kept)
            e = as_array(energy(*pair), "your energy", (len(kept),))
            out.append(-logsumexp(-e.reshape(len(rows), len(summed)), axis=1))
        return np.concatenate(out) if out else np.zeros(0)

    free_energy.over = over
    return free_energy
