"""Restricted Boltzmann machines, with exact enumeration to check every step of their training.

Modules
-------
model
    :class:`RBM` (energy, free energy, conditionals, sampling) and :class:`Gradient`.
exact
    Exact log Z, likelihoods, distributions, KL and gradients by enumeration.
special
    Stable softplus, sigmoid and log-sum-exp.
"""

from rbm import exact
from rbm import ais, pseudolikelihood
from rbm.model import RBM, Gradient
from rbm.special import logsumexp, sigmoid, softplus

__version__ = "0.1.0"

__all__ = ["RBM", "Gradient", "exact", "softplus", "sigmoid", "logsumexp"]
__all__ += ["ais", "pseudolikelihood"]
