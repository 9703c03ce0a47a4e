"""Timing helpers shared by the benchmarks: repeats, median and range, peak memory."""

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def timed(function, repeats):
    """Run `function` `repeats` times; return (median, min, max) seconds and the last result."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return {"median": statistics.median(times), "min": min(times), "max": max(times),
            "repeats": repeats}, result


def peak_rss_mib():
    """Peak resident memory of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_isolated(module, *args):
    """Run ``python -m benchmarks.<module> args`` in a fresh process; return its JSON line.

    A fresh process makes the peak-memory reading belong to that one case.
    """
    out = subprocess.run([sys.executable, "-m", f"benchmarks.{module}", *map(str, args)],
                         check=True, capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parent.parent)
    return json.loads(out.stdout.strip().splitlines()[-1])


def machine():
    """What the numbers were measured on."""
    import numpy as np

    info = {"python": platform.python_version(), "numpy": np.__version__,
            "cores": len(os.sched_getaffinity(0)), "platform": platform.platform()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        mem_kib = int(Path("/proc/meminfo").read_text().split()[1])
        info["memory_gib"] = round(mem_kib / 2**20, 1)
    except OSError:
        pass
    try:
        from threadpoolctl import threadpool_info

        info["blas"] = [f"{p['internal_api']} {p['version']} ({p['num_threads']} threads)"
                        for p in threadpool_info()]
    except ImportError:
        pass
    return info


def fmt_time(t):
    return f"{t['median']:.3f} s [{t['min']:.3f}, {t['max']:.3f}]"
