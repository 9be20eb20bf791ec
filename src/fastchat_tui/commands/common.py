"""Small helpers shared by the subcommands: errors, the config, reading the user's input, and the options
that say how a prompt is sent (``-m``, ``-c``/``--chat``, ``--system``, ``--temperature``, ``-t``)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from fastchat_tui.attachment import human_size
from fastchat_tui.config import Config, ConfigError, Template, load
from fastchat_tui.inputs import InputError, InputText, argument, read, read_path

if TYPE_CHECKING:
    from fastchat_tui.attachment import Attachment
    from fastchat_tui.catalog import ModelChoice
    from fastchat_tui.session import Session
    from fastchat_tui.turn import SendOptions

INPUT_ERROR = 1
"""The exit code of input that cannot be used (too large, binary, unreadable, empty), in every command."""
NOTE_AFTER_S = 3.0
"""How long an input may keep fastchat waiting before a terminal's stderr says so."""


class CommandError(Exception):
    """A user-facing failure of a subcommand: printed as ``fastchat: message`` with an exit code."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


def load_config() -> Config:
    """The user's config, checked exactly as the chat checks it (the ``[router]`` table too).

    A broken file raises ``CommandError`` with exit code 2, naming file, line and key. With no
    config file, presets whose key is in the environment or the OS keyring are found.
    """
    from fastchat_tui.keys import has_stored_key

    try:
        return load(has_stored_key=has_stored_key)
    except ConfigError as exc:
        raise CommandError(str(exc), 2) from None


def attach_keyboard() -> bool:
    """Make fd 0 the terminal again after the input came through a pipe; ``False`` if there is none.

    Textual's Linux driver reads keys from ``sys.__stdin__.fileno()`` (fd 0) and puts that
    descriptor in raw mode, so the controlling terminal (``/dev/tty``) is duplicated onto
    fd 0 once the pipe has been read to its end.
    """
    if sys.__stdin__ is not None and sys.__stdin__.isatty():
        return True
    try:
        fd = os.open("/dev/tty", os.O_RDWR)
    except OSError:
        return False
    try:
        os.dup2(fd, 0)
    finally:
        os.close(fd)
    if sys.__stdin__ is None:  # fd 0 was closed at start: give Python a stdin object for it
        # typeshed marks __stdin__ Final, but Textual's driver reads it: it must be the terminal
        sys.stdin = sys.__stdin__ = open(0, closefd=False)  # type: ignore[misc]  # noqa: SIM115
    return True


def fail(message: str) -> None:
    """Print an error for the user, with any key that slipped into it redacted (nowhere if stderr is closed:
    ``print(file=None)`` would write to stdout)."""
    from fastchat_tui.keys import redact

    if sys.stderr is not None:
        print(f"fastchat: {redact(message)}", file=sys.stderr)


def warn(message: str) -> None:
    """Print a warning that does not stop the command."""
    fail(f"warning: {message}")


def is_terminal(stream: TextIO | None) -> bool:
    """Whether ``stream`` is a terminal; a stream closed at start (``<&-``, ``>&-``) is ``None`` and is not."""
    return stream is not None and stream.isatty()


def stdin_is_piped() -> bool:
    """Whether stdin carries input to read: open and not the terminal."""
    return sys.stdin is not None and not sys.stdin.isatty()


def text_argument(value: str, what: str) -> str:
    """A command-line argument as text (bytes that are not UTF-8 as U+FFFD, with a warning)."""
    text, warning = argument(value, what)
    if warning:
        warn(warning)
    return text


def positive(text: str) -> int:
    """An option's whole number of at least 1 (``--max-tokens``, ``--chat``, ``--repeat``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def temperature(text: str) -> float:
    """``--temperature``: a number from 0 to 2, as every provider takes it."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not 0 <= value <= 2:  # NaN too
        raise argparse.ArgumentTypeError("must be from 0 to 2")
    return value


def add_model_option(parser: argparse.ArgumentParser, dest: str = "model") -> None:
    parser.add_argument("-m", "--model", dest=dest, metavar="MODEL",
                        help="the model: SOURCE/MODEL, or a model name one source serves, which then picks the "
                             "source (`fastchat models` lists them)")


def add_chat_options(parser: argparse.ArgumentParser, prefix: str = "") -> None:
    chat = parser.add_mutually_exclusive_group()
    chat.add_argument("-c", "--continue", dest=f"{prefix}continue_chat", action="store_true",
                      help="continue the most recent chat")
    chat.add_argument("--chat", dest=f"{prefix}chat_id", type=positive, metavar="ID",
                      help="continue chat ID (`fastchat history` lists them)")


def add_prompt_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``ask`` and ``review`` that say how the prompt is sent and its reply printed."""
    add_model_option(parser)
    parser.add_argument("--system", metavar="TEXT",
                        help="the system prompt of this request, instead of the source's or the config's "
                             "system_prompt (\"\" sends none)")
    parser.add_argument("--temperature", type=temperature, metavar="T",
                        help="the sampling temperature, 0 to 2 (default: the source's or the config's "
                             "temperature, else the server's)")
    parser.add_argument("--max-tokens", type=positive, metavar="N", help="cap the reply length")
    parser.add_argument("-t", "--template", metavar="NAME",
                        help="a [templates.NAME] prompt of the config: its system prompt, and its prompt with "
                             "$input replaced by the input")
    parser.add_argument("--no-stream", action="store_true",
                        help="write the whole reply to stdout at once when it ends, instead of as it streams")


