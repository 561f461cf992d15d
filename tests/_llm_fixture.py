"""A one-tool spec the local-backend tests share (a movie keyword search)."""

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
