"""What a distilled student's adapter asks of a retrieval: the local backend's LoRA,
the prompt variant and tool options it was trained with, and its strategy.

The adapter's metadata is read by the model code (``ark.llm.local.adapter_metadata``);
what it means for a retrieval is decided here, with the strategies it configures,
because it names a ``ToolConfig`` and a strategy, which the model layer below the tools
must not know. Evaluation, the CLI and distillation all read it from here (evaluation
must not reach into distillation for it).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from ark.errors import ArkError
from ark.tools import ToolConfig


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
    from ark.llm.local import adapter_metadata  # the engine loads only when it is used

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
