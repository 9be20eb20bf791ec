"""``fastchat ask``: one prompt, the answer streamed to stdout, the reasoning (if shown) and the meter on stderr.

    fastchat ask "question"                  fastchat "question"     (the same)
    fastchat ask -m llama3.2 "question"      the model picks the source (or -m local/llama3.2)
    fastchat ask -c "and then?"              continue the most recent chat (--chat ID: that one)
    fastchat ask -t review-notes < notes.md  a [templates.NAME] prompt, with $input the prompt given
    fastchat ask -f app.py -f 'docs/**/*.md' "q"   files, directories and globs sent along (.gitignore honoured)
    fastchat ask --race fast,local "question"       the first reply to finish; the others are cancelled
    fastchat ask --compare fast,local/qwen2.5 "q"   every reply under its source, then a ranking

Every ask is saved as a chat (``fastchat history``), which ``-c`` or ``--chat ID`` continues. A race or a
compare is saved as one prompt with every reply (``fastchat history show`` lists the others as
alternatives); the race's winner, or the compare's first reply to finish, is the one ``-c`` goes on from.

Exit codes: 0 for an answer (also one cut at the token limit; with --race or --compare, the kept reply's),
1 for no answer, a cut stream or an error, 2 for a usage or config error, 130 when cancelled.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Literal, TextIO

from fastchat_tui.commands.common import (
    CommandError,
    StatusLine,
    add_chat_options,
    add_file_option,
    add_prompt_options,
    attach_files,
    choose_models,
    continue_chat,
    fail,
    is_terminal,
    load_config,
    read_stdin,
    send_options,
    stdin_is_piped,
    template,
    text_argument,
    warn,
)
from fastchat_tui.meter import reply_line
from fastchat_tui.progress import preparing_text
from fastchat_tui.sources.base import ModelChosen, Preparing, ReasoningDelta, SourceNote, TextDelta

if TYPE_CHECKING:
    from fastchat_tui.config import Config
    from fastchat_tui.race import Contender, Race
    from fastchat_tui.session import Session
    from fastchat_tui.tool_rounds import RoundsEnded
    from fastchat_tui.turn import SendOptions, Turn

FLUSH_EVERY_S = 0.03
DIM, UNDIM = "\x1b[2m", "\x1b[22m"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("ask", help="send one prompt and print the reply", description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("prompt", nargs="*", help="the prompt (stdin is appended when it is a pipe)")
    parser.add_argument("-s", "--source", help="source name, or 'auto' (default: the config's default_source)")
    add_file_option(parser)
    add_prompt_options(parser)
    add_chat_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end instead of streaming text")
    parser.add_argument("--allow-sensitive", action="store_true",
                        help="send this prompt even if it looks sensitive and the source is not private; this also "
                             "releases the chat from an earlier turn that looked sensitive")
    several = parser.add_mutually_exclusive_group()
    several.add_argument("--race", type=column_list, metavar="A,B[,C]",
                         help="send the prompt to these sources at once (each SOURCE or SOURCE/MODEL) and print the "
                              "first reply to finish; the others are cancelled")
    several.add_argument("--compare", type=column_list, metavar="A,B[,C]",
                         help="send the prompt to these sources at once, wait for every reply, and print each under "
                              "its source, then a ranking")
    add_reasoning_option(parser)
    add_tools_option(parser)
    parser.set_defaults(run=run)


def add_tools_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tools", action=argparse.BooleanOptionalAction, default=None,
                        help="let the model run the read-only tools (read_file, list_files, grep) in the working "
                             "directory, round after round; each call is shown on stderr (default: [tools] enabled, "
                             "which is on)")
    parser.add_argument("--yes", action="store_true",
                        help="also offer the tools that change the project (write_file, apply_patch, run_command) and "
                             "run every call without asking; without it, only calls [tools] allow names run")


def column_list(text: str) -> list[str]:
    """``--race``/``--compare``: two or more comma-separated entries, each a source or ``SOURCE/MODEL``."""
    entries = [entry.strip() for entry in text.split(",") if entry.strip()]
    if len(entries) < 2:
        raise argparse.ArgumentTypeError("name at least two sources, comma-separated (e.g. fast,local)")
    return entries


def add_reasoning_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--reasoning", choices=("show", "hide"),
                        help="write the model's reasoning to stderr, never to stdout (default: show when stderr "
                             "is a terminal)")


def shows_reasoning(args: argparse.Namespace) -> bool:
    """``--reasoning``, else whether stderr is a terminal."""
    return args.reasoning == "show" if args.reasoning else is_terminal(sys.stderr)


def read_prompt(words: list[str], config: Config, *, stdin: bool = True) -> str:
    """The prompt from the arguments, followed by piped stdin (with ``stdin``) read within the input limit;
    ``""`` when both are empty."""
    prompt = text_argument(" ".join(words), "the prompt").strip()
    if stdin and stdin_is_piped():
        piped = read_stdin(config)
        if piped.strip():
            prompt = f"{prompt}\n\n{piped}" if prompt else piped
    return prompt if prompt.strip() else ""


NOTHING_TO_ASK = "nothing to ask: give a prompt as arguments, on stdin or with -f FILE"


def run(args: argparse.Namespace) -> int:
    config = load_config()
    from dataclasses import replace

    from fastchat_tui.attachment import with_files
    from fastchat_tui.conversation import apply_template

    chosen = template(config, args.template)
    attachments = attach_files(args.file, config)
    prompt = read_prompt(args.prompt, config, stdin="-" not in args.file)
    if not prompt and chosen is None and not attachments:
        raise CommandError(NOTHING_TO_ASK, 2)
    prompt, options = apply_template(chosen, prompt, send_options(args, config))
    if chosen is not None:
        prompt = prompt.strip()
    if attachments:
        prompt = with_files(prompt, attachments)
        options = replace(options, attachments=tuple(attachments))
    if not prompt:
        raise CommandError(NOTHING_TO_ASK, 2)
    entries = args.race or args.compare
    if entries and (args.source is not None or args.model is not None):
        option = "--race" if args.race else "--compare"
        raise CommandError(f"{option} names its sources itself (SOURCE or SOURCE/MODEL, comma-separated); "
                           "leave out -s and -m", 2)
    columns = contenders(config, entries) if entries else []
    from fastchat_tui.session import Session

    session = Session.open(config, on_problem=warn)
    continue_chat(session, args.continue_chat, args.chat_id)
    if columns:
        return race_replies(session, prompt, columns, options, mode="race" if args.race else "compare",
                            as_json=args.json)
    return stream_reply(session, prompt, options, as_json=args.json, reasoning=shows_reasoning(args),
                        stream=not args.no_stream, yes=args.yes)


def contenders(config: Config, entries: Sequence[str]) -> list[Contender]:
    """The columns of ``--race``/``--compare``: a configured source's name as it is, anything else a model spec
    resolved as ``-m`` resolves it (``SOURCE/MODEL``, or a model name one source serves). The same source and
    model twice is a usage error."""
    from fastchat_tui.race import Contender

    entries = [text_argument(entry, "the --race/--compare entry") for entry in entries]
    models = iter(choose_models(config, [entry for entry in entries if entry not in config.sources]))
    columns: list[Contender] = []
    for entry in entries:
        if entry in config.sources:
            column = Contender(entry)
        else:
            choice = next(models)
            column = Contender(choice.source, choice.model)
        asked = [(c.source, c.model or config.sources[c.source].model) for c in columns]
        if (column.source, column.model or config.sources[column.source].model) in asked:
            raise CommandError(f"{column.label(config)} is named twice; name each source (or model) once", 2)
        columns.append(column)
    return columns


def stream_reply(session: Session, prompt: str, options: SendOptions, *, as_json: bool, reasoning: bool,
                 stream: bool = True, yes: bool = False) -> int:
    """Send ``prompt``, stream the answer to stdout (and, with ``reasoning``, the reasoning to stderr) as it
    comes, report the end; returns the exit code. Without ``stream`` the answer is written in one write
    when the reply ends (``--no-stream``). The turn's tools are :func:`~fastchat_tui.commands.tool_setup.command_tools`'
    (``yes``: ``--yes``).

    Both streams pass a :class:`~fastchat_tui.keys.StreamRedactor`: a key the server echoes is redacted
    even when it comes split between chunks. While the source prepares (a model loading, a long prompt
    read), a terminal's stderr shows how far it got (:class:`_Waiting`)."""
    from fastchat_tui.events import Attempt, Finished, Retrying, Routed
    from fastchat_tui.keys import StreamRedactor
    from fastchat_tui.retries import retrying_text

    writer = _Writer(sys.stdout, quiet=as_json, hold=not stream)
    thinking = _Writer(sys.stderr, quiet=not reasoning, dim=True)
    answer, thought = StreamRedactor(), StreamRedactor()
    waiting = _Waiting(StatusLine(sys.stderr))
    answering = False
    seen: list[Turn] = []
    rounds: list[RoundsEnded] = []

    async def main() -> None:
        nonlocal answering
        from fastchat_tui.commands.tool_setup import command_tools, declined_note
        from fastchat_tui.conversation import Conversation, NeedsApproval, Notice, Question
        from fastchat_tui.tool_rounds import RoundsEnded, ToolFinished, call_line, rounds_line

        try:
            async with command_tools(session.config, wanted=options.tools, yes=yes, note=note) as box, \
                    aclosing(Conversation(session, tools=box).send(prompt, options)) as events:
                async for event in events:
                    if type(event) is TextDelta:
                        if not answering:  # the answer starts below the reasoning
                            answering = True
                            waiting.done(0)
                            thinking.write(thought.end())
                            thinking.end_line()
                        writer.write(answer.feed(event.text))
                    elif type(event) is ReasoningDelta:
                        waiting.done(0)
                        thinking.write(thought.feed(event.text))
                    elif type(event) is Preparing:
                        waiting.show(0, event)
                    elif type(event) is ModelChosen:  # before any output: the session chose another model, or runs it elsewhere
                        with waiting.aside():
                            note(event.note)
                    elif type(event) is Attempt:  # a fallback's source prepares from the start
                        waiting.done(0)
                    elif type(event) is Retrying:
                        with waiting.aside():
                            note(retrying_text(event.source, event.error, event.attempt, event.delay))
                    elif type(event) is Routed or type(event) is Finished:
                        seen[:] = [event.turn]
                    elif isinstance(event, NeedsApproval):  # no one to ask: the model is told, stderr says why
                        event.decline()
                        with waiting.aside():
                            note(declined_note(event.call.name if event.call else "the tool"))
                    elif isinstance(event, Question):  # no one to ask: the reply's error says what to do
                        event.decline()
                    elif isinstance(event, Notice):
                        with waiting.aside():
                            note(event.text)
                    elif isinstance(event, ToolFinished):  # one line per call, between the rounds' replies
                        answering = False
                        writer.end_line()
                        with waiting.aside():
                            note(call_line(event.result))
                    elif isinstance(event, RoundsEnded):
                        rounds[:] = [event]
                        with waiting.aside():
                            note(rounds_line(event))
        finally:
            waiting.done(0)
            thinking.write(thought.end())
            writer.write(answer.end())
            writer.flush()
            thinking.end_line()
            await session.aclose()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
    return report(seen[-1] if seen else None, as_json, writer, session.recorder.chat_id if session.recorder else None,
                  rounds[-1] if rounds else None)


