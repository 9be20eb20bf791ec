"""Tools the model may run, and one round of running them: the core of a turn with tools.

A :class:`Tool` has a name, a description and a JSON schema of its arguments (what the model is offered: a
:class:`~fastchat_tui.sources.base.ToolSpec`), an ``origin`` (``"built-in"``, ``"mcp:NAME"``), whether it only
reads, and an async :meth:`Tool.run`. A :class:`Toolbox` holds the tools a turn offers and the bounds of running
them (``[tools]``): each call runs within ``timeout_s`` and its result is cut to ``max_output_bytes``; a call that
fails, hangs past its time, names no known tool or brings arguments that are not a JSON object gets its error as
its result, which the model reads and may act on. Cancelling a round (Esc, Ctrl+C) cancels the tools running.

The conversation (:mod:`fastchat_tui.conversation`) decides when a round runs and sends the results back
(:func:`exchange`); the events here (:class:`ToolStarted`, :class:`ToolFinished`) are for front ends.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from fastchat_tui.config import ToolsConfig
from fastchat_tui.sources.base import Message, ToolCall, ToolSpec
from fastchat_tui.tool_allow import Allowance
from fastchat_tui.turn import Turn

__all__ = ["Round", "Rounds", "RoundsEnded", "Tool", "ToolError", "ToolFinished", "ToolOutput", "ToolResult", "ToolStarted",
           "Toolbox", "bound", "exchange"]

CUT_MARK = "\n… [cut: {more:,} more bytes; ask for less, e.g. a line range or a narrower pattern]"


class ToolError(Exception):
    """What a tool says went wrong, in words the model can act on (sent to it as the result)."""


class Tool(Protocol):
    """One tool; :meth:`run` returns its result as text (bounded by the toolbox) or raises :class:`ToolError`."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    origin: str
    """Where the tool comes from: ``"built-in"``, or ``"mcp:NAME"`` for an MCP server's."""
    read_only: bool
    """It only reads: it may run without asking."""

    async def run(self, arguments: Mapping[str, Any], limit: int) -> str:
        """Run with ``arguments`` (checked to be a JSON object, not against the schema: that is the tool's);
        ``limit`` is the most bytes of result the model will see (a tool may stop reading there)."""
        ...


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A call's outcome: the text sent to the model, its size in bytes before any cut, and its error, if any."""

    call: ToolCall
    text: str
    size: int
    started: float
    """When it started and when its result was ready (``time.perf_counter``)."""
    done: float
    error: str | None = None
    cut: bool = False

    @property
    def seconds(self) -> float:
        return self.done - self.started


@dataclass(frozen=True, slots=True)
class ToolStarted:
    """``call`` starts, in round ``round`` of the turn, at ``t`` (``time.perf_counter``)."""

    call: ToolCall
    round: int
    t: float


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """A line of output of ``call`` (a command's), as it comes, at ``t``: for front ends only (the model gets the
    bounded result)."""

    call: ToolCall
    round: int
    text: str
    t: float


@dataclass(frozen=True, slots=True)
class ToolFinished:
    """``result`` is ready at ``t``: the next request may leave."""

    result: ToolResult
    round: int
    t: float


