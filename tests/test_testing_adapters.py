"""The adapters of rbm.testing (issue 46, item 2): from_torch, from_jax, from_numpy, per_row.

PyTorch and JAX are optional: most tests here run on small stand-in modules put in
``sys.modules`` (what the helpers call of them: tensors with a dtype and a device,
``detach``, a global generator seeded by ``manual_seed``; keys and ``enable_x64``), so they
run in the main environment; the tests on the real libraries skip where they are absent.
Statistical checks run at alpha = 1e-3: each passes by chance failing with probability
below 1e-3.
"""

import contextlib
import sys
import types

import numpy as np
import pytest

from rbm import testing
from rbm.reference_impl import NumpyRBM

W = np.array([[1.0, -1.5, 0.5], [0.3, 0.8, -1.2], [-0.7, 0.4, 1.1]])
B, C = np.array([0.2, -0.4, 0.3]), np.array([0.5, -0.6, 0.25])


class FakeTensor:
    """What from_torch reads of a tensor: dtype, device, detach, cpu, numpy."""

    def __init__(self, values, dtype, device, detached=False):
        self.values, self.dtype, self.device = np.asarray(values), dtype, device
        self.detached, self.on_cpu = detached, device == "cpu"

    def detach(self):
        return FakeTensor(self.values, self.dtype, self.device, detached=True)

    def cpu(self):
        out = FakeTensor(self.values, self.dtype, "cpu", self.detached)
        return out

    def numpy(self):
        if not self.detached:  # as torch does for a tensor that requires grad
            raise RuntimeError("Can't call numpy() on Tensor that requires grad")
        return self.values


def fake_torch():
    torch = types.ModuleType("torch")
    torch.float64, torch.float32 = np.float64, np.float32
    torch.Tensor = FakeTensor
    torch.device = str
    torch.seeds = []
    torch.generator = np.random.RandomState(0)

    def as_tensor(x, dtype, device):
        return FakeTensor(np.asarray(x, dtype=dtype), dtype, device)

    def manual_seed(seed):
        torch.seeds.append(seed)
        torch.generator = np.random.RandomState(seed % 2**32)

    torch.as_tensor, torch.manual_seed = as_tensor, manual_seed
    return torch


@pytest.fixture
def torch_stub(monkeypatch):
    torch = fake_torch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    return torch


def test_from_torch_converts_arguments_and_results(torch_stub):
    seen = {}

    def f(v, n):
        seen["v"], seen["n"] = v, n
        return (FakeTensor(v.values * 2, v.dtype, v.device), {"a": FakeTensor([1], v.dtype, "cuda")})

    g = testing.from_torch(f, dtype="float32", device="cuda:0")
    out = g(np.ones((2, 3)), 5)
    assert isinstance(seen["v"], FakeTensor) and seen["v"].dtype is np.float32
    assert seen["v"].device == "cuda:0" and seen["n"] == 5  # an int passes unchanged
    assert isinstance(out, tuple) and out[0].dtype == np.float64
    assert np.array_equal(out[0], 2 * np.ones((2, 3))) and out[1]["a"].tolist() == [1.0]
    assert torch_stub.seeds == []  # no generator given, none seeded


def test_from_torch_seeds_the_global_generator_from_the_checks(torch_stub):
    def draw(v):  # a library drawing from torch's global generator
        return FakeTensor(torch_stub.generator.random_sample(v.values.shape), v.dtype, "cpu")

    g = testing.from_torch(draw)
    a = g(np.zeros((2, 2)), np.random.default_rng(7))
    b = g(np.zeros((2, 2)), np.random.default_rng(7))
    c = g(np.zeros((2, 2)), np.random.default_rng(8))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert torch_stub.seeds[0] == np.random.default_rng(7).integers(2**63)
    rng = np.random.default_rng(7)
    g(np.zeros((2, 2)), rng)
    assert not np.array_equal(g(np.zeros((2, 2)), rng), a)  # the check's generator advances


def test_from_torch_also_seeds_numpy_when_asked(torch_stub):
    g = testing.from_torch(lambda v: FakeTensor(np.random.random_sample(2), v.dtype, "cpu"),
                           seed_numpy=True)
    assert np.array_equal(g(np.zeros(1), np.random.default_rng(3)),
                          g(np.zeros(1), np.random.default_rng(3)))


def test_from_torch_sampler_passes_the_check(torch_stub):
    """A sampler of h | v drawing from torch's global generator, through the adapter."""
    def sample_h(v):
        p = 1 / (1 + np.exp(-(v.values @ W + C)))
        return FakeTensor(torch_stub.generator.random_sample(p.shape) < p, v.dtype, "cpu")

    testing.check_sampler(testing.from_torch(sample_h), (W, B, C), given="visible",
                          rng=np.random.default_rng(11))


