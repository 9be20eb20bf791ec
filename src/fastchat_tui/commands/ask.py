"""``fastchat ask``: one prompt, the reply streamed to stdout, the meter on stderr."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from contextlib import aclosing
from typing import TYPE_CHECKING, TextIO

from fastchat_tui.commands.common import CommandError, load_config, warn
from fastchat_tui.meter import reply_line
from fastchat_tui.sources.base import TextDelta

if TYPE_CHECKING:
    from fastchat_tui.session import Session
    from fastchat_tui.turn import SendOptions, Turn

FLUSH_EVERY_S = 0.03


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("ask", help="send one prompt and print the reply", description=__doc__)
    parser.add_argument("prompt", nargs="*", help="the prompt (stdin is appended when it is a pipe)")
    parser.add_argument("-s", "--source", help="source name, or 'auto' (default: the config's default_source)")
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end instead of streaming text")
    parser.add_argument("--max-tokens", type=int, help="cap the reply length")
    parser.set_defaults(run=run)


def read_prompt(words: list[str], stdin: TextIO) -> str:
    """The prompt from the arguments, followed by piped stdin if there is any."""
    prompt = " ".join(words).strip()
    if not stdin.isatty():
        piped = stdin.read()
        if piped.strip():
            prompt = f"{prompt}\n\n{piped}" if prompt else piped
    if not prompt.strip():
        raise CommandError("nothing to ask: give a prompt as arguments or on stdin", 2)
    return prompt


def run(args: argparse.Namespace) -> int:
    config = load_config()
    prompt = read_prompt(args.prompt, sys.stdin)
    from fastchat_tui.session import Session
    from fastchat_tui.turn import SendOptions

    session = Session.open(config, on_problem=warn)
    return stream_reply(session, prompt, SendOptions(source=args.source, max_tokens=args.max_tokens), as_json=args.json)


def stream_reply(session: Session, prompt: str, options: SendOptions, *, as_json: bool) -> int:
    """Send ``prompt``, stream the reply to stdout as it comes, report the end; returns the exit code."""
    from fastchat_tui.events import Finished, Routed

    writer = _Writer(sys.stdout, quiet=as_json)
    seen: list[Turn] = []

    async def main() -> None:
        try:
            async with aclosing(session.stream(prompt, options)) as events:
                async for event in events:
                    if type(event) is TextDelta:
                        writer.write(event.text)
                    elif type(event) is Routed or type(event) is Finished:
                        seen[:] = [event.turn]
        finally:
            writer.flush()
            await session.aclose()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    return report(seen[-1] if seen else None, as_json, writer)


def report(turn: Turn | None, as_json: bool, writer: _Writer) -> int:
    """Print the end of a reply (newline, meter line or JSON) and return the exit code."""
    if turn is None:
        if as_json:
            print(json.dumps({"status": "cancelled", "error": None, "text": ""}))
        return 130
    if turn.status in ("pending", "streaming"):  # interrupted before the session could mark it
        turn.status = "cancelled"
    if as_json:
        print(json.dumps(turn_json(turn), ensure_ascii=False))
    else:
        if writer.wrote and not writer.ended_with_newline:
            sys.stdout.write("\n")
            sys.stdout.flush()
        print(reply_line(turn.source, turn.model, turn.reading(), turn.status,
                         fallback_from=turn.fallback_from, fallback_reason=turn.fallback_reason), file=sys.stderr)
        if turn.error:
            print(f"fastchat: {turn.error.kind}: {turn.error.message}", file=sys.stderr)
    return {"complete": 0, "cancelled": 130}.get(turn.status, 1)


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
        "decode_tps": rounded(reading.decode_tps if reading else None),
        "e2e_tps": rounded(reading.e2e_tps if reading else None),
        "server_tps": rounded(reading.server_tps if reading else None),
        "output_tokens": reading.output_tokens if reading else 0,
        "tokens_exact": reading.tokens_exact if reading else False,
        "total_s": rounded(reading.total_s if reading else None, digits=3),
        "status": turn.status if turn.status in ("complete", "cancelled") else "error",
        "error": turn.error.as_dict() if turn.error else None,
        "text": turn.text,
    }


class _Writer:
    """Writes reply text as it arrives, flushing at most every few milliseconds."""

    def __init__(self, stream: TextIO, quiet: bool) -> None:
        self.stream, self.quiet = stream, quiet
        self.live = stream.isatty()
        self.wrote = False
        self.ended_with_newline = True
        self._next_flush = 0.0

    def write(self, text: str) -> None:
        if self.quiet:
            return
        self.stream.write(text)
        self.wrote = True
        self.ended_with_newline = text.endswith("\n")
        now = time.perf_counter()
        if self.live or now >= self._next_flush:
            self.stream.flush()
            self._next_flush = now + FLUSH_EVERY_S

    def flush(self) -> None:
        if not self.quiet:
            self.stream.flush()
