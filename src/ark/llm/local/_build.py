"""Which CPU instructions the installed llama.cpp uses, against those the CPU has.

A portable build (``CMAKE_ARGS=-DGGML_NATIVE=OFF``) stops at AVX2; on a CPU with
AVX-512 and VNNI a build for that CPU reads prompts faster, and prompt evaluation is
most of an offline answer's time (``docs/decisions/local-model.md``). Nothing here
changes the build: it says what is missing and how to rebuild, once per process.

AMX is the exception to "build for this CPU": a ``-DGGML_NATIVE=ON`` build turns on
llama.cpp's AMX kernels, which have died with SIGILL on the model's first step, with
no Python error (``docs/decisions/local-model.md``). So the install builds with
``scripts/llama-cmake-args.sh`` (each instruction set the CPU lists by name, AMX
never), AMX is not counted as missing, and before the model loads a build that has
AMX is tried in a child process and refused, with that rebuild command, if it dies.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from ark.llm._types import SlowBuildWarning

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
    'CMAKE_ARGS="{args}" pip install --force-reinstall --no-cache-dir --no-deps llama-cpp-python'
)
#: The build arguments where AMX does not run: every instruction set by name, no AMX.
NO_AMX_ARGS = "$(sh scripts/llama-cmake-args.sh)"


def rebuild_command() -> str:
    """The command that rebuilds llama.cpp for this CPU (every instruction set it
    lists, AMX left out)."""
    return REBUILD.format(args=NO_AMX_ARGS)


#: Run in a child process: load the model on the installed build and evaluate one
#: token. A build whose AMX kernels cannot run here dies with SIGILL in the child.
_AMX_PROBE = """
import sys
import llama_cpp
llm = llama_cpp.Llama(sys.argv[1], n_ctx=64, n_batch=64, n_threads=1, verbose=False)
llm.eval(llm.tokenize(b"The tiles ran", add_bos=True))
"""

_amx: dict[str, bool] = {}


def amx_runs(model_path: str | Path | None = None) -> bool:
    """Whether the installed build's AMX kernels run here: a child process loads
    ``model_path`` and evaluates a few tokens (once per process and model; its cost:
    ``docs/decisions/local-model.md``).

    Why a real run rather than a CPU flag or the kernel's permission: on this
    project's machines both say yes (``amx_tile`` listed, ``ARCH_REQ_XCOMP_PERM``
    granted, a hand-written ``tilezero`` runs), yet llama.cpp 0.3.36's AMX matrix
    kernels die with SIGILL at ``tilezero`` on the model's first step. ``True`` with no
    model to try."""
    if model_path is None:
        return True
    key = str(model_path)
    if key not in _amx:
        import subprocess
        import sys

        try:
            done = subprocess.run(
                [sys.executable, "-c", _AMX_PROBE, key], capture_output=True, timeout=300
            )
            _amx[key] = done.returncode == 0
        except (OSError, subprocess.SubprocessError):
            _amx[key] = False
    return _amx[key]


class UnusableBuildError(RuntimeError):
    """The installed llama.cpp uses instructions this process may not run (AMX)."""


def check_usable(features: set[str], amx: bool) -> None:
    """Refuse a build that would die on its first matrix product: one compiled with
    AMX where AMX does not run (SIGILL, which Python cannot catch)."""
    if "AMX_INT8" in features and not amx:
        raise UnusableBuildError(
            "the installed llama.cpp was built with AMX, which this machine lists but does "
            "not run (the model would crash on its first step); rebuild it without AMX, "
            f"from the repository root: {REBUILD.format(args=NO_AMX_ARGS)}"
        )


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


def missing_instructions(features: set[str], flags: set[str], *, amx: bool = True) -> list[str]:
    """llama.cpp's names of the x86 instruction sets the CPU has and the build lacks
    (AMX only where ``amx``: it runs here)."""
    return [
        name
        for name, flag in X86_FLAGS.items()
        if flag in flags and name not in features and (amx or not name.startswith("AMX"))
    ]


def build_report() -> tuple[str, list[str]]:
    """This build's feature line and what it leaves out of this CPU (empty where the
    CPU's flags cannot be read: not Linux, not x86)."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode("utf-8", errors="replace").strip()
    try:
        flags = cpu_flags(Path("/proc/cpuinfo").read_text())
    except OSError:
        flags = set()
    return info, missing_instructions(build_features(info), flags, amx=False)


_warned = False


def warn_if_slow_build(model_path: str | Path | None = None) -> None:
    """One :class:`SlowBuildWarning` per process when the build leaves out instruction
    sets this CPU has (silence it with ``warnings.filterwarnings``); an
    :class:`UnusableBuildError` when the build has AMX and AMX does not run here
    (tried on ``model_path``)."""
    global _warned
    if _warned:
        return
    info, missing = build_report()
    if "AMX_INT8" in build_features(info):
        check_usable(build_features(info), amx_runs(model_path))
    _warned = True
    if missing:
        warnings.warn(
            f"llama.cpp was built without {', '.join(missing)}, which this CPU has; a "
            f"build for this CPU reads prompts faster (about 1.45x on AVX-512 machines): "
            f"{rebuild_command()}",
            SlowBuildWarning,
            stacklevel=3,
        )