def bound(text: str, limit: int) -> tuple[str, int, bool]:
    """``text`` cut to at most ``limit`` bytes of UTF-8 (on a character boundary) with a mark that says how much is
    left out; with its full size in bytes and whether it was cut."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text, len(data), False
    room = max(limit - len(CUT_MARK.format(more=len(data)).encode()), 0)  # the mark with the most digits it can have
    kept = data[:room].decode("utf-8", "ignore")
    return kept + CUT_MARK.format(more=len(data) - len(kept.encode())), len(data), True


@dataclass
class Toolbox:
    """The tools a turn offers, and the bounds of running them."""

    tools: dict[str, Tool] = field(default_factory=dict)
    settings: ToolsConfig = field(default_factory=ToolsConfig)
    allowance: Allowance = field(default_factory=Allowance)
    """The calls of tools that may change things that run without asking (``[tools] allow``, ``--yes``, and what
    the user allowed for the rest of the chat)."""

    @classmethod
    def of(cls, tools: Sequence[Tool], settings: ToolsConfig, *, everything: bool = False) -> Toolbox:
        """``everything``: every call runs without asking (``--yes``)."""
        return cls({tool.name: tool for tool in tools}, settings, Allowance(settings.allow, everything))

    def asks(self, call: ToolCall) -> bool:
        """Whether ``call`` needs the user's yes first: its tool may change things and nothing allows the call."""
        tool = self.tools.get(call.name)
        if tool is None or tool.read_only:
            return False
        return not self.allowance.allows(call.name, _subject(tool, _arguments(call, quiet=True)))

    async def preview(self, call: ToolCall) -> str:
        """What ``call`` would do, shown when the user is asked (a diff, a command line); raises :class:`ToolError`
        when the call cannot be made at all (then nobody is asked: the model hears why)."""
        tool = self.tools[call.name]
        arguments = _arguments(call)
        preview = getattr(tool, "preview", None)
        if preview is None:
            return f"{call.name} {json.dumps(arguments, ensure_ascii=False, indent=2)}"
        async with asyncio.timeout(self.settings.timeout_s):
            return str(await preview(arguments))

    def allow_like(self, call: ToolCall) -> None:
        """Let calls like ``call`` run without asking for the rest of the chat: the same command line for a command,
        every call for another tool."""
        tool = self.tools.get(call.name)
        subject = _subject(tool, _arguments(call, quiet=True)) if tool is not None and call.name == "run_command" else ""
        self.allowance = self.allowance.adding([f"{call.name}:{subject}" if subject else call.name])

    def refused(self, call: ToolCall, why: str) -> ToolResult:
        """The result of a call that did not run: ``why`` is what the model reads."""
        now = time.perf_counter()
        return ToolResult(call, f"error: {why}", len(why.encode()) + 7, now, now, why)

    def add(self, tools: Sequence[Tool]) -> None:
        """Offer ``tools`` too (an MCP server's, once it answered), named apart from these already."""
        self.tools.update((tool.name, tool) for tool in tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        """What the model is offered."""
        return tuple(ToolSpec(tool.name, tool.description, tool.parameters) for tool in self.tools.values())

    async def run(self, call: ToolCall, output: Callable[[str], None] | None = None) -> ToolResult:
        """Run one call within the time limit; every failure becomes an error result (cancelling is not one).
        ``output``: where a tool that streams (a command) sends each line of its output as it comes."""
        started = time.perf_counter()
        limit = self.settings.max_output_bytes
        error: str | None = None
        text = ""
        try:
            text = await self._run(call, limit, output)
        except TimeoutError:
            error = f"{call.name} took longer than {self.settings.timeout_s:g} s ([tools] timeout_s) and was stopped"
        except ToolError as exc:
            error = str(exc)
        except Exception as exc:  # a tool's own bug: the model hears of it, the turn goes on
            error = f"{call.name} failed: {type(exc).__name__}: {exc}"
        if error is not None:
            text = f"error: {error}"
        shown, size, cut = bound(text, limit)
        return ToolResult(call, shown, size, started, time.perf_counter(), error, cut)

    async def _run(self, call: ToolCall, limit: int, output: Callable[[str], None] | None) -> str:
        tool = self.tools.get(call.name)
        if tool is None:
            known = ", ".join(self.tools) or "none"
            raise ToolError(f"there is no tool named {call.name!r} (the tools are: {known})")
        arguments = _arguments(call)
        async with asyncio.timeout(self.settings.timeout_s):
            if output is not None and getattr(tool, "streams", False):
                return await tool.run(arguments, limit, output=output)  # type: ignore[call-arg]
            return await tool.run(arguments, limit)

    async def round(self, calls: Sequence[ToolCall], number: int, refused: Mapping[int, str] | None = None,
                    ) -> AsyncGenerator[ToolStarted | ToolOutput | ToolFinished, None]:
        """Run ``calls`` at once, yielding each start, a command's output lines as they come, then each result as
        it is ready (:func:`exchange` puts them back in the calls' order). ``refused``: calls that do not run (by
        their index in ``calls``), with what the model is told instead. Closing the generator cancels what still
        runs."""
        refused = refused or {}
        ready: asyncio.Queue[ToolOutput | ToolFinished] = asyncio.Queue()

        async def one(call: ToolCall) -> None:
            def line(text: str) -> None:
                ready.put_nowait(ToolOutput(call, number, text, time.perf_counter()))

            result = await self.run(call, line)
            ready.put_nowait(ToolFinished(result, number, result.done))

        tasks = [asyncio.ensure_future(one(call)) for index, call in enumerate(calls) if index not in refused]
        try:
            for index, call in enumerate(calls):
                yield ToolStarted(call, number, time.perf_counter())
                if index in refused:
                    result = self.refused(call, refused[index])
                    yield ToolFinished(result, number, result.done)
            for _ in tasks:
                while not isinstance(item := await ready.get(), ToolFinished):
                    yield item
                yield item
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


def _arguments(call: ToolCall, *, quiet: bool = False) -> dict[str, Any]:
    """A call's arguments as the JSON object they must be; :class:`ToolError` otherwise (``quiet``: ``{}``)."""
    try:
        arguments = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError as exc:
        if quiet:
            return {}
        raise ToolError(f"the arguments are not valid JSON ({exc})") from None
    if not isinstance(arguments, dict):
        if quiet:
            return {}
        raise ToolError("the arguments must be a JSON object")
    return arguments


def _subject(tool: Tool | None, arguments: Mapping[str, Any]) -> str:
    """What ``[tools] allow`` patterns match for a call: its command line or paths (:meth:`subject`), or ``""``."""
    subject = getattr(tool, "subject", None)
    return str(subject(arguments)) if subject is not None else ""


def exchange(text: str, calls: Sequence[ToolCall], results: Sequence[ToolResult]) -> tuple[Message, ...]:
    """One round as the next request carries it, after the prompt: the reply that asked (its ``text`` and calls,
    OpenAI's shape), then each call's result, in the calls' order. Each source sends it in its protocol's shape."""
    by_id = {id(result.call): result for result in results}
    asked: Message = {"role": "assistant", "content": text,
                      "tool_calls": [{"id": call.id, "type": "function",
                                      "function": {"name": call.name, "arguments": call.arguments or "{}"}}
                                     for call in calls]}
    answers: list[Message] = [{"role": "tool", "tool_call_id": call.id, "name": call.name,
                               "content": by_id[id(call)].text} for call in calls]
    return (asked, *answers)


@dataclass(slots=True)
class Round:
    """One model request of a turn with tools: its reply (with its own meter) and the tools it ran."""

    turn: Turn
    results: list[ToolResult] = field(default_factory=list)

    @property
    def tool_s(self) -> float:
        """Wall-clock time its tools took (they run at once: the first start to the last result)."""
        if not self.results:
            return 0.0
        return max(result.done for result in self.results) - min(result.started for result in self.results)


@dataclass(slots=True)
class Rounds:
    """A turn's rounds, in order, as they end; the turn's wall clock split into model time and tool time."""

    rounds: list[Round] = field(default_factory=list)

    @property
    def model_s(self) -> float:
        """Time the requests took, each from its send to its end (its meter's total)."""
        readings = (item.turn.reading() for item in self.rounds)
        return sum((reading.total_s or 0.0) for reading in readings if reading is not None)

    @property
    def tool_s(self) -> float:
        return sum(item.tool_s for item in self.rounds)

    @property
    def total_s(self) -> float | None:
        """The first request's send to the last one's end (``None`` before any request was sent)."""
        meters = [item.turn.meter for item in self.rounds if item.turn.meter is not None]
        if not meters:
            return None
        end = meters[-1].t_done if meters[-1].t_done is not None else time.perf_counter()
        return float(end - meters[0].t_send)


@dataclass(frozen=True, slots=True)
class RoundsEnded:
    """A turn with tools is over (its last reply's :class:`~fastchat_tui.events.Finished` came before)."""

    rounds: Rounds
    limit_hit: bool = False


ARGUMENTS_SHOWN = 80
"""How much of a call's arguments its one line shows."""


def call_line(result: ToolResult) -> str:
    """A finished call in one line, as ``ask`` and the transcript show it folded: ``⚙ grep {"pattern": "x"} · 1.2 kB
    · 14 ms`` (``· error: …`` for a failure)."""
    arguments = " ".join(result.call.arguments.split())
    if len(arguments) > ARGUMENTS_SHOWN:
        arguments = arguments[:ARGUMENTS_SHOWN - 1] + "…"
    size = f"{result.size:,} B" if result.size < 1000 else f"{result.size / 1000:.1f} kB"
    line = f"⚙ {result.call.name} {arguments or '{}'} · {size}{' (cut)' if result.cut else ''} · {_ms(result.seconds)}"
    return f"{line} · {result.error}" if result.error else line


def rounds_line(ended: RoundsEnded) -> str:
    """A turn's rounds in one line: ``3 rounds · model 1.42 s · tools 0.03 s · total 1.46 s``."""
    rounds = ended.rounds
    count = len(rounds.rounds)
    total = rounds.total_s
    parts = [f"{count} round{'s' if count != 1 else ''}", f"model {rounds.model_s:.2f} s", f"tools {rounds.tool_s:.2f} s"]
    if total is not None:
        parts.append(f"total {total:.2f} s")
    if ended.limit_hit:
        parts.append("stopped at the round limit ([tools] max_rounds)")
    return " · ".join(parts)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"
