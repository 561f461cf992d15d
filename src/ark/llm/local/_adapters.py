"""A LoRA adapter's own record of how it was trained, read from its GGUF metadata.

The local engine loads the adapter (``lora_path``); this reads the ``ark.*`` keys that
``ark distill export`` writes beside the weights (the prompt variant, the tool options,
the hints). It lives with the model files because it is a property of one: what those
keys mean to a retrieval (a prompt, a ``ToolConfig``, a strategy) is decided above the
model protocol, in ``ark.strategies`` (``adapter_settings``), which the model layer must not
import.
"""

from __future__ import annotations

from pathlib import Path

from ark.errors import ArkError


def adapter_metadata(path: str | Path) -> dict[str, str]:
    """The ``ark.*`` metadata of a GGUF adapter (``prompt``, ``base``...)."""
    from gguf import GGUFReader

    path = Path(path)
    if not path.exists():
        raise ArkError(f"adapter {path} does not exist")
    reader = GGUFReader(str(path))
    kind = reader.fields.get("general.type")
    if kind is None or bytes(kind.parts[kind.data[0]]).decode() != "adapter":
        raise ArkError(f"{path} is not a GGUF adapter (general.type != adapter)")
    out = {}
    for key, f in reader.fields.items():
        if key.startswith("ark."):
            out[key[4:]] = bytes(f.parts[f.data[0]]).decode("utf-8")
    return out