def race_replies(session: Session, prompt: str, columns: Sequence[Contender], options: SendOptions, *,
                 mode: Literal["race", "compare"], as_json: bool) -> int:
    """Send ``prompt`` to every column at once (:func:`fastchat_tui.race.race`) and report them; returns the
    exit code, the kept reply's as :func:`exit_code` gives it (1 when none could be kept, 130 when cancelled).

    ``"race"``: the first reply to finish wins, the others are cancelled at once (their connections closed);
    stdout gets the winner's answer. ``"compare"``: every column runs to its end; stdout gets each answer under
    a heading, then the ranking. The winner, or the first reply to finish, is kept
    (:meth:`~fastchat_tui.race.Race.keep`): history marks it the reply of the prompt, the others its
    alternatives, and ``ask -c`` goes on from it. Each column's meter line goes to stderr as it ends; a
    failure in one column (a refused sensitive prompt, a 429) is that column's and stops no other."""
    from fastchat_tui.events import Attempt, Finished
    from fastchat_tui.race import race

    the_race = race(session, prompt, columns, options, mode=mode)
    waiting = _Waiting(StatusLine(sys.stderr), the_race.labels)

    async def main() -> None:
        try:
            async with aclosing(the_race):
                async for column, event in the_race:
                    if isinstance(event, (TextDelta, ReasoningDelta, Attempt)):
                        waiting.done(column)
                    elif isinstance(event, Preparing):
                        waiting.show(column, event)
                    elif isinstance(event, ModelChosen):
                        with waiting.aside():
                            note(event.note)
                    elif isinstance(event, SourceNote):
                        with waiting.aside():
                            note(event.text)
                    elif isinstance(event, Finished):
                        waiting.done(column)
                        if not as_json:
                            with waiting.aside():
                                report_end(event.turn, *_where(the_race, column))
        finally:
            waiting.clear()
            if (kept := the_race.default_choice()) is not None:
                the_race.keep(kept)
            await session.aclose()

    interrupted = False
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        interrupted = True
    turns = [_column_turn(the_race, column) for column in range(len(columns))]
    kept = the_race.kept
    chat_id = session.recorder.chat_id if session.recorder else None
    from fastchat_tui.keys import redact  # what a server echoes back (a key's prefix, a URL password) stays here

    if as_json:
        print(redact(json.dumps({
            "mode": mode,
            "kept": kept,
            "chat_id": chat_id,
            "sources": [_column_json(the_race, column, turn, kept) for column, turn in enumerate(turns)],
            "ranking": the_race.ranking().as_dict(),
        }, ensure_ascii=False)))
    elif sys.stdout is not None:  # closed (>&-): the replies are still saved in the history
        if mode == "race":
            if kept is not None:
                sys.stdout.write(_ended_text(redact(turns[kept].text)))
        else:
            sys.stdout.write(_compare_text(turns, kept, the_race))
        sys.stdout.flush()
    if interrupted:
        return 130
    return exit_code(turns[kept]) if kept is not None else 1


