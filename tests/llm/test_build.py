"""What the llama.cpp build leaves out of the CPU: parsed from real-shaped texts."""

from __future__ import annotations

import warnings

import pytest

from ark.llm import SlowBuildWarning
from ark.probes import build_features, cpu_flags, missing_instructions
from ark.probes import local_build as _build

PORTABLE = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | "
    "LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 |"
)
NATIVE = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX_VNNI = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | "
    "BMI2 = 1 | AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | "
    "LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 |"
)
CPUINFO = (
    "processor\t: 0\nvendor_id\t: GenuineIntel\n"
    "flags\t\t: fpu sse sse2 ssse3 fma sse4_1 avx f16c bmi2 avx2 avx512f avx512vbmi "
    "avx512_vnni avx_vnni avx512_bf16\n"
    "processor\t: 1\nflags\t\t: fpu\n"
)


def test_the_build_line_and_the_cpu_flags_are_read() -> None:
    assert {"AVX2", "FMA", "REPACK"} <= build_features(PORTABLE)
    assert "AVX512" not in build_features(PORTABLE)
    assert build_features("CPU : AVX512 = 0 | AVX2 = 1 |") == {"AVX2"}  # 0: off
    flags = cpu_flags(CPUINFO)
    assert {"avx2", "avx512f", "avx_vnni"} <= flags and len(flags) > 5  # the first processor


def test_a_portable_build_on_an_avx512_cpu_is_missing_what_the_cpu_has() -> None:
    flags = cpu_flags(CPUINFO)
    missing = missing_instructions(build_features(PORTABLE), flags)
    assert missing == ["AVX_VNNI", "AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16"]
    assert missing_instructions(build_features(NATIVE), flags) == []
    # A CPU without AVX-512 misses nothing in a portable build; unreadable flags: nothing.
    assert missing_instructions(build_features(PORTABLE), {"avx", "avx2", "fma"}) == []
    assert missing_instructions(build_features(PORTABLE), set()) == []


def test_the_warning_names_what_is_missing_once_per_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_build, "_warned", False)
    monkeypatch.setattr(_build, "build_report", lambda: (PORTABLE, ["AVX512", "AVX512_VNNI"]))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _build.warn_if_slow_build()
        _build.warn_if_slow_build()
    assert len(seen) == 1 and issubclass(seen[0].category, SlowBuildWarning)
    assert "AVX512, AVX512_VNNI" in str(seen[0].message)
    assert "scripts/llama-cmake-args.sh" in str(seen[0].message)


AMX_BUILD = NATIVE.replace("AVX512_BF16 = 1 |", "AVX512_BF16 = 1 | AMX_INT8 = 1 |")


def test_a_build_with_amx_is_refused_where_the_kernel_does_not_grant_amx() -> None:
    """Some VMs list ``amx_tile`` and grant the permission, yet tile instructions raise
    SIGILL; an AMX build then dies on the model's first step, so it is refused up
    front, with the rebuild that leaves AMX out."""
    with pytest.raises(_build.UnusableBuildError, match="llama-cmake-args"):
        _build.check_usable(build_features(AMX_BUILD), amx=False)
    _build.check_usable(build_features(AMX_BUILD), amx=True)
    _build.check_usable(build_features(NATIVE), amx=False)  # no AMX in it: fine


def test_amx_is_not_missing_where_the_kernel_does_not_grant_it() -> None:
    flags = cpu_flags(CPUINFO) | {"amx_int8", "amx_tile"}
    assert missing_instructions(build_features(NATIVE), flags) == ["AMX_INT8"]
    # what the warning counts: AMX is left out of the builds this project makes
    assert missing_instructions(build_features(NATIVE), flags, amx=False) == []


def test_an_amx_build_is_tried_on_the_model_before_it_loads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The verdict comes from a child process running the model (asked once per model);
    a build without AMX is never tried."""
    tried: list[object] = []
    monkeypatch.setattr(_build, "_warned", False)
    monkeypatch.setattr(_build, "build_report", lambda: (AMX_BUILD, []))
    monkeypatch.setattr(_build, "amx_runs", lambda path=None: tried.append(path) or False)
    with pytest.raises(_build.UnusableBuildError, match="AMX"):
        _build.warn_if_slow_build("model.gguf")
    assert tried == ["model.gguf"]
    monkeypatch.setattr(_build, "build_report", lambda: (NATIVE, []))
    _build.warn_if_slow_build("model.gguf")
    assert tried == ["model.gguf"]
