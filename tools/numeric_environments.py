"""Run a command under numeric environments other than this machine's own.

Usage: python tools/numeric_environments.py [--only NAME[,NAME]] [--list] -- COMMAND ...

A float's last digits depend on the processor: OpenBLAS picks its kernel by CPU
(``OPENBLAS_CORETYPE`` overrides the choice) and NumPy dispatches its loops to the
widest SIMD instructions the CPU has (``NPY_DISABLE_CPU_FEATURES`` takes some away).
The book's committed outputs hold only the digits every processor reproduces; this
script proves it by running COMMAND (the notebook tests) once in each environment
below that differs from the machine's own, and fails if any run fails.

Environments (each only where this processor can run it and it is not the default):

``generic``
    The oldest kernels both libraries have: OpenBLAS's Sandybridge kernel on x86-64
    (AVX without FMA), its ARMV8 kernel on aarch64, and NumPy at its baseline (every
    dispatched feature disabled).  Always run.
``haswell``
    AVX2 with FMA, the most common laptop and server kernel: OpenBLAS's Haswell kernel
    and NumPy without its AVX-512 loops.  Run on x86-64 processors that have AVX2 and
    FMA when the default kernel is another.
``skylakex``
    AVX-512: OpenBLAS's SkylakeX kernel, NumPy with every feature the CPU has.  Run on
    processors with AVX-512 when the default kernel is another.

Before COMMAND runs, each environment is checked to have taken effect (OpenBLAS names
the kernel it chose, NumPy lists the features it uses): a forced environment that was
silently ignored would make the comparison vacuous, so that is an error too.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time

#: OpenBLAS's names of the kernels that count as the same instruction set
_SAME_KERNEL = {
    "haswell": {"haswell", "zen"},
    "skylakex": {"skylakex", "cooperlake", "sapphirerapids"},
}

_PROBE = """
import json
import numpy as np
from threadpoolctl import threadpool_info
from numpy._core._multiarray_umath import __cpu_features__, __cpu_dispatch__
blas = [i for i in threadpool_info() if i["internal_api"] == "openblas"]
print(json.dumps({
    "architecture": blas[0]["architecture"] if blas else None,
    "dispatch": sorted(f for f in __cpu_dispatch__ if __cpu_features__.get(f)),
}))
"""


def probe(env=None):
    """The OpenBLAS kernel and NumPy's usable dispatch targets in a Python started with `env`."""
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def cpu_flags():
    """The processor's feature flags, as Linux lists them (empty where it does not)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def environments(default, flags, machine=None):
    """The environments to run, as ``{name: {variable: value}}``, for this machine.

    Parameters
    ----------
    default : dict
        What `probe` gives without any variable set: ``architecture`` (OpenBLAS's
        kernel) and ``dispatch`` (NumPy's usable dispatch targets).
    flags : set of str
        The processor's feature flags (`cpu_flags`).
    machine : str, optional
        ``platform.machine()``; taken from this machine if not given.
    """
    machine = machine or platform.machine()
    arch = (default["architecture"] or "").lower()
    x86 = machine in ("x86_64", "AMD64")
    dispatch = list(default["dispatch"])
    envs = {"generic": {"OPENBLAS_CORETYPE": "Sandybridge" if x86 else "ARMV8",
                        "NPY_DISABLE_CPU_FEATURES": " ".join(dispatch)}}
    if x86 and {"avx2", "fma"} <= flags and arch not in _SAME_KERNEL["haswell"]:
        wide = [f for f in dispatch if f.startswith(("AVX512", "X86_V4"))]
        envs["haswell"] = {"OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": " ".join(wide)}
    avx512 = {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd"}
    if x86 and avx512 <= flags and arch not in _SAME_KERNEL["skylakex"]:
        envs["skylakex"] = {"OPENBLAS_CORETYPE": "SkylakeX"}
    return envs


def took_effect(name, settings, found):
    """Raise `RuntimeError` unless `found` (a `probe`) shows the environment `settings`."""
    wanted = settings.get("OPENBLAS_CORETYPE")
    kernel = (found["architecture"] or "").lower()
    if wanted and kernel != wanted.lower():
        raise RuntimeError(f"environment {name!r}: OPENBLAS_CORETYPE={wanted} was asked for "
                           f"but OpenBLAS runs its {found['architecture']!r} kernel")
    disabled = set(settings.get("NPY_DISABLE_CPU_FEATURES", "").split())
    still = disabled & set(found["dispatch"])
    if still:
        raise RuntimeError(f"environment {name!r}: NumPy still dispatches to {sorted(still)}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None,
                        help="comma-separated names of the environments to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the environments and exit")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    default = probe()
    envs = environments(default, cpu_flags())
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = sorted(set(names) - set(envs))
        if unknown:
            raise SystemExit(f"--only: {unknown} is not an environment of this machine "
                             f"(it has {sorted(envs)})")
        envs = {n: envs[n] for n in names}
    print(f"numeric environments: this machine runs OpenBLAS's {default['architecture']} "
          f"kernel and NumPy's {' '.join(default['dispatch']) or 'baseline'} loops", flush=True)
    for name, settings in envs.items():
        print(f"  {name}: " + " ".join(f"{k}='{v}'" for k, v in settings.items()), flush=True)
    if args.list:
        return 0
    if not command:
        parser.error("no command given (put it after --)")
    failed = []
    for name, settings in envs.items():
        env = dict(os.environ, **settings)
        took_effect(name, settings, probe(env))
        print(f"numeric environment {name!r}: running {' '.join(command)}", flush=True)
        start = time.monotonic()
        code = subprocess.call(command, env=env)
        print(f"numeric environment {name!r}: exit status {code} after "
              f"{time.monotonic() - start:.0f} s wall", flush=True)
        if code:
            failed.append(name)
    if failed:
        print(f"failed under {failed}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
