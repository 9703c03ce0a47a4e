"""tools/numeric_environments.py: which numeric environments the notebooks run again under."""

import os

import pytest
from tool_scripts import load_tool

ne = load_tool("numeric_environments")

AVX512 = {"avx", "avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd"}
AVX2 = {"avx", "avx2", "fma"}
FULL = ["AVX512_ICL", "AVX512_SPR", "X86_V3", "X86_V4"]


def test_an_avx512_machine_runs_the_generic_and_the_haswell_environment():
    envs = ne.environments({"architecture": "SkylakeX", "dispatch": FULL}, AVX512, "x86_64")
    assert envs == {
        "generic": {"OPENBLAS_CORETYPE": "Sandybridge",
                    "NPY_DISABLE_CPU_FEATURES": "AVX512_ICL AVX512_SPR X86_V3 X86_V4"},
        "haswell": {"OPENBLAS_CORETYPE": "Haswell",
                    "NPY_DISABLE_CPU_FEATURES": "AVX512_ICL AVX512_SPR X86_V4"}}


def test_an_avx2_machine_runs_the_generic_environment_only():
    envs = ne.environments({"architecture": "Haswell", "dispatch": ["X86_V3"]}, AVX2, "x86_64")
    assert set(envs) == {"generic"}
    assert envs["generic"]["NPY_DISABLE_CPU_FEATURES"] == "X86_V3"


def test_a_zen_machine_counts_as_haswell_and_gets_skylakex_where_it_has_avx512():
    envs = ne.environments({"architecture": "Zen", "dispatch": FULL}, AVX512, "x86_64")
    assert set(envs) == {"generic", "skylakex"}


def test_an_arm_machine_runs_the_generic_armv8_kernel():
    envs = ne.environments({"architecture": "NEOVERSEN1", "dispatch": ["ASIMDHP", "ASIMDDP"]},
                           {"asimd", "asimdhp"}, "aarch64")
    assert envs == {"generic": {"OPENBLAS_CORETYPE": "ARMV8",
                                "NPY_DISABLE_CPU_FEATURES": "ASIMDHP ASIMDDP"}}


def test_an_environment_that_did_not_take_effect_is_an_error():
    settings = {"OPENBLAS_CORETYPE": "Sandybridge", "NPY_DISABLE_CPU_FEATURES": "X86_V3"}
    ne.took_effect("generic", settings, {"architecture": "Sandybridge", "dispatch": []})
    with pytest.raises(RuntimeError, match="Haswell"):
        ne.took_effect("generic", settings, {"architecture": "Haswell", "dispatch": []})
    with pytest.raises(RuntimeError, match="X86_V3"):
        ne.took_effect("generic", settings, {"architecture": "Sandybridge", "dispatch": ["X86_V3"]})


def test_the_generic_environment_takes_effect_on_this_machine():
    """OpenBLAS runs the forced kernel and NumPy drops every dispatched loop (a real probe)."""
    default = ne.probe()
    settings = ne.environments(default, ne.cpu_flags())["generic"]
    found = ne.probe(dict(os.environ, **settings))
    ne.took_effect("generic", settings, found)
    assert found["dispatch"] == []