def template(config: Config, name: str | None) -> Template | None:
    """The ``-t NAME`` template; an unknown name is a usage error that lists those there are."""
    if name is None:
        return None
    found = config.templates.get(name)
    if found is None:
        there = ", ".join(config.templates) or "none yet: add a [templates.NAME] table to the config"
        raise CommandError(f"no template named '{name}' (configured: {there})", 2)
    return found


def send_options(args: argparse.Namespace, config: Config) -> SendOptions:
    """How ``ask`` and ``review`` send: ``-s``, ``-m`` (a model names its source), ``--max-tokens``, ``--system``,
    ``--temperature``, ``--allow-sensitive``, ``--tools``/``--no-tools``. A ``-t`` template adds its system prompt
    when there is no ``--system`` (:func:`fastchat_tui.conversation.apply_template`)."""
    from fastchat_tui.turn import SendOptions

    source, model = args.source, None
    if args.model is not None:
        choice = choose_model(config, text_argument(args.model, "the -m model"), [args.source] if args.source else [])
        source, model = choice.source, choice.model
    system = text_argument(args.system, "the --system text") if args.system is not None else None
    return SendOptions(source=source, model=model, max_tokens=args.max_tokens, allow_sensitive=args.allow_sensitive,
                       system=system, temperature=args.temperature, tools=getattr(args, "tools", None))


def model_spec(config: Config, spec: str, sources: Sequence[str] = ()) -> str:
    """``-m SPEC`` with the ``-s`` ``sources``: a bare name given with one source is that source's model
    (``SOURCE/NAME``); a spec that names a source ``-s`` does not is a usage error."""
    spec = spec.strip()
    named = [name for name in sources if name != "auto"]
    head, slash, _ = spec.partition("/")
    if slash and head in config.sources:
        if named and head not in named:
            raise CommandError(f"-m {spec} names the source {head}, but -s names {', '.join(named)}", 2)
        return spec
    return f"{named[0]}/{spec}" if len(named) == 1 else spec


def choose_model(config: Config, spec: str, sources: Sequence[str] = ()) -> ModelChoice:
    """What ``-m SPEC`` names, asking the sources that serve what it could name (see
    :func:`fastchat_tui.catalog.resolve_in`). With ``sources`` (``-s``), a bare name is a model of those: of
    the one source as given, or the one of several that lists it. A spec that names no model, or more than
    one, is a usage error that lists what there is."""
    return choose_models(config, [spec], sources)[0]


def choose_models(config: Config, specs: Sequence[str], sources: Sequence[str] = ()) -> list[ModelChoice]:
    """:func:`choose_model` for several specs at once (``ask --race a,local/llama3.2``): the sources they need
    are asked together, each once."""
    from fastchat_tui.catalog import Catalog, ModelSpecError, resolve_in
    from fastchat_tui.session import Session

    specs = [model_spec(config, spec, sources) for spec in specs]
    named = [name for name in sources if name != "auto"]
    session = Session(config)
    catalog = Catalog(config, session.source)

    async def resolve(spec: str) -> ModelChoice:
        head, slash, _ = spec.partition("/")
        if not (slash and head in config.sources) and len(named) > 1:
            return resolve_in(config, await catalog.listings(named), spec)
        return await catalog.resolve(spec)

    async def ask() -> list[ModelChoice]:
        try:
            return list(await asyncio.gather(*(resolve(spec) for spec in specs)))
        finally:
            await session.aclose()

    try:
        choices = asyncio.run(ask())
    except ModelSpecError as exc:
        raise CommandError(exc.message, 2) from None
    for choice in choices:
        listing = catalog.cached(choice.source)
        if not choice.listed and listing is not None and listing.error is None:
            warn(f"{choice.source} does not list {choice.model}; sending it there anyway")
    return choices


def continue_chat(session: Session, latest: bool, chat_id: int | None) -> None:
    """``-c`` (``latest``) or ``--chat ID``: the session goes on with that saved chat, its messages sent as
    context and the new reply saved into it. With no chat saved yet, ``-c`` starts one (and says so)."""
    if not latest and chat_id is None:
        return
    from fastchat_tui.store import ChatRecorder, StoreError

    recorder = session.recorder
    if not isinstance(recorder, ChatRecorder):
        raise CommandError("history is not being saved, so there is no chat to continue", 1)
    try:
        if chat_id is None:
            chats = recorder.store.chats(limit=1)
            if not chats:
                warn("no saved chat to continue yet; this starts one")
                return
            chat_id = chats[0].id
        elif recorder.store.chat(chat_id) is None:
            raise CommandError(f"no chat with id {chat_id} (`fastchat history` lists them)", 2)
        session.resume(chat_id)
    except StoreError as exc:
        raise CommandError(exc.message) from None


