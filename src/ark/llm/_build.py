"""Which CPU instructions the installed llama.cpp uses, against those the CPU has.

A portable build (``CMAKE_ARGS=-DGGML_NATIVE=OFF``) stops at AVX2; on a CPU with
AVX-512 and VNNI, a build for that CPU reads prompts ~1.45x faster (the 1.5B on this
project's 2-core machine, ``benchmarks/RESULTS.md``), and prompt evaluation is most of
an offline answer's time. Nothing here changes the build: it says what is missing and
how to rebuild, once per process.
"""

from __future__ import annotations

import warnings
from pathlib import Path

#: llama.cpp's names for the x86 instruction sets it reports (``llama_print_system_info``)
#: -> the flag Linux lists for each in ``/proc/cpuinfo``.
X86_FLAGS = {
    "AVX": "avx",
    "AVX2": "avx2",
    "F16C": "f16c",
    "FMA": "fma",
    "BMI2": "bmi2",
    "AVX_VNNI": "avx_vnni",
    "AVX512": "avx512f",
    "AVX512_VBMI": "avx512vbmi",
    "AVX512_VNNI": "avx512_vnni",
    "AVX512_BF16": "avx512_bf16",
    "AMX_INT8": "amx_int8",
}

REBUILD = (
    "CMAKE_ARGS='-DGGML_NATIVE=ON' pip install --force-reinstall --no-cache-dir "
    "--no-deps llama-cpp-python"
)


class SlowBuildWarning(UserWarning):
    """The installed llama.cpp leaves out instruction sets this CPU has."""


def build_features(system_info: str) -> set[str]:
    """The features a ``llama_print_system_info()`` line reports as on (``AVX2 = 1``)."""
    on = set()
    for part in system_info.replace("|", "\n").splitlines():
        name, sep, value = part.rpartition("=")
        if sep and value.strip() == "1":
            on.add(name.split(":")[-1].strip())
    return on


def cpu_flags(cpuinfo: str) -> set[str]:
    """The instruction flags of the first processor in a ``/proc/cpuinfo`` text."""
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() == "flags":
            return set(value.split())
    return set()


def missing_instructions(features: set[str], flags: set[str]) -> list[str]:
    """llama.cpp's names of the x86 instruction sets the CPU has and the build lacks."""
    return [name for name, flag in X86_FLAGS.items() if flag in flags and name not in features]


def build_report() -> tuple[str, list[str]]:
    """This build's feature line and what it leaves out of this CPU (empty where the
    CPU's flags cannot be read: not Linux, not x86)."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode("utf-8", errors="replace").strip()
    try:
        flags = cpu_flags(Path("/proc/cpuinfo").read_text())
    except OSError:
        flags = set()
    return info, missing_instructions(build_features(info), flags)


_warned = False


def warn_if_slow_build() -> None:
    """One :class:`SlowBuildWarning` per process when the build leaves out instruction
    sets this CPU has (silence it with ``warnings.filterwarnings``)."""
    global _warned
    if _warned:
        return
    _warned = True
    _, missing = build_report()
    if missing:
        warnings.warn(
            f"llama.cpp was built without {', '.join(missing)}, which this CPU has; a "
            f"build for this CPU reads prompts faster (about 1.45x on AVX-512 machines): "
            f"{REBUILD}",
            SlowBuildWarning,
            stacklevel=3,
        )
