"""Training a few steps on a tiny random Qwen2 model: loss falls, checkpoint, resume."""

import json

import pytest

from ark.distill.sft import SFTOptions, student_template_and_tokenizer, write_sft
from ark.distill.synthesize import SynthConfig, synthesize
from ark.trajectory import write_trajectories

pytest.importorskip("peft")

from ark.distill.train import TrainConfig, planned_steps, read_adapter_meta, train


@pytest.fixture(scope="module")
def sft_file(movie_index, tiny_model_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("sft")
    trajs = list(synthesize(movie_index, SynthConfig(n=8, seed=0, hops=(1,))))
    write_trajectories(root / "synth" / "trajectories.jsonl", trajs)
    template, tokenizer = student_template_and_tokenizer(tiny_model_dir)
    meta = write_sft(
        [root / "synth"],
        root / "sft.jsonl",
        movie_index.schema,
        template,
        tokenizer,
        SFTOptions(max_tokens=None),
    )
    assert meta["counts"]["kept"] == 8
    return root / "sft.jsonl"


def tiny_config(**kw):
    base = dict(
        rank=4,
        alpha=8.0,
        layer_fraction=0.5,
        lr=5e-3,
        warmup_steps=1,
        grad_accum=2,
        epochs=1.0,
        token_budget=None,
        checkpoint_every=1,
        max_len=100_000,
        dtype="fp32",
    )
    return TrainConfig(**{**base, **kw})


def adapter_weights(path):
    from safetensors.numpy import load_file

    return load_file(str(path / "adapter_model.safetensors"))


@pytest.mark.slow
def test_trains_upper_layers_and_records_its_prompt(sft_file, tiny_model_dir, tmp_path):
    meta = train(sft_file, tiny_model_dir, tmp_path / "a", tiny_config())
    assert meta["finished"] and meta["stop_reason"] == "epochs"
    assert meta["step"] == 4 and meta["position"] == 8
    assert meta["prompt"] == "short" and meta["hints"] is False
    losses = [h["loss"] for h in meta["history"]]
    assert losses[-1] < losses[0]
    weights = adapter_weights(tmp_path / "a")
    layers = {int(k.split("layers.")[1].split(".")[0]) for k in weights}
    assert layers == {2, 3}  # layer_fraction=0.5 of 4 layers: the backward stops early
    assert any("lora_B" in k and abs(v).sum() > 0 for k, v in weights.items())
    assert read_adapter_meta(tmp_path / "a")["base"] == str(tiny_model_dir)


@pytest.mark.slow
def test_checkpoint_and_resume_equal_an_uninterrupted_run(sft_file, tiny_model_dir, tmp_path):
    whole = train(sft_file, tiny_model_dir, tmp_path / "whole", tiny_config())
    first = train(sft_file, tiny_model_dir, tmp_path / "split", tiny_config(), train_steps=2)
    assert not first["finished"] and first["step"] == 2
    assert first["stop_reason"] == "train_steps"
    state = json.loads((tmp_path / "split" / "checkpoint" / "state.json").read_text())
    assert state["step"] == 2 and state["position"] == 4
    with pytest.raises(Exception, match="resume"):
        train(sft_file, tiny_model_dir, tmp_path / "split", tiny_config())
    with pytest.raises(Exception, match="rank"):
        train(sft_file, tiny_model_dir, tmp_path / "split", tiny_config(rank=8), resume=True)
    second = train(sft_file, tiny_model_dir, tmp_path / "split", tiny_config(), resume=True)
    assert second["finished"] and second["step"] == whole["step"]
    assert second["tokens"] == whole["tokens"]
    a, b = adapter_weights(tmp_path / "whole"), adapter_weights(tmp_path / "split")
    assert a.keys() == b.keys()
    for k in a:
        assert abs(a[k] - b[k]).max() < 1e-5, k


def test_records_of_another_template_are_refused(sft_file, tiny_model_dir, tmp_path):
    meta_file = sft_file.with_name(sft_file.name + ".meta.json")
    other = tmp_path / "sft.jsonl"
    other.write_bytes(sft_file.read_bytes())
    meta = json.loads(meta_file.read_text())
    (tmp_path / "sft.jsonl.meta.json").write_text(json.dumps({**meta, "template_sha256": "0"}))
    with pytest.raises(Exception, match="chat template"):
        train(other, tiny_model_dir, tmp_path / "x", tiny_config())


def test_token_budget_stops_the_run(sft_file, tiny_model_dir, tmp_path):
    meta = train(sft_file, tiny_model_dir, tmp_path / "b", tiny_config(token_budget=1))
    assert meta["stop_reason"] == "token_budget" and meta["position"] == 1


@pytest.mark.slow
def test_early_stopping_keeps_the_best_adapter(sft_file, tiny_model_dir, tmp_path):
    cfg = tiny_config(val_fraction=0.25, patience=1, lr=0.5, epochs=2.0)
    meta = train(sft_file, tiny_model_dir, tmp_path / "c", cfg)
    assert meta["val_records"] == 2 and meta["best_val"] is not None
    vals = [h["val_loss"] for h in meta["history"] if "val_loss" in h]
    assert vals and min(vals) == pytest.approx(meta["best_val"], abs=1e-4)


def test_learning_rate_decays_over_the_budgeted_run_not_the_epoch():
    records = [{"input_ids": [0] * 100}] * 1000
    assert planned_steps(records, 1000, None, 4) == 250
    assert planned_steps(records, 1000, 10_000, 4) == 25  # the budget ends it at 100
    assert planned_steps(records, 10, 10_000, 4) == 2


@pytest.mark.slow
def test_a_background_run_logs_a_line_per_step(sft_file, tiny_model_dir, tmp_path):
    """With stderr not a terminal (nohup, CI), the bar draws nothing: lines do."""
    from typer.testing import CliRunner

    from ark.cli import app

    args = ["distill", "train", str(sft_file), "--base", str(tiny_model_dir)]
    args += ["-o", str(tmp_path / "a"), "--train-steps", "2", "--grad-accum", "1"]
    args += ["--token-budget", "100000", "--dtype", "fp32", "--rank", "4"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "step 1 " in res.output and "step 2 " in res.output
    assert "/100,000 tokens" in res.output and "ETA" in res.output


def test_backward_stops_at_the_lowest_trained_layer(tiny_model_dir):
    """With the upper half trained, nothing below it needs gradients: the embeddings'
    output must not require grad (it did while ``enable_input_require_grads`` was on),
    and every LoRA weight still gets a gradient through the checkpointed layers."""
    import torch

    from ark.distill.train import load_base, lora_model

    model = lora_model(load_base(tiny_model_dir, torch.float32, "cpu"), tiny_config())
    model.train()
    seen = {}

    def hook(module, args, output):
        seen["embeddings"] = output.requires_grad

    model.get_input_embeddings().register_forward_hook(hook)
    ids = torch.randint(0, 200, (1, 64))
    model(input_ids=ids, labels=ids).loss.backward()
    assert seen == {"embeddings": False}
    lora = [p for n, p in model.named_parameters() if "lora_" in n]
    assert lora and all(p.grad is not None for p in lora)
    assert any(float(p.grad.abs().sum()) > 0 for p in lora)
    # The same gradients as with the backward pass run down to the embeddings.
    grads = [p.grad.clone() for p in lora]
    model.zero_grad()
    model.enable_input_require_grads()
    model.get_input_embeddings().register_forward_hook(hook)  # runs after PEFT's hook
    model(input_ids=ids, labels=ids).loss.backward()
    assert seen == {"embeddings": True}
    assert all(torch.allclose(g, p.grad, atol=1e-6) for g, p in zip(grads, lora, strict=True))
