"""Restricted Boltzmann machines, with exact enumeration to check every step of their training.

Modules
-------
layers
    The layers of units, one interface: :class:`~rbm.layers.Binary` {0,1},
    :class:`~rbm.layers.Spin` ±1, :class:`~rbm.layers.Potts` (categorical),
    :class:`~rbm.layers.Gaussian`, :class:`~rbm.layers.ReLU` and
    :class:`~rbm.layers.DReLU`.
model
    :class:`RBM` over any two layers (``RBM(W, b, c)``: the binary model; energy,
    free energy, conditionals, sampling) and :class:`Gradient`.
exact
    Exact log Z, likelihoods, distributions, KL and gradients by enumeration.
transition
    The exact Gibbs transition and the exact expectation of the CD-k estimate.
cd_theory
    What CD-k optimises: its objective, the term it drops, the Jacobian of
    its expected update, loop integrals and fixed points.
short_run
    Short-run chains from a fixed start (Rdm-k): the estimator, its exact
    k-step law and expected update, and the exact gradient of KL(q || p0 T^k).
tempering
    Parallel tempering: its exact transition matrix on a few replicas, and
    persistent tempering chains for training (TemperedPCD).
special
    Stable softplus, sigmoid and log-sum-exp.
symbolic
    SymPy expressions of small RBMs and the checks behind the book's verdicts
    (imported on its own: ``from rbm import symbolic``).
sampling
    Block Gibbs steps, chains and many-chain sampling of the model.
estimators
    Gradient estimators with one method, ``gradient(model, data, *, rng)``:
    :class:`CD` (CD-k), :class:`PCD` (persistent CD), :class:`FastPCD` (with fast
    weights) and :class:`ExactGradient`.
training
    Mini-batch gradient ascent with any estimator, tracking the exact likelihood.
datasets
    Bars and stripes, and the binarised scikit-learn digits.
ais
    Annealed importance sampling of log Z, forward and reverse.
pseudolikelihood
    The exact and the one-bit stochastic pseudo-log-likelihood.
deep
    Stacks of RBMs: deep belief networks and deep Boltzmann machines, with exact
    log-likelihoods, posteriors and variational bounds by enumeration.
curvature
    The exact Hessian of log Z and of the log-likelihood, the Fisher matrix,
    the hidden units' symmetries, centering and the natural gradient.
"""

from rbm import (ais, cd_theory, curvature, datasets, deep, estimators, exact, layers,
                 pseudolikelihood, sampling, short_run, tempering, training, transition)
from rbm.estimators import CD, PCD, ExactGradient
from rbm.model import RBM, Gradient
from rbm.special import logsumexp, sigmoid, softplus

__version__ = "0.1.0"

__all__ = [
    "RBM",
    "Gradient",
    "CD",
    "PCD",
    "ExactGradient",
    "exact",
    "transition",
    "cd_theory",
    "short_run",
    "tempering",
    "sampling",
    "estimators",
    "training",
    "datasets",
    "ais",
    "pseudolikelihood",
    "curvature",
    "deep",
    "layers",
    "softplus",
    "sigmoid",
    "logsumexp",
]
