"""Kernels shared by the sampling estimators: Gibbs steps and the sufficient statistics of rows.

Written once against the layer interface (:mod:`rbm.layers`) and used by
:mod:`rbm.sampling`, :mod:`rbm.estimators`, :mod:`rbm.tempering` and
:mod:`rbm.ais`.  No argument checks: the public functions check their
arguments once, then call these.
"""

import numpy as np

from rbm._validation import check_rng
from rbm.model import Gradient, check_model, parameter_names

__all__ = ["gibbs_steps", "row_statistics", "contrast", "checked_data", "discrete_bits"]


def gibbs_steps(model, v, k, rng, beta=1.0):
    """`k` block Gibbs steps (h, then v) from checked rows `v`, at inverse temperature `beta`.

    Each step draws ``h ~ p(h | v)`` then ``v ~ p(v | h)`` with the layers'
    ``sample``, in that order (for {0,1} layers: one uniform per unit, as
    :meth:`rbm.RBM.sample_h_given_v` and :meth:`rbm.RBM.sample_v_given_h`).
    """
    for _ in range(k):
        h = model.hidden.sample(model.input_hidden(v), rng=rng, beta=beta)
        v = model.visible.sample(model.input_visible(h), rng=rng, beta=beta)
    return v


def row_statistics(model, v, h=None, weights=None, accurate=None):
    r"""Sums over the rows of :math:`-\partial E/\partial\theta`, per parameter (a dict).

    With `h` (sampled hidden rows) the hidden statistic is :math:`s(h)`;
    without it, the conditional mean given `v`, with the hidden parameters' gradients summed out
    (Rao-Blackwellised).  The caller divides by the number of rows.  With
    `weights` (one per row) the sums are weighted.  The conditional means come from
    ``mean_statistic`` and ``normaliser_gradient`` (`accurate`), or from
    ``conditional_statistics`` (the sampling kernel's own, to rounding); by default the
    latter for the binary model and the former for any other, the arithmetic each had
    before the layers shared one code path, so that seeded runs keep their bits.
    """
    if accurate is None:
        accurate = not model.is_binary
    visible, hidden = model.visible, model.hidden
    I = model.input_hidden(v)
    if h is None and accurate:
        H, grads_h = hidden.mean_statistic(I), hidden.normaliser_gradient(I)
    elif h is None:
        H, grads_h = hidden.conditional_statistics(I)
    else:
        H = hidden.statistic(h)
        grads_h = hidden.potential_gradient(h, I)
    n = v.shape[0]
    Sv = visible.statistic(v)
    if weights is not None:
        return _weighted_statistics(model, v, Sv, H, grads_h, weights)
    if Sv.ndim == 2 and H.ndim == 2:
        fields = {"W": Sv.T @ H}
        I_v = None if visible.bits is not None else H @ model.W.T
    else:
        fields = {"W": (Sv.reshape(n, -1).T @ H.reshape(n, -1)).reshape(model.W.shape)}
        I_v = model.input_visible_from_statistic(H.reshape(n, -1))
    names = parameter_names("visible", visible)
    for key, g in visible.potential_gradient(v, I_v).items():
        fields[names[key]] = np.add.reduce(g, axis=0)
    names = parameter_names("hidden", hidden)
    for key, g in grads_h.items():
        fields[names[key]] = np.add.reduce(g, axis=0)
    return fields


def _weighted_statistics(model, v, Sv, H, grads_h, w):
    n = v.shape[0]
    Sv2, H2 = Sv.reshape(n, -1), H.reshape(n, -1)
    fields = {"W": ((Sv2 * w[:, None]).T @ H2).reshape(model.W.shape)}
    I_v = model.input_visible_from_statistic(H2)
    names = parameter_names("visible", model.visible)
    for key, g in model.visible.potential_gradient(v, I_v).items():
        fields[names[key]] = np.tensordot(w, g, axes=1)
    names = parameter_names("hidden", model.hidden)
    for key, g in grads_h.items():
        fields[names[key]] = np.tensordot(w, g, axes=1)
    return fields


def contrast(pos, n_pos, neg, n_neg, divide=False):
    """Positive minus negative statistics, each a mean over its rows, as a Gradient.

    The means are taken by multiplying with the reciprocal of the count, or with `divide`
    by dividing (the binary estimators' and the other layers' arithmetic before the
    layers shared one code path; see :func:`row_statistics`).
    """
    out = {}
    if divide:
        for key, value in pos.items():
            out[key] = value / n_pos - neg[key] / n_neg
        return Gradient.from_fields(out)
    a, z = 1.0 / n_pos, 1.0 / n_neg
    for key, value in pos.items():
        d = value * a
        d -= neg[key] * z
        out[key] = d
    return Gradient.from_fields(out)


def data_minus_chains(model, v0, v, use_probabilities, rng):
    r"""The data rows' statistics minus the chain states', as a Gradient (ascent direction).

    With `use_probabilities` the hidden units enter as :math:`p(h \mid v)`; otherwise one
    hidden sample is drawn for the data rows, then one for the chain states, from `rng`.
    CD-k writes its own version (it reuses the first step's hidden sample); PCD, tempering
    and the short-run chains share this one.
    """
    if use_probabilities:
        pos, neg = row_statistics(model, v0), row_statistics(model, v)
    else:
        h_pos = model.hidden.sample(model.input_hidden(v0), rng=rng)
        h_neg = model.hidden.sample(model.input_hidden(v), rng=rng)
        pos, neg = row_statistics(model, v0, h_pos), row_statistics(model, v, h_neg)
    return contrast(pos, v0.shape[0], neg, v.shape[0], divide=not model.is_binary)


def checked_data(model, data, rng):
    """The estimators' arguments, checked: the model, the data as float rows, a Generator."""
    check_model(model)
    return model.visible.check_states(data, "data", allow_1d=False)[0], check_rng(rng)


def discrete_bits(model, what):
    r"""The sizes in bits of both layers' state spaces, or None for two {0,1} layers.

    For the functions that enumerate both layers: a model of two {0,1} layers
    takes their binary path (None); any other model needs two discrete layers,
    and a continuous one is refused with a ValueError naming it.  Returns
    ``(bits_v, bits_h)``, :math:`n \log_2 q` of each layer (floats).
    """
    check_model(model)
    if model.is_binary:
        return None
    for side in ("visible", "hidden"):
        layer = getattr(model, side)
        if not layer.discrete:
            raise ValueError(f"{what} enumerates both layers and needs discrete units; "
                             f"model.{side} is {layer!r}, which is continuous")
    return (model.n_visible * np.log2(model.visible.n_states),
            model.n_hidden * np.log2(model.hidden.n_states))
