"""Serving and seeing: the tools over MCP, trajectories in the browser, a chat.

* :mod:`ark.serve.mcp_server` — ``search_in_graph``, ``search_in_neighborhood`` and
  ``get_node`` as an MCP server (stdio or streamable HTTP), through the tool session.
* :mod:`ark.serve.viewer` — one self-contained HTML file showing a run or a file of
  trajectories: queries, metrics, steps and the explored subgraph.
* :mod:`ark.serve.chat` — an interactive terminal session over a retriever.

The modules are imported on demand: the MCP SDK and prompt_toolkit come with the
``[serve]`` extra, and the viewer needs neither.
"""
