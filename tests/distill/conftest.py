from pathlib import Path

import pytest

from _distill_fixture import TINY_TEMPLATE, TRIPLES
from ark.index import Index, build_index


@pytest.fixture(scope="session")
def movie_index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    root: Path = tmp_path_factory.mktemp("distill-movies")
    (root / "kb.txt").write_text(TRIPLES, encoding="utf-8")
    return build_index(root / "kb.txt", root / "idx")


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised Qwen2-architecture model with a byte-level tokenizer,
    built offline (nothing downloaded)."""
    pytest.importorskip("transformers")
    pytest.importorskip("peft")
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    root = tmp_path_factory.mktemp("tiny-qwen2")
    vocab = {ch: i for i, ch in enumerate(bytes_to_unicode().values())}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    fast.add_special_tokens({"additional_special_tokens": specials})
    fast.chat_template = TINY_TEMPLATE
    fast.save_pretrained(root)
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=len(fast),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        tie_word_embeddings=True,
    )
    Qwen2ForCausalLM(config).save_pretrained(root)
    return root
