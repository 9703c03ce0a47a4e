"""The notebook tests start a kernel again when one does not come up (chapters/conftest.py)."""

import importlib.util
from pathlib import Path

import nbval.kernel
import nbval.plugin
import pytest

_PATH = Path(__file__).resolve().parents[1] / "chapters" / "conftest.py"


@pytest.fixture
def plugin(monkeypatch):
    """chapters/conftest.py loaded as a module, with nbval's own kernel class restored after."""
    monkeypatch.setattr(nbval.plugin, "RunningKernel", nbval.plugin.RunningKernel)
    spec = importlib.util.spec_from_file_location("notebook_conftest", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeHalf:
    """Stands for a kernel manager or client: records being shut down or stopped."""

    def __init__(self, log):
        self.log = log

    def shutdown_kernel(self, now=False):
        self.log.append("shutdown")

    def stop_channels(self):
        self.log.append("stop")


def starts(monkeypatch, outcomes):
    """Make nbval's kernel start follow `outcomes` ("ok", "no start", "no iopub"), in turn."""
    log, queue = [], list(outcomes)

    def start_new_kernel(**kwargs):
        kwargs["stderr"].close()  # nbval opens os.devnull for the kernel's stderr
        outcome = queue.pop(0)
        log.append(outcome)
        if outcome == "no start":
            raise RuntimeError("Kernel didn't respond in 60 seconds")
        return FakeHalf(log), FakeHalf(log)

    def ensure_iopub_up(self):
        if log[-1] == "no iopub":
            raise RuntimeError("Wasn't able to establish IOPub after 30 seconds.")

    monkeypatch.setattr(nbval.kernel, "start_new_kernel", start_new_kernel)
    monkeypatch.setattr(nbval.kernel.RunningKernel, "_ensure_iopub_up", ensure_iopub_up)
    return log


def test_nbval_uses_the_retrying_kernel(plugin):
    assert nbval.plugin.RunningKernel is plugin.RetryingKernel


def test_a_kernel_that_does_not_start_is_started_again(plugin, monkeypatch):
    log = starts(monkeypatch, ["no start", "ok"])
    kernel = plugin.RetryingKernel("python3")
    assert log == ["no start", "ok"]
    assert kernel.km is not None


def test_a_kernel_without_iopub_is_shut_down_before_the_next_start(plugin, monkeypatch):
    log = starts(monkeypatch, ["no iopub", "ok"])
    plugin.RetryingKernel("python3")
    assert log == ["no iopub", "stop", "shutdown", "ok"]


def test_the_error_reaches_the_notebook_after_the_last_attempt(plugin, monkeypatch):
    log = starts(monkeypatch, ["no start"] * plugin.KERNEL_START_ATTEMPTS + ["ok"])
    with pytest.raises(RuntimeError, match="didn't respond"):
        plugin.RetryingKernel("python3")
    assert log == ["no start"] * plugin.KERNEL_START_ATTEMPTS
