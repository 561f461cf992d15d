"""What a distilled student's adapter asks of a retrieval: the local backend's LoRA,
the prompt variant and tool options it was trained with, and its strategy.

Read from the adapter's own GGUF metadata. It lives with the strategies, which it
configures: evaluation, the CLI and distillation all read it from here (evaluation
must not reach into distillation for it).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from ark.errors import ArkError
from ark.tools import ToolConfig


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


@dataclasses.dataclass(frozen=True)
class AdapterSettings:
    """What ``--adapter PATH.gguf`` changes, as recorded in the adapter: the local
    backend's LoRA, the prompt variant the student was trained with, the tool
    options it was trained to call (e.g. a hop over a set of nodes), and whether it
    learned from observations with ark-guided's hints (then ``strategy`` is
    ``"ark-guided"``, the default of a command given no ``--strategy``)."""

    llm_kwargs: dict[str, object]
    prompt: str
    tools: ToolConfig
    hints: bool = False

    @property
    def strategy(self) -> str | None:
        """The strategy the student was trained for, if it needs one other than ark's."""
        return "ark-guided" if self.hints else None


def adapter_settings(
    adapter: str | Path | None, base_url: str | None, tools: ToolConfig | None = None
) -> AdapterSettings:
    """The settings of ``--adapter`` (none: the base model, the full prompt and
    ``tools`` unchanged), read from the adapter's metadata once."""
    tools = tools or ToolConfig()
    if adapter is None:
        return AdapterSettings({}, "full", tools)
    if base_url:
        raise ArkError(
            "--adapter applies a LoRA to the local model; it cannot be used with --base-url"
        )
    meta = adapter_metadata(adapter)
    raw = meta.get("tools")
    if raw:
        try:
            recorded = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ArkError(f"adapter {adapter}: ark.tools is not JSON ({exc})") from exc
        known = {f.name for f in dataclasses.fields(ToolConfig)}
        tools = dataclasses.replace(tools, **{k: v for k, v in recorded.items() if k in known})
    return AdapterSettings(
        {"lora_path": adapter}, meta.get("prompt", "full"), tools, meta.get("hints") == "true"
    )
