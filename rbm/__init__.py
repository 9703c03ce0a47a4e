"""Restricted Boltzmann machines, with exact enumeration to check every step of their training.

Modules
-------
model
    :class:`RBM` (energy, free energy, conditionals, sampling) and :class:`Gradient`.
exact
    Exact log Z, likelihoods, distributions, KL and gradients by enumeration.
special
    Stable softplus, sigmoid and log-sum-exp.
symbolic
    SymPy expressions of small RBMs and the checks behind the book's verdicts
    (imported on its own: ``from rbm import symbolic``).
"""

from rbm import exact
from rbm.model import RBM, Gradient
from rbm.special import logsumexp, sigmoid, softplus

__version__ = "0.1.0"

__all__ = ["RBM", "Gradient", "exact", "softplus", "sigmoid", "logsumexp"]