def read_input(path: str, name: str, config: Config, *, max_lines: int | None = None) -> InputText:
    """Read one input, ``-`` for stdin (a closed stdin reads as empty), within ``config.max_input_bytes``,
    and print its decoding warning. On a terminal's stderr, an input that keeps fastchat waiting is told
    about after :data:`NOTE_AFTER_S`. Input that cannot be used raises :class:`InputError`."""
    with _StillReading(name, "Ctrl+D ends input, Ctrl+C cancels" if path == "-" else "Ctrl+C cancels") as note:
        if path != "-":
            got = read_path(path, name, config.max_input_bytes, max_lines=max_lines, progress=note)
        elif sys.stdin is None:
            got = InputText("", 0)
        else:
            got = read(_stdin_reader(sys.stdin), name, config.max_input_bytes, max_lines=max_lines, progress=note)
    if got.warning:
        warn(got.warning)
    return got


def add_file_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-f", "--file", action="append", default=[], metavar="PATH",
                        help="a file, directory or glob ('src/**/*.py') sent along with the prompt (repeatable; - is "
                             "stdin); a directory or glob skips what .gitignore ignores and binary files, with a note")


def attach_files(paths: Sequence[str], config: Config, *, max_lines: int | None = None) -> list[Attachment]:
    """The ``-f`` paths as attachments (:func:`fastchat_tui.project_files.expand`, relative to the working
    directory), each read within the config's limits; what was skipped and decoding warnings go to stderr.
    Input that cannot be used is a :class:`CommandError`."""
    from fastchat_tui.project_files import Limits, expand

    try:
        got = expand(paths, Path.cwd(), limits=Limits.of(config), max_lines=max_lines,
                     read_stdin=lambda: read_input("-", "stdin", config, max_lines=max_lines))
    except InputError as exc:
        raise CommandError(str(exc), INPUT_ERROR) from None
    for attachment in got.attachments:
        if attachment.warning and attachment.path is not None:  # stdin's was said as it was read
            warn(attachment.warning)
    for line in got.notes:
        fail(f"note: {line}")
    return got.attachments


def read_stdin(config: Config) -> str:
    """Piped stdin as text (see :func:`read_input`); input that cannot be used is a :class:`CommandError`."""
    try:
        return read_input("-", "stdin", config).text
    except InputError as exc:
        raise CommandError(str(exc), INPUT_ERROR) from None


def _stdin_reader(stdin: TextIO) -> Callable[[int], bytes]:
    """Reads of at most ``n`` bytes that return what has arrived (a pipe's writer may be slow)."""
    binary = getattr(stdin, "buffer", None)
    if binary is not None:
        return binary.read1
    # a text stream put in place of sys.stdin (by a program that runs fastchat in-process): back to bytes
    return lambda n: stdin.read(n).encode("utf-8", "surrogateescape")


class StatusLine:
    """One line on a terminal's stderr, rewritten in place and erased when the wait it tells about is over
    (fastchat still reading its input, a model loading). A stream that is no terminal (a pipe, a log file)
    gets nothing: the line is for someone watching, not for a log."""

    ERASE = "\r\x1b[K"

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream if is_terminal(stream) else None
        self.shown = False

    def show(self, text: str) -> None:
        """Put ``text`` in place of what the line said, cut to the terminal's width (a wrapped line could not
        be rewritten)."""
        if self.stream is None:
            return
        try:
            width = os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError):
            width = 0
        self.stream.write(self.ERASE + (text[:width - 1] if width > 1 else text))  # 0: a size never set
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        """Erase the line, so what comes next starts where it began."""
        if self.shown and self.stream is not None:
            self.stream.write(self.ERASE)
            self.stream.flush()
        self.shown = False


class _StillReading:
    """A :class:`StatusLine` while an input keeps fastchat waiting: its name, the bytes read so far and how to
    end or cancel; rewritten every second and erased when reading ends.

    A pipe whose writer never closes is the user's pipe (as for ``cat``): reading goes on until it ends or
    passes the input limit, and this line says why nothing else happens."""

    def __init__(self, name: str, keys: str) -> None:
        self.name, self.keys = name, keys
        self.so_far = 0
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._line = StatusLine(None)

    def __call__(self, so_far: int) -> None:
        self.so_far = so_far

    def __enter__(self) -> _StillReading:
        self._line = StatusLine(sys.stderr)
        if self._line.stream is not None:
            self._thread = threading.Thread(target=self._show, name="fastchat-still-reading", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        self._line.clear()

    def _show(self) -> None:
        if self._done.wait(NOTE_AFTER_S):
            return
        while True:
            self._line.show(f"fastchat: still reading {self.name}: {human_size(self.so_far)} so far ({self.keys})")
            if self._done.wait(1.0):
                return
