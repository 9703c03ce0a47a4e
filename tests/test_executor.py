"""The `executor` argument of rbm.exact: the same bits as local threads on any
concurrent.futures executor, a clear error when a task fails, Ctrl-C within a second
with every outstanding task cancelled, and on a real Dask cluster the same again with a
worker killed mid-way."""

import _thread
import concurrent.futures as cf
import contextlib
import inspect
import multiprocessing
import os
import pickle
import signal
import threading
import time
import types

import numpy as np
import pytest

import rbm
from rbm import exact
from rbm._enumeration import block_size, layer_setup, segment_sums, segments

# 2**20 hidden states times 30 visible units: 16 segments, about a second on one core.
MODEL = rbm.RBM.random(30, 20, scale=0.1, rng=0)
# Seconds from Ctrl-C to KeyboardInterrupt in the caller (the promise is "within about
# a second"; the caller wakes every 0.05 s).
STOP_WITHIN = 1.0


def block_ranges(model):
    """The segments the enumeration of `model` is cut into."""
    n_x, n_y = layer_setup(model, None)[2].shape
    return segments(2**n_x // block_size(n_x, n_y), 2**n_x * n_y)


def data_for(model):
    return (np.random.default_rng(1).random((10, model.n_visible)) < 0.3).astype(float)


def local_results(model=MODEL):
    """log Z and the flat gradient on local threads; the same for 1 and 2 threads."""
    results = [(exact.log_partition(model, n_threads=n),
                exact.gradient(model, data_for(model), n_threads=n).flat()) for n in (1, 2)]
    assert results[0][0] == results[1][0]
    assert np.array_equal(results[0][1], results[1][1])
    return results[0]


def assert_same_bits(executor, model=MODEL):
    log_z, grad = local_results(model)
    assert exact.log_partition(model, executor=executor) == log_z
    assert np.array_equal(exact.gradient(model, data_for(model), executor=executor).flat(),
                          grad)


class Recording:
    """Forwards ``submit`` to `executor` and keeps every future it returns."""

    def __init__(self, executor):
        self.executor = executor
        self.futures = []

    def submit(self, fn, *args):
        future = self.executor.submit(fn, *args)
        self.futures.append(future)
        return future


class Synchronous:
    """Runs each task at once in the caller; the task for `failing` blocks raises instead."""

    def __init__(self, failing=None):
        self.failing = failing
        self.futures = []

    def submit(self, fn, problem, start, stop):
        future = cf.Future()
        if (start, stop) == self.failing:
            future.set_exception(OSError("the worker's machine went away"))
        else:
            future.set_result(fn(problem, start, stop))
        self.futures.append(future)
        return future


class Stalled:
    """Accepts every task and never runs one: the caller waits until interrupted."""

    def __init__(self):
        self.futures = []

    def submit(self, fn, *args):
        self.futures.append(cf.Future())
        return self.futures[-1]


@contextlib.contextmanager
def interrupt_after(seconds):
    """Ctrl-C for the main thread, `seconds` from now, as a notebook interrupt sends it.

    The timer is cancelled when the block ends: a computation that ends before the
    interrupt fails its test, instead of being interrupted later in some other code."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("KeyboardInterrupt reaches only the main thread")
    timer = threading.Timer(seconds, _thread.interrupt_main)
    timer.start()
    try:
        yield timer
    finally:
        timer.cancel()


def test_the_test_model_has_several_segments():
    assert len(block_ranges(MODEL)) == 16


@pytest.mark.parametrize("n_workers", [1, 2])
def test_a_thread_pool_gives_the_same_bits_as_local_threads(n_workers):
    with cf.ThreadPoolExecutor(max_workers=n_workers) as pool:
        assert_same_bits(pool)


def test_a_process_pool_gives_the_same_bits_as_local_threads():
    context = multiprocessing.get_context("forkserver")
    with cf.ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        assert_same_bits(pool)
        data = data_for(MODEL)
        assert exact.log_likelihood(MODEL, data, executor=pool) == exact.log_likelihood(MODEL,
                                                                                          data)


def test_one_segment_on_an_executor_gives_the_same_bits():
    small = rbm.RBM.random(12, 9, scale=1.0, rng=3)
    assert len(block_ranges(small)) == 1
    with cf.ThreadPoolExecutor(max_workers=1) as pool:
        assert_same_bits(pool, small)


def test_the_stable_path_on_an_executor_gives_the_same_bits():
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        log_z, moments = exact._enumerate(MODEL, moments=True, method="stable", executor=pool)
    local_z, local_moments = exact._enumerate(MODEL, moments=True, method="stable", n_threads=2)
    assert log_z == local_z
    for name in ("vh", "v", "h"):
        assert np.array_equal(getattr(moments, name), getattr(local_moments, name))


def test_a_segment_sum_survives_pickling():
    """What a worker process sends back: the same numbers after a round trip."""
    a_x, a_y, M, _ = layer_setup(MODEL, None)
    problem = (a_x, a_y, M, block_size(*M.shape), True, "product")
    acc = segment_sums(problem, 0, 4)
    copy = pickle.loads(pickle.dumps(acc))
    assert copy.shift == acc.shift and copy.total == acc.total
    for mine, theirs in zip(acc._arrays(), copy._arrays()):
        assert np.array_equal(mine, theirs)


def test_a_failed_task_raises_runtime_error_naming_its_blocks():
    start, stop = block_ranges(MODEL)[5]
    executor = Synchronous(failing=(start, stop))
    with pytest.raises(RuntimeError, match=f"blocks {start} to {stop - 1} failed") as info:
        exact.log_partition(MODEL, executor=executor)
    assert isinstance(info.value.__cause__, OSError)


def kill_on_first_result(executor, pid):
    """Make `executor` kill process `pid` as soon as its first task has finished."""
    killed = threading.Event()

    def kill(_future):
        if not killed.is_set():
            killed.set()
            os.kill(pid, signal.SIGKILL)

    submit = executor.submit

    def submit_and_watch(fn, *args):
        future = submit(fn, *args)
        future.add_done_callback(kill)
        return future

    executor.submit = submit_and_watch
    return killed


def test_a_process_pool_whose_worker_dies_raises_runtime_error():
    """The pool marks every task of a dead worker failed: an error, never a partial sum."""
    context = multiprocessing.get_context("forkserver")
    with cf.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        executor = Recording(pool)
        killed = kill_on_first_result(executor, pool.submit(os.getpid).result())
        with pytest.raises(RuntimeError, match=r"blocks \d+ to \d+") as info:
            exact.model_expectations(MODEL, executor=executor)
    assert killed.is_set()
    assert isinstance(info.value.__cause__, cf.process.BrokenProcessPool)


def test_an_executor_that_refuses_tasks_raises_runtime_error():
    pool = cf.ThreadPoolExecutor(max_workers=1)
    pool.shutdown()
    with pytest.raises(RuntimeError, match="refused the task for blocks 0 to 3") as info:
        exact.log_partition(MODEL, executor=pool)
    assert "after shutdown" in str(info.value.__cause__)


@pytest.mark.parametrize("bad", [object(), "pool", types.SimpleNamespace(submit=None)])
def test_an_executor_without_submit_is_refused_by_name(bad):
    with pytest.raises(TypeError, match="executor must have a callable submit"):
        exact.log_partition(MODEL, executor=bad)


def test_an_executor_with_n_threads_is_refused():
    with cf.ThreadPoolExecutor(max_workers=1) as pool:
        with pytest.raises(ValueError, match="n_threads cannot be given with executor"):
            exact.model_expectations(MODEL, n_threads=2, executor=pool)


def test_ctrl_c_stops_the_wait_within_a_second_and_cancels_every_task():
    executor = Stalled()
    start = time.perf_counter()
    with interrupt_after(0.3), pytest.raises(KeyboardInterrupt):
        exact.gradient(MODEL, data_for(MODEL), executor=executor)
    assert time.perf_counter() - start < 0.3 + STOP_WITHIN
    assert len(executor.futures) == 16
    assert all(future.cancelled() for future in executor.futures)


def test_ctrl_c_on_a_thread_pool_cancels_the_tasks_not_started():
    long = rbm.RBM.random(784, 22, scale=0.1, rng=0)  # 16 segments of 0.2 s or more
    with cf.ThreadPoolExecutor(max_workers=1) as pool:
        executor = Recording(pool)
        with interrupt_after(0.3), pytest.raises(KeyboardInterrupt):
            exact.log_partition(long, executor=executor)
        # only the running segment goes on (to be discarded); none of the others starts
        assert sum(future.running() for future in executor.futures) <= 1
        assert all(future.done() or future.running() for future in executor.futures)
        assert any(future.cancelled() for future in executor.futures)
        # and the pool, which the caller owns, still works
        assert exact.log_partition(MODEL, executor=pool) == exact.log_partition(MODEL)


def test_every_function_that_takes_n_threads_takes_executor():
    takes_threads = [name for name in exact.__all__
                     if callable(getattr(exact, name))
                     and "n_threads" in inspect.signature(getattr(exact, name)).parameters]
    assert {"log_partition", "model_expectations", "gradient",
            "log_likelihood"} <= set(takes_threads)
    for name in takes_threads:
        parameter = inspect.signature(getattr(exact, name)).parameters.get("executor")
        assert parameter is not None, f"{name} takes n_threads but not executor"
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.default is None


# -- a real Dask cluster: two worker processes, each with a nanny that restarts it ----

@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    # The scheduler serves HTTP even without a dashboard, by default on port 8787, and
    # warns when that is taken (by another test run): port 0 takes a free one in silence.
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address="127.0.0.1:0") as cluster:
        with distributed.Client(cluster) as client:
            yield client


def test_a_dask_cluster_gives_the_same_bits_as_local_threads(dask_client):
    assert_same_bits(dask_client.get_executor())


@pytest.mark.slow
def test_a_dask_worker_killed_mid_way_changes_no_bit(dask_client):
    """The first segment back kills a worker while the others are queued or running: Dask
    reruns the lost tasks on the other worker (or, past its retries, the call raises)."""
    model = rbm.RBM.random(784, 18, scale=0.1, rng=2)
    expected = exact.model_expectations(model, n_threads=1)
    pids = dask_client.run(os.getpid)
    victim = pids[sorted(pids)[0]]
    executor = Recording(dask_client.get_executor())
    killed = kill_on_first_result(executor, victim)
    try:
        found = exact.model_expectations(model, executor=executor)
    except RuntimeError as error:
        assert "blocks" in str(error)
    else:
        for name in ("vh", "v", "h"):
            assert np.array_equal(getattr(found, name), getattr(expected, name))
    assert killed.is_set()
    dask_client.wait_for_workers(2, timeout=60)


@pytest.mark.slow
def test_ctrl_c_on_a_dask_cluster_stops_within_a_second_and_leaves_it_working(dask_client):
    executor = Recording(dask_client.get_executor())
    # 16 tasks of about 1 s each with numpy (0.3 s compiled): with numba installed on a quiet
    # machine, 22 hidden units (a quarter of the work) finished before the interrupt
    long = rbm.RBM.random(784, 24, scale=0.1, rng=0)
    start = time.perf_counter()
    with interrupt_after(0.5), pytest.raises(KeyboardInterrupt):
        exact.log_partition(long, executor=executor)
    assert time.perf_counter() - start < 0.5 + STOP_WITHIN
    # every task is finished or cancelled (a running one goes on, its result discarded)
    assert all(future.done() for future in executor.futures)
    assert any(future.cancelled() for future in executor.futures)
    assert_same_bits(dask_client.get_executor())
