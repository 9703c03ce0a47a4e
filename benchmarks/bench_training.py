"""CD-1 and PCD-1 training on the binarised digits, against scikit-learn's BernoulliRBM.

Same settings on both sides: 64 visible and 64 hidden units, mini-batches
of 10, 20 epochs, learning rate 0.1.  scikit-learn's ``fit`` runs PCD with
one chain per batch row; the package runs CD-1 and PCD-1 (10 chains).
"""

import json
import sys
import warnings

import numpy as np

import rbm
from rbm import training
from rbm.datasets import digits
from benchmarks.common import timed

SETTINGS = {"n_hidden": 64, "batch_size": 10, "epochs": 20, "learning_rate": 0.1}


def fit_sklearn(X):
    from sklearn.neural_network import BernoulliRBM

    peer = BernoulliRBM(n_components=SETTINGS["n_hidden"], learning_rate=SETTINGS["learning_rate"],
                        batch_size=SETTINGS["batch_size"], n_iter=SETTINGS["epochs"], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer.fit(X)
    return peer


def fit_package(X, estimator):
    model = rbm.RBM.random(X.shape[1], SETTINGS["n_hidden"], scale=0.01, rng=0)
    training.train(model, X, estimator, learning_rate=SETTINGS["learning_rate"],
                   epochs=SETTINGS["epochs"], batch_size=SETTINGS["batch_size"], rng=0)
    return model


def run(repeats=3):
    X, _ = digits()
    results = {"settings": SETTINGS, "n_samples": int(X.shape[0])}
    results["sklearn"], _ = timed(lambda: fit_sklearn(X), repeats)
    results["cd1"], _ = timed(lambda: fit_package(X, rbm.CD(1)), repeats)
    results["pcd1"], _ = timed(lambda: fit_package(X, rbm.PCD(10, 1)), repeats)
    return results


if __name__ == "__main__":
    print(json.dumps(run(int(sys.argv[1]) if len(sys.argv) > 1 else 3)))