def test_from_torch_refusals(torch_stub, monkeypatch):
    with pytest.raises(TypeError, match="f must be callable"):
        testing.from_torch(3)
    with pytest.raises(ValueError, match="dtype must be one of"):
        testing.from_torch(abs, dtype="float16")
    g = testing.from_torch(lambda a, b: a)
    with pytest.raises(TypeError, match="more than one"):
        g(np.random.default_rng(0), np.random.default_rng(1))
    monkeypatch.setitem(sys.modules, "torch", None)  # what an absent module looks like
    with pytest.raises(ImportError, match=r"from_torch needs torch.*pip install torch"):
        testing.from_torch(abs)


def fake_jax():
    jax = types.ModuleType("jax")
    jnp = types.ModuleType("jax.numpy")
    jax.numpy, jax.x64 = jnp, [False]
    jax.random = types.SimpleNamespace(key=lambda seed: ("key", seed))

    @contextlib.contextmanager
    def enable_x64(flag):
        before, jax.x64[0] = jax.x64[0], flag
        yield
        jax.x64[0] = before

    def asarray(x, dtype):
        assert dtype == ("float64" if jax.x64[0] else "float32")
        return np.asarray(x, dtype=dtype)

    jax.enable_x64, jnp.asarray = enable_x64, asarray
    return jax, jnp


def test_from_jax_makes_a_key_and_runs_in_the_stated_precision(monkeypatch):
    jax, jnp = fake_jax()
    monkeypatch.setitem(sys.modules, "jax", jax)
    monkeypatch.setitem(sys.modules, "jax.numpy", jnp)
    seen = []

    def gibbs(key, v):
        seen.append((key, v.dtype, jax.x64[0]))
        return v.astype(np.float32)

    rng = np.random.default_rng(4)
    out = testing.from_jax(gibbs, x64=False)(np.ones((2, 2)), rng)
    assert seen[0] == (("key", np.random.default_rng(4).integers(2**31)), np.float32, False)
    assert out.dtype == np.float64 and not jax.x64[0]
    testing.from_jax(lambda v, key: (seen.append(key), v)[1], key_first=False)(
        np.ones(1), np.random.default_rng(4))
    assert seen[-1] == seen[0][0]
    monkeypatch.setitem(sys.modules, "jax", None)
    with pytest.raises(ImportError, match="from_jax needs jax"):
        testing.from_jax(abs)


def test_from_numpy_and_per_row():
    impl = NumpyRBM(W, B, C)

    def sample_h(v):  # a library drawing from NumPy's global generator
        p = impl.prob_h_given_v(v)
        return np.random.random_sample(p.shape) < p

    testing.check_sampler(testing.from_numpy(sample_h), (W, B, C), given="visible",
                          rng=np.random.default_rng(12))
    with pytest.raises(ValueError, match="dtype must be one of"):
        testing.from_numpy(abs, dtype="int8")
    half = testing.from_numpy(lambda x: x, dtype="float32")(np.full(2, 0.1))
    assert half.dtype == np.float64 and half[0] == np.float32(0.1)  # float32 values kept
    batch_mean = lambda v: impl.free_energy(v).mean()  # noqa: E731 (one number per batch)
    testing.check_free_energy(testing.per_row(batch_mean), (W, B, C))
    with pytest.raises(TypeError, match="f must be callable"):
        testing.per_row(None)


def torch_rbm(torch, dtype):
    t = lambda x: torch.as_tensor(x, dtype=dtype)  # noqa: E731
    W_, b_, c_ = t(W), t(B), t(C)
    W_.requires_grad_(True)  # as a trained model's weights: outputs need .detach()

    def gibbs(v):
        h = torch.bernoulli(torch.sigmoid(v @ W_ + c_))
        return torch.bernoulli(torch.sigmoid(h @ W_.T + b_))

    return dict(prob_h_given_v=lambda v: torch.sigmoid(v @ W_ + c_),
                energy=lambda v, h: -v @ b_ - h @ c_ - ((v @ W_) * h).sum(1),
                free_energy=lambda v: -v @ b_ - torch.nn.functional.softplus(v @ W_ + c_).sum(1),
                gibbs_step=gibbs)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_real_torch_model_passes_in_one_call(dtype):
    torch = pytest.importorskip("torch")
    code = torch_rbm(torch, getattr(torch, dtype))
    report = testing.check_implementation(
        model=(W, B, C), dtype=dtype,
        **{name: testing.from_torch(f, dtype=dtype) for name, f in code.items()})
    assert report.passed, str(report)
    assert [r.check for r in report.rows] == ["conditionals", "joint energy", "free energy",
                                              "free energy from your energy", "Gibbs step"]


def test_real_jax_model_passes_in_one_call():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    def gibbs(key, v):
        k1, k2 = jax.random.split(key)
        h = jax.random.bernoulli(k1, jax.nn.sigmoid(v @ W + C)).astype(v.dtype)
        return jax.random.bernoulli(k2, jax.nn.sigmoid(h @ W.T + B)).astype(v.dtype)

    report = testing.check_implementation(
        model=(W, B, C), gibbs_step=testing.from_jax(gibbs),
        free_energy=testing.from_jax(lambda v: -v @ B - jnp.logaddexp(0, v @ W + C).sum(-1)))
    assert report.passed, str(report)
