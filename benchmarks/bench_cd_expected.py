"""The exact expected CD-k gradient for k = 1..50 on 3x3 bars and stripes, 16 hidden units.

Baseline in the same run: the one unavoidable product of the method, a
float64 matrix product of shape (2**9, 2**16) @ (2**16, 2**9) (forming the
Gibbs transition matrix T = A B).
"""

import json
import sys

import numpy as np

import rbm
from rbm import exact, transition
from rbm.datasets import bars_and_stripes
from benchmarks.common import timed


def run(repeats=3):
    data = bars_and_stripes(3)
    model = rbm.RBM.random(9, 16, scale=1.0, rng=0)
    rng = np.random.default_rng(0)
    A = rng.random((2**9, 2**16))
    B = rng.random((2**16, 2**9))
    baseline, _ = timed(lambda: A @ B, repeats)
    curve, result = timed(lambda: transition.cd_expected_gradient(model, data, k=range(1, 51)), repeats)
    bias = [float((g - exact.gradient(model, data)).max_abs()) for g in result[::10]]
    return {"baseline_matmul": baseline, "cd_expected_k1_to_50": curve,
            "bias_max_abs_k_1_11_21_31_41": bias}


if __name__ == "__main__":
    print(json.dumps(run(int(sys.argv[1]) if len(sys.argv) > 1 else 3)))
