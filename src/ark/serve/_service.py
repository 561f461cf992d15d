"""One served index that follows its updates: what ``ark mcp`` holds per index."""

from __future__ import annotations

import threading

from ark.errors import ArkError
from ark.index import Index, open_index, snapshot_stamp
from ark.session import ToolSession
from ark.tools import ErrorCode, GraphTools


class CallError(Exception):
    """A bad call of one of the server's own tools (``why``, ``answer``): the error
    code the client reads and the message; the server answers it as a tool error."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class IndexService:
    """One served index: its name (the ``index`` argument), tools and schema.

    With ``follow`` (the default), a call first checks (a few ``stat``s) whether an
    ``ark index add/remove/compact`` or a rebuild committed since, and if so serves
    the new snapshot from then on — no restart. A call in flight keeps the snapshot
    it started with; a snapshot that cannot be opened yet is retried on the next call
    while the previous one keeps serving.
    """

    def __init__(self, name: str, index: Index, *, follow: bool = True) -> None:
        self.name = name
        self.follow = follow
        self._current = (index, GraphTools(index))
        self._stamp = snapshot_stamp(index.path) if follow else None
        self._lock = threading.Lock()
        self.reloads = 0

    @property
    def index(self) -> Index:
        return self._current[0]

    @property
    def tools(self) -> GraphTools:
        return self._current[1]

    def snapshot(self) -> tuple[Index, GraphTools]:
        """The current (index, tools) pair, after picking up a committed update."""
        if self.follow and snapshot_stamp(self._current[0].path) != self._stamp:
            self._reload()
        return self._current

    def _reload(self) -> None:
        with self._lock:
            path = self._current[0].path
            stamp = snapshot_stamp(path)
            if stamp == self._stamp:
                return  # another thread reloaded meanwhile
            try:
                index = open_index(path)
            except ArkError:
                return  # mid-commit or damaged: keep serving the old snapshot
            except Exception:
                # The old snapshot still answers; the next call tries again. (Seen:
                # CPython 3.11's "AST constructor recursion depth mismatch" from
                # np.load's header parse while another thread wrote the index.)
                return
            self._current = (index, GraphTools(index))  # one assignment: a consistent pair
            self._stamp = stamp
            self.reloads += 1

    def session(self, tools: GraphTools | None = None) -> ToolSession:
        """A fresh session per call: the server keeps no state between calls (no
        answer list, no repeat detection), so concurrent clients cannot interfere."""
        tools = tools or self.tools
        return ToolSession(tools.index, tools=tools, answer_tools=False, detect_repeats=False)
