"""The one set of error codes that tools, the tool session and MCP share.

A code names the fault, not the place it was found: a malformed argument is
``bad_argument`` whether the tool or the session noticed it. The values are public
(``ark neighbors --json``, trajectories, MCP tool errors), so they only ever grow.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """Why a tool call did not run (or ran but was refused)."""

    #: No tool of that name is offered.
    UNKNOWN_TOOL = "unknown_tool"
    #: Arguments not a JSON object, an unknown or missing argument, or a value of the
    #: wrong kind (``node_index="x"``, ``node_type=[1]``, more than 50 indices to add).
    BAD_ARGUMENT = "bad_argument"
    #: ``k`` outside 1..100.
    BAD_K = "bad_k"
    #: A node index that is not in the graph.
    UNKNOWN_NODE = "unknown_node"
    #: A node type or relation name the graph does not have (closest names suggested);
    #: on a graph of free-text relations, an ``edge_type`` phrase that matches no
    #: relation by label or lemma (``ark.tools._phrases``).
    UNKNOWN_NODE_TYPE = "unknown_node_type"
    UNKNOWN_EDGE_TYPE = "unknown_edge_type"
    #: A blank global query, or one with no searchable word.
    EMPTY_QUERY = "empty_query"
    NO_TERMS = "no_terms"
    #: ``add_to_answer`` with a node no tool has returned in this session; with the
    #: hints of ``ark-guided``, also ``search_in_neighborhood`` from such a node (not
    #: run: an index never shown is a count or a guess, ``ToolSession.unseen_centers``).
    UNSEEN_NODE = "unseen_node"
    #: The same search as an earlier one (arguments compared after normalisation).
    REPEATED_CALL = "repeated_call"
    #: ``finish`` with an empty answer list (questioned once, then accepted).
    EMPTY_ANSWER = "empty_answer"
    #: A call after ``finish`` in the same reply: not run.
    AFTER_FINISH = "after_finish"
    #: The model's reply was cut at its token limit before the call was complete.
    OUTPUT_CUT = "output_cut"


#: Every code with a one-line meaning, for documentation and MCP clients.
ERROR_CODES: dict[str, str] = {
    ErrorCode.UNKNOWN_TOOL: "no tool of that name is offered",
    ErrorCode.BAD_ARGUMENT: "arguments malformed, unknown, missing or of the wrong kind",
    ErrorCode.BAD_K: "k outside 1..100",
    ErrorCode.UNKNOWN_NODE: "node index not in the graph",
    ErrorCode.UNKNOWN_NODE_TYPE: "node type not in the graph (closest names suggested)",
    ErrorCode.UNKNOWN_EDGE_TYPE: (
        "relation not in the graph, or a phrase matching none (closest names suggested)"
    ),
    ErrorCode.EMPTY_QUERY: "blank query",
    ErrorCode.NO_TERMS: "query has no searchable word",
    ErrorCode.UNSEEN_NODE: (
        "add_to_answer (or, with ark-guided's hints, exploring) from a node no tool has returned"
    ),
    ErrorCode.REPEATED_CALL: "the same search as an earlier one (after normalisation)",
    ErrorCode.EMPTY_ANSWER: "finish with an empty answer list (questioned once)",
    ErrorCode.AFTER_FINISH: "a call after finish in the same reply; not run",
    ErrorCode.OUTPUT_CUT: "the reply was cut at max_tokens before the call was complete",
}
