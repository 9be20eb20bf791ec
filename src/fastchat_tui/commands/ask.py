"""``fastchat ask``: one prompt, the answer streamed to stdout, the reasoning (if shown) and the meter on stderr.

    fastchat ask "question"                  fastchat "question"     (the same)
    fastchat ask -m llama3.2 "question"      the model picks the source (or -m local/llama3.2)
    fastchat ask -c "and then?"              continue the most recent chat (--chat ID: that one)
    fastchat ask -t review-notes < notes.md  a [templates.NAME] prompt, with $input the prompt given

Every ask is saved as a chat (``fastchat history``), which ``-c`` or ``--chat ID`` continues.

Exit codes: 0 for an answer (also one cut at the token limit), 1 for no answer, a cut stream or an error,
2 for a usage or config error, 130 when cancelled.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from contextlib import aclosing
from typing import TYPE_CHECKING, TextIO

from fastchat_tui.commands.common import (
    CommandError,
    add_chat_options,
    add_prompt_options,
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
from fastchat_tui.sources.base import ModelChosen, ReasoningDelta, TextDelta

if TYPE_CHECKING:
    from fastchat_tui.config import Config
    from fastchat_tui.session import Session
    from fastchat_tui.turn import SendOptions, Turn

FLUSH_EVERY_S = 0.03
DIM, UNDIM = "\x1b[2m", "\x1b[22m"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("ask", help="send one prompt and print the reply", description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("prompt", nargs="*", help="the prompt (stdin is appended when it is a pipe)")
    parser.add_argument("-s", "--source", help="source name, or 'auto' (default: the config's default_source)")
    add_prompt_options(parser)
    add_chat_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end instead of streaming text")
    parser.add_argument("--allow-sensitive", action="store_true",
                        help="send this prompt even if it looks sensitive and the source is not private (this request only)")
    add_reasoning_option(parser)
    parser.set_defaults(run=run)


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


NOTHING_TO_ASK = "nothing to ask: give a prompt as arguments or on stdin"


def run(args: argparse.Namespace) -> int:
    config = load_config()
    chosen = template(config, args.template)
    prompt = read_prompt(args.prompt, config)
    if chosen is not None:
        prompt = chosen.render(prompt).strip()
    if not prompt:
        raise CommandError(NOTHING_TO_ASK, 2)
    options = send_options(args, config, chosen)
    from fastchat_tui.session import Session

    session = Session.open(config, on_problem=warn)
    continue_chat(session, args.continue_chat, args.chat_id)
    return stream_reply(session, prompt, options, as_json=args.json, reasoning=shows_reasoning(args),
                        stream=not args.no_stream)


def stream_reply(session: Session, prompt: str, options: SendOptions, *, as_json: bool, reasoning: bool,
                 stream: bool = True) -> int:
    """Send ``prompt``, stream the answer to stdout (and, with ``reasoning``, the reasoning to stderr) as it
    comes, report the end; returns the exit code. Without ``stream`` the answer is written in one write
    when the reply ends (``--no-stream``)."""
    from fastchat_tui.events import Finished, Routed

    writer = _Writer(sys.stdout, quiet=as_json, hold=not stream)
    thinking = _Writer(sys.stderr, quiet=not reasoning, dim=True)
    seen: list[Turn] = []

    async def main() -> None:
        try:
            async with aclosing(session.stream(prompt, options)) as events:
                async for event in events:
                    if type(event) is TextDelta:
                        if not writer.wrote:
                            thinking.end_line()  # the answer starts below the reasoning
                        writer.write(event.text)
                    elif type(event) is ReasoningDelta:
                        thinking.write(event.text)
                    elif type(event) is ModelChosen:  # before any output: the source's own choice of model
                        print(event.note, file=sys.stderr)
                    elif type(event) is Routed or type(event) is Finished:
                        seen[:] = [event.turn]
        finally:
            writer.flush()
            thinking.end_line()
            await session.aclose()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
    return report(seen[-1] if seen else None, as_json, writer, session.recorder.chat_id if session.recorder else None)


def report(turn: Turn | None, as_json: bool, writer: _Writer, chat_id: int | None = None) -> int:
    """Print the end of a reply (newline, meter line or JSON, with the ``chat_id`` it was saved in) and return the
    exit code."""
    if turn is None:
        if as_json:
            print(json.dumps({"status": "cancelled", "error": None, "text": "", "reasoning": "", "chat_id": chat_id}))
        return 130
    if turn.status in ("pending", "streaming"):  # interrupted before the session could mark it
        turn.status = "cancelled"
    from fastchat_tui.keys import redact  # what a server echoes back (a key's prefix, a URL password) stays here

    if as_json:
        print(redact(json.dumps(turn_json(turn) | {"chat_id": chat_id}, ensure_ascii=False)))
    else:
        writer.end_line()
        if sys.stderr is not None:  # closed (2>&-): print(file=None) would write the meter line to stdout
            print(redact(reply_line(turn.source, turn.model, turn.reading(), turn.status, note=turn.end_note,
                                    fallback_from=turn.fallback_from, fallback_reason=turn.fallback_reason)),
                  file=sys.stderr)
        if turn.error:
            fail(turn.error.shown)
    return exit_code(turn)


def exit_code(turn: Turn) -> int:
    """0 for an answer (one cut at the token limit too), 130 when cancelled, else 1 (no answer, cut, error)."""
    if turn.status == "complete" or (turn.status == "truncated" and turn.answered):
        return 0
    return 130 if turn.status == "cancelled" else 1


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
        if self.stream is None:
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