def _column_turn(the_race: Race, column: int) -> Turn:
    """A column's turn; one cancelled before its stream began (Ctrl+C at once) has none, and sent nothing."""
    from fastchat_tui.turn import Turn

    turn = the_race.turns[column]
    if turn is None:
        contender = the_race.contenders[column]
        turn = Turn(the_race.prompt, the_race.options_for(column), source=contender.source, model=contender.model,
                    status="cancelled")
    return turn


def _where(the_race: Race, column: int) -> tuple[str, str | None]:
    """The source and model ``column`` asked: its turn's (after a source's own choice of model), else, for a
    request refused before it was sent, the column's."""
    turn = the_race.turns[column]
    if turn is not None and turn.source is not None:
        return turn.source, turn.model
    contender = the_race.contenders[column]
    spec = the_race.session.config.sources.get(contender.source)
    return contender.source, contender.model or (spec.model if spec else None)


def _column_json(the_race: Race, column: int, turn: Turn, kept: int | None) -> dict[str, object]:
    """One column's ``--json`` object: ``ask --json``'s fields, with its ``column`` and whether it was ``kept``."""
    source, model = _where(the_race, column)
    return turn_json(turn) | {"source": source, "model": model, "column": column, "kept": column == kept}


def _ended_text(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def _compare_text(turns: Sequence[Turn], kept: int | None, the_race: Race) -> str:
    """Each column's answer under its label, a rule and a bold line (``---`` then ``**fast · llama-3.3-70b**``,
    ``(kept)`` on the kept one): no heading level, so the replies' own ``##`` headings stay apart from it. A column
    without an answer says why; then the ranking as a preformatted block, under a label of its own; redacted."""
    from fastchat_tui.keys import redact

    parts: list[str] = []
    for column, turn in enumerate(turns):
        source, model = _where(the_race, column)
        parts.append(f"---\n\n**{source} · {model or '-'}{' (kept)' if column == kept else ''}**\n\n")
        if turn.answered:
            parts.append(_ended_text(redact(turn.text)))
            if turn.end_note or turn.status != "complete":
                parts.append(f"\n*({redact(turn.end_note or turn.status)})*\n")
        else:
            why = turn.error.shown if turn.error else (turn.end_note or turn.status)
            parts.append(f"*(no answer: {redact(' '.join(why.split()))})*\n")
        parts.append("\n")
    parts.append("---\n\n**Ranking**\n\n")
    parts.extend(f"    {line}\n" for line in the_race.ranking().lines())
    return "".join(parts)


def report(turn: Turn | None, as_json: bool, writer: _Writer, chat_id: int | None = None,
           rounds: RoundsEnded | None = None) -> int:
    """Print the end of a reply (newline, meter line or JSON, with the ``chat_id`` it was saved in, and the
    ``rounds`` of a turn that ran tools) and return the exit code."""
    if turn is None:
        if as_json:
            print(json.dumps({"status": "cancelled", "error": None, "text": "", "reasoning": "", "chat_id": chat_id}))
        return 130
    if turn.status in ("pending", "streaming"):  # interrupted before the session could mark it
        turn.status = "cancelled"
    from fastchat_tui.keys import redact  # what a server echoes back (a key's prefix, a URL password) stays here

    if as_json:
        extra = rounds_json(rounds) if rounds is not None else {}
        print(redact(json.dumps(turn_json(turn) | {"chat_id": chat_id} | extra, ensure_ascii=False)))
    else:
        writer.end_line()
        report_end(turn)
    return exit_code(turn)


def report_end(turn: Turn, source: str | None = None, model: str | None = None) -> None:
    """How a reply ended, on stderr: its meter line, then its error if it failed. ``source`` and ``model``:
    what the line names (default: the turn's)."""
    from fastchat_tui.keys import redact

    if source is None:
        source, model = turn.source, turn.model
    if sys.stderr is not None:  # closed (2>&-): print(file=None) would write the meter line to stdout
        print(redact(reply_line(source, model, turn.reading(), turn.status, note=turn.end_note,
                                fallback_from=turn.fallback_from, fallback_reason=turn.fallback_reason)),
              file=sys.stderr)
    if turn.error:
        fail(turn.error.shown)


def exit_code(turn: Turn) -> int:
    """0 for an answer (one cut at the token limit too), 130 when cancelled, else 1 (no answer, cut, error)."""
    if turn.status == "complete" or (turn.status == "truncated" and turn.answered):
        return 0
    return 130 if turn.status == "cancelled" else 1


def rounds_json(ended: RoundsEnded) -> dict[str, object]:
    """``--json``'s figures of a turn that ran tools: every round's meter and calls, and the wall clock split."""
    rounds = ended.rounds

    def seconds(value: float | None) -> float | None:
        return None if value is None else round(value, 4)

    return {
        "rounds": [{**{key: value for key, value in turn_json(item.turn).items() if key not in ("text", "reasoning")},
                    "round": number, "text": item.turn.text,
                    "tool_calls": [{"id": r.call.id, "name": r.call.name, "arguments": r.call.arguments,
                                    "result_bytes": r.size, "cut": r.cut, "seconds": seconds(r.seconds),
                                    "error": r.error} for r in item.results]}
                   for number, item in enumerate(rounds.rounds, 1)],
        "round_count": len(rounds.rounds),
        "model_s": seconds(rounds.model_s),
        "tool_s": seconds(rounds.tool_s),
        "turn_total_s": seconds(rounds.total_s),
        "round_limit_hit": ended.limit_hit,
    }


def turn_json(turn: Turn) -> dict[str, object]:
    """The ``--json`` object, with the meter's figures under stable names."""
    reading = turn.reading()

    def rounded(value: float | None, scale: float = 1.0, digits: int = 1) -> float | None:
        return None if value is None else round(value * scale, digits)

    return {
        "source": turn.source,
        "model": turn.model,
        "task": turn.route.task if turn.route else None,
        "route_reason": turn.route.reason if turn.route else None,
        "fallback_from": turn.fallback_from,
        "fallback_reason": turn.fallback_reason,
        "ttft_ms": rounded(reading.ttft_s if reading else None, 1000.0),
        "time_to_answer_ms": rounded(reading.time_to_answer_s if reading else None, 1000.0),
        "decode_tps": rounded(reading.decode_tps if reading else None),
        "e2e_tps": rounded(reading.e2e_tps if reading else None),
        "server_tps": rounded(reading.server_tps if reading else None),
        "output_tokens": reading.output_tokens if reading else 0,
        "tokens_exact": reading.tokens_exact if reading else False,
        "reasoning_tokens": reading.reasoning_tokens if reading else None,
        "reasoning_tokens_exact": reading.reasoning_exact if reading else False,
        "total_s": rounded(reading.total_s if reading else None, digits=3),
        "status": turn.status,
        "finish_reason": turn.finish_reason,
        "end_note": turn.end_note,
        "error": turn.error.as_dict() if turn.error else None,
        "text": turn.text,
        "reasoning": turn.reasoning,
        "attachments": [{"name": a.name, "size": a.size, "lines": a.lines, "kind": a.kind}
                        for a in turn.options.attachments],
    }


class _Writer:
    """Writes reply text as it arrives, flushing at most every few milliseconds; ``dim`` dims it on a terminal.
    With ``hold``, the text is kept until :meth:`end_line`, which writes it all in one write.

    A stream closed at start (``>&-``) is ``None``: nothing is written, as ``print`` does; the reply is
    still saved in the history."""

    def __init__(self, stream: TextIO | None, quiet: bool, dim: bool = False, hold: bool = False) -> None:
        self.stream = None if quiet else stream
        self.live = is_terminal(self.stream)
        self.dim = dim and self.live
        self.held: list[str] | None = [] if hold else None
        self.wrote = False
        self.ended_with_newline = True
        self._next_flush = 0.0

    def write(self, text: str) -> None:
        if self.stream is None or not text:
            return
        self.wrote = True
        self.ended_with_newline = text.endswith("\n")
        text = f"{DIM}{text}{UNDIM}" if self.dim else text
        if self.held is not None:
            self.held.append(text)
            return
        self.stream.write(text)
        now = time.perf_counter()
        if self.live or now >= self._next_flush:
            self.stream.flush()
            self._next_flush = now + FLUSH_EVERY_S

    def flush(self) -> None:
        """Flush what was written (held text waits for :meth:`end_line`)."""
        if self.stream is not None:
            self.stream.flush()

    def end_line(self) -> None:
        """End the last line written, so what follows starts on its own line; held text is written now."""
        if self.stream is None:
            return
        end = "\n" if self.wrote and not self.ended_with_newline else ""
        self.ended_with_newline = True
        if self.held is not None:
            self.stream.write("".join(self.held) + end)
            self.held = []
        elif end:
            self.stream.write(end)
        self.flush()


def note(text: str) -> None:
    """A line for the user on stderr (nowhere when it is closed: ``print(file=None)`` would write to stdout)."""
    if sys.stderr is not None:
        print(text, file=sys.stderr)


class _Waiting:
    """The wait before a reply's first output, as one :class:`StatusLine` on a terminal's stderr: the stage
    the source reports (:class:`~fastchat_tui.sources.base.Preparing`) in the chat's words
    (:func:`~fastchat_tui.progress.preparing_text`), ``loading model… 3 s``; with ``labels`` (several
    columns) each column still waiting, by its label. A column's part goes when its output starts."""

    def __init__(self, line: StatusLine, labels: Sequence[str] | None = None) -> None:
        self.line = line
        self.labels = labels
        self._stages: dict[int, tuple[str, float]] = {}  # column -> the stage going on, and when it began
        self._texts: dict[int, str] = {}

    def show(self, column: int, event: Preparing) -> None:
        stage = self._stages.get(column)
        if stage is None or stage[0] != event.stage:
            stage = self._stages[column] = (event.stage, event.t)
        self._texts[column] = preparing_text(event.stage, event.t - stage[1], event.done, event.total)
        self._draw()

    def done(self, column: int) -> None:
        """``column`` has stopped waiting (output came, it ended, or a fallback starts over)."""
        if self._stages.pop(column, None) is not None:
            self._texts.pop(column, None)
            self._draw()

    def clear(self) -> None:
        self._stages.clear()
        self._texts.clear()
        self.line.clear()

    @contextlib.contextmanager
    def aside(self) -> Iterator[None]:
        """Write other lines to stderr meanwhile: the line is erased first and drawn again after them."""
        self.line.clear()
        try:
            yield
        finally:
            self._draw()

    def _draw(self) -> None:
        if not self._texts:
            self.line.clear()
        elif self.labels is None:
            self.line.show(" · ".join(self._texts.values()))
        else:
            self.line.show(" · ".join(f"{self.labels[column]}: {text}" for column, text in sorted(self._texts.items())))
