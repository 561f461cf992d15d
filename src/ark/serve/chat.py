"""``ark chat``: question a graph interactively, the way the paper's own CLI does.

Each question runs the retriever (ARK's agents, fused by vote) with every tool call
shown as it happens, then the ranked answer. Commands look back at the last answer:
``/why N`` shows how node N was reached — the chain of tool calls from a global search
through the neighborhoods explored to the node — ``/agents`` and ``/steps`` summarise
the trajectories, ``/save FILE`` writes them, ``/view [FILE]`` writes the HTML view.
History is kept across questions (arrow keys; ``--history-file`` keeps it on disk).
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape as _markup_escape
from rich.table import Table

from ark._safe import printable
from ark.answer import Answer, aanswer_question, recited_note
from ark.index import Index
from ark.llm import ChatModel
from ark.retrieval import RetrievalResult, Retriever, paths_to
from ark.strategies import AgentEvent
from ark.tools import written_arguments
from ark.trajectory import ToolCallRecord, Trajectory, write_trajectories


def escape(text: str) -> str:
    """Rich markup escaped and control characters written out (graph and model text
    cannot drive the terminal)."""
    return _markup_escape(printable(text))


HELP = """\
Type a question to retrieve its answer from the graph. Commands:
  /why [N]      how node N (default: the top answer) was reached, per agent
  /agents       each agent's stop reason, steps, time and answer
  /steps        every step of the last question
  /save FILE    append this session's trajectories to FILE (JSONL)
  /view [FILE]  write this session's HTML view (default ark-chat.html) and name it
  /help         this text
  /quit         leave (also Ctrl-D)"""


class ChatSession:
    """The state of one chat: a retriever and every answer given so far."""

    def __init__(
        self,
        index: Index,
        llm: ChatModel,
        *,
        strategy: str = "ark",
        agents: int = 1,
        max_steps: int = 20,
        temperature: float = 0.7,
        answer: bool = False,
        console: Console | None = None,
    ) -> None:
        self.index = index
        #: Whether each question is answered in words after the ranking (``--answer``).
        self.answer = answer
        self.console = console or Console(highlight=False)
        self.n_agents = agents
        self.retriever = Retriever(
            index,
            llm,
            strategy=strategy,
            n_agents=agents,
            max_steps=max_steps,
            temperature=temperature,
            on_event=self._show_event,
        )
        self.results: list[RetrievalResult] = []
        #: The answer in words to the last question (``--answer``; else ``None``).
        self.last_answer: Answer | None = None

    @property
    def last(self) -> RetrievalResult | None:
        return self.results[-1] if self.results else None

    # -- asking ----------------------------------------------------------------------------

    async def ask(self, question: str) -> RetrievalResult:
        question_id = f"chat-{len(self.results) + 1}"
        answer: Answer | None = None
        if self.answer:
            answered = await aanswer_question(self.retriever, question, question_id)
            result, answer = answered.retrieval, answered.answer
        else:
            result = await self.retriever.aretrieve(question, question_id=question_id)
        self.results.append(result)
        self.last_answer = answer
        self._show_ranking(result)
        if answer is not None:
            self._show_answer(answer)
        return result

    def _show_answer(self, a: Answer) -> None:
        """The answer in words and each citation, checked against the text of the
        nodes shown (:func:`ark.answer.check_citations`)."""
        g = self.index.graph
        if a.answerable:
            self.console.print(f"[bold]Answer:[/] {escape(a.text)}", soft_wrap=True)
        else:
            said = f" (the model: {escape(a.text)})" if a.text else ""
            reason = escape(a.reason or "")
            self.console.print(f"[yellow]No answer:[/] {reason}{said}", soft_wrap=True)
        for c in a.citations:
            self.console.print(f"  cites {escape(f'[{c}]')} {escape(g.name(c))} ({g.type_name(c)})")
        if note := recited_note(a.recited_from, a.citations):
            self.console.print(f"  {escape(note)}")

    def _show_event(self, event: AgentEvent) -> None:
        tag = f"agent {event.agent + 1} " if self.n_agents > 1 else ""
        mark = "" if event.ok else "[red]✗[/] "
        self.console.print(
            f"  {tag}step {event.step + 1}: [bold]{event.tool}[/]"
            f"({escape(written_arguments(event.arguments))}) → {mark}{escape(event.summary)}",
            soft_wrap=True,
        )

    def _show_ranking(self, result: RetrievalResult) -> None:
        if not result.ranking:
            self.console.print("[yellow]No answer: the agents added no node.[/]")
        else:
            table = Table("rank", "index", "name", "type", "votes", title="Answer")
            for rank, r in enumerate(result.ranking, start=1):
                table.add_row(str(rank), str(r.index), escape(r.name), r.type, str(r.votes))
            self.console.print(table)
        stops = ", ".join(t.stop_reason for t in result.trajectories)
        self.console.print(f"{result.wall_s:.1f} s; stopped by: {stops}. /why N explains node N.")
        if result.failed:
            self.console.print(f"[red]every agent failed:[/] {escape(result.errors[0])}")

    # -- looking back -------------------------------------------------------------------------

    def why(self, node: int | None = None) -> list[str]:
        """How ``node`` was reached in each trajectory of the last question."""
        result = self.last
        if result is None:
            return ["Ask a question first."]
        if node is None:
            if not result.ranking:
                return ["The last answer is empty; give a node index: /why N."]
            node = result.ranking[0].index
        g = self.index.graph
        if not 0 <= node < g.n_nodes:
            return [f"{node} is not a node of this graph (0..{g.n_nodes - 1})."]
        lines = [f"[{node}] {g.name(node)} ({g.type_name(node)}):"]
        for a, t in enumerate(result.trajectories, start=1):
            path = reach_path(t, node, self.index)
            if not path:
                lines.append(f"agent {a}: never reached it.")
                continue
            lines.append(f"agent {a}:")
            lines += [f"  step {step}: {text}" for step, text in path]
        return lines

    def agents(self) -> list[str]:
        result = self.last
        if result is None:
            return ["Ask a question first."]
        g = self.index.graph
        lines = []
        for a, t in enumerate(result.trajectories, start=1):
            answer = ", ".join(f"[{n}] {g.name(n)}" for n in t.answer) or "(empty)"
            lines.append(
                f"agent {a}: {t.stop_reason} after {len(t.steps)} steps, {t.wall_s:.1f} s, "
                f"{t.usage['prompt_tokens']} + {t.usage['completion_tokens']} tokens; "
                f"answer: {answer}" + (f"; error: {t.error}" if t.error else "")
            )
        return lines

    def steps(self) -> list[str]:
        result = self.last
        if result is None:
            return ["Ask a question first."]
        lines = []
        for a, t in enumerate(result.trajectories, start=1):
            lines.append(f"agent {a} ({len(t.steps)} steps):")
            for s in t.steps:
                for c in s.tool_calls:
                    first = c.observation.splitlines()[0] if c.observation else ""
                    mark = "" if c.ok else f"✗ {c.error_code}: "
                    lines.append(
                        f"  step {s.index + 1}: {c.name}({written_arguments(c.arguments)}) "
                        f"→ {mark}{first}"
                    )
                if not s.tool_calls:
                    lines.append(f"  step {s.index + 1}: {s.note or 'no tool call'}")
        return lines

    def trajectories(self) -> list[Trajectory]:
        return [t for r in self.results for t in r.trajectories]

    def save(self, path: Path) -> str:
        if not self.results:
            return "Nothing to save yet."
        write_trajectories(path, self.trajectories())
        return f"Appended {len(self.trajectories())} trajectories to {path}."

    def view(self, path: Path) -> str:
        if not self.results:
            return "Nothing to view yet."
        from ark.serve.viewer import write_view

        with tempfile.TemporaryDirectory() as tmp:
            source = write_trajectories(Path(tmp) / "chat.jsonl", self.trajectories())
            info = write_view(source, path, index_dir=self.index.path)
        where = Path(info["path"]).resolve()
        return f"Wrote {where} ({info['queries']} questions); open it in a browser."


def reach_path(t: Trajectory, node: int, index: Index) -> list[tuple[int, str]]:
    """The calls that led to ``node``: its first evidence path (:func:`ark.retrieval.paths_to`)
    as the calls that made each of its moves, then the ``add_to_answer`` that took it;
    ``[]`` when it was never reached."""
    paths = paths_to(t, node)
    if not paths:
        return []
    path, g = paths[0], index.graph
    moves = [(path.step, path.anchor, None)] if path.step is not None else []
    moves += [(h.step, h.neighbor, h.center) for h in path.hops]
    out = []
    for step, reached, center in moves:
        for c in t.steps[step - 1].tool_calls:
            if c.ok and reached in c.nodes and (center is None or center in _explored(c)):
                out.append((step, _render_call(c, reached, g)))
                break
    for s in t.steps:
        for c in s.tool_calls:
            if c.name == "add_to_answer" and node in _ints((c.arguments or {}).get("node_indices")):
                return [*out, (s.index + 1, _render_call(c, node, g))]
    return out


def _explored(c: ToolCallRecord) -> list[int]:
    return c.centers or ([c.center] if c.center is not None else [])


def _ints(value: object) -> list[int]:
    values = value if isinstance(value, list) else [value]
    return [int(v) for v in values if isinstance(v, int) or (isinstance(v, str) and v.isdigit())]


def _render_call(c: ToolCallRecord, node: int, g: Any) -> str:
    """A recorded call as ``/why`` shows it: the call, and how ``node`` came out of it
    (the relations it was reached by, or its rank among the search's hits)."""
    text = f"{c.name}({written_arguments(c.arguments)})"
    if node not in c.nodes:
        return text
    text += f" → [{node}] {g.name(node)}"
    if c.relations is not None:
        rels = c.relations[c.nodes.index(node)]
        shown = dict.fromkeys(f"{r['type']}({r['direction']})" for r in rels)  # once per centre
        text += " via " + ", ".join(shown)
    else:
        text += f" (hit {c.nodes.index(node) + 1} of {len(c.nodes)})"
    return text


def run_chat(session: ChatSession, *, history_file: Path | None = None) -> None:
    """The interactive loop (prompt_toolkit: line editing, history on the arrow keys)."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    history = FileHistory(str(history_file)) if history_file else InMemoryHistory()
    prompt: PromptSession[str] = PromptSession(history=history)
    out = session.console
    g = session.index.graph
    out.print(
        f"ARK chat over {escape(str(session.index.path))} ({g.n_nodes:,} nodes). "
        "Ask a question; /help lists the commands."
    )

    async def loop() -> None:
        while True:
            try:
                line = (await prompt.prompt_async("ark> ")).strip()
            except KeyboardInterrupt:
                continue
            except EOFError:
                break
            if not line:
                continue
            if line.startswith("/"):
                if not _command(session, line):
                    break
                continue
            try:
                await session.ask(line)
            except Exception as exc:  # keep the session alive whatever one question does
                out.print(f"[red]error:[/] {escape(f'{type(exc).__name__}: {exc}')}")

    try:
        asyncio.run(loop())
    except KeyboardInterrupt:  # Ctrl-C while agents run: stop them and leave cleanly
        out.print("Interrupted.")
    out.print("Bye.")


def _command(session: ChatSession, line: str) -> bool:
    """Run one /command; ``False`` ends the chat."""
    name, _, arg = line.partition(" ")
    arg = arg.strip()
    out = session.console
    if name in ("/quit", "/exit", "/q"):
        return False
    if name == "/help":
        lines = HELP.splitlines()
    elif name == "/why":
        if arg and not arg.lstrip("-").isdigit():
            lines = [f"/why takes a node index, got {arg!r}."]
        else:
            lines = session.why(int(arg) if arg else None)
    elif name == "/agents":
        lines = session.agents()
    elif name == "/steps":
        lines = session.steps()
    elif name == "/save":
        lines = [session.save(Path(arg))] if arg else ["/save takes a file name."]
    elif name == "/view":
        lines = [session.view(Path(arg or "ark-chat.html"))]
    else:
        lines = [f"Unknown command {name}; /help lists them."]
    for text in lines:
        out.print(escape(text), soft_wrap=True)
    return True
