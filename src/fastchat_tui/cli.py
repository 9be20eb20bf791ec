"""The ``fastchat`` command: the TUI by default, and subcommands for scripts.

Each subcommand lives in ``fastchat_tui.commands.<name>`` and provides
``register(subparsers)``, which adds its parser and sets ``run=`` to a
function taking the parsed arguments and returning an exit code. Heavy
packages (openai, ollama, textual) are imported only by the command that runs.

The rules every command shares live here, once: a first word that is not a command is a prompt
for ``ask`` (``fastchat "question"``; a single word close to a command's name, or a command of another
tool such as ``logs`` or ``help``, is refused with fastchat's counterpart instead: see
:mod:`fastchat_tui.commands.other_tools`), an option no parser knows is refused as unknown, with the
closest there is, a ``-s``, ``-m``, ``-c`` or ``--chat`` given before the command is the
command's own (or is refused), an unknown source is a usage error, a mistyped option
gets the usage of the command it was given to, a reader that goes away (``| head``)
ends the command quietly, and SIGTERM and SIGHUP end it as Ctrl+C does (a streaming reply is
kept, marked cancelled and saved), with the exit code a shell expects (143, 129).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import os
import re
import signal
import sys
from collections.abc import Iterable, Iterator
from types import FrameType
from typing import Any, NoReturn

from fastchat_tui import __version__
from fastchat_tui.commands.common import CommandError, add_chat_options, add_model_option, fail
from fastchat_tui.commands.other_tools import command_mistake, option_mistake
from fastchat_tui.config import ConfigError

COMMANDS = ("ask", "config", "keys", "route", "review", "history", "usage", "bench", "models", "undo")
ONE_SOURCE = (None, "ask", "review", "route")
"""The chat and the commands whose ``-s`` names one source or ``auto`` (bench's names a list it checks itself)."""
GLOBAL = (("-s", "--source", "source", "takes no source"), ("-m", "--model", "model", "takes no model"),
          ("-c", "--continue", "continue_chat", "continues no chat"), ("--chat", "--chat", "chat_id", "continues no chat"))
"""The options of the chat that a command may take too: (as shown, option, dest, what a command without it
does not do)."""

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader left


class _Parser(argparse.ArgumentParser):
    """argparse for every level of ``fastchat``: plain-text help, and each command's own usage on its mistakes."""

    _given: tuple[str, ...] = ()
    """The words this parser was last given to parse."""

    def format_help(self) -> str:
        # Descriptions are the modules' docstrings: drop their ``literal`` markup.
        return re.sub(r"``(.+?)``", r"\1", super().format_help())

    def parse_known_args(self, args: Iterable[str] | None = None, namespace: Any = None) -> tuple[Any, list[str]]:
        """Refuse unknown arguments here, so ``fastchat ask --bogus`` prints ask's usage, not the top level's;
        an unknown option is named as one, with the closest this command has."""
        self._given = tuple(sys.argv[1:] if args is None else args)
        parsed, extras = super().parse_known_args(args, namespace)
        if option := next((extra for extra in extras if is_option(extra)), None):
            self.refuse_option(option)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        """Print the usage and ``message``, and exit 2. A word argparse calls an invalid choice
        (``history --limt 3``: ``invalid choice: '3'``) that follows an option this parser does not know was
        meant as that option's value: the option is the mistake, and the message says so."""
        if "invalid choice: " in message:
            for word in self._given:
                if f"invalid choice: {word!r}" in message:
                    break
                if is_option(word) and not self._knows(word):
                    self.refuse_option(word)
        super().error(message)

    def _knows(self, word: str) -> bool:
        """Whether ``word`` is one of this parser's options (``--lim`` too, which argparse takes for ``--limit``;
        ``-n5``, ``--limit=5``)."""
        options = self._option_string_actions  # argparse has no public list of a parser's options
        name = word.partition("=")[0]
        if name.startswith("--"):
            return any(option.startswith(name) for option in options)
        return name in options or word[:2] in options

    def refuse_option(self, option: str, also: _Parser | None = None) -> None:
        """A usage error for ``option``, which this parser does not know (:func:`option_mistake`): the closest of
        its options, or of ``also``'s (``ask``'s, for the top level, whose words are a prompt for ``ask``)."""
        options = [*self._option_string_actions, *(also._option_string_actions if also else ())]
        self.error(option_mistake(option, dict.fromkeys(options), self.prog))


def build_parser() -> tuple[_Parser, dict[str, _Parser]]:
    """The top-level parser and each command's parser by name."""
    parser = _Parser(
        prog="fastchat",
        description="Chat with fast hosted, local Ollama and OpenAI-compatible sources from one terminal. "
                    "`fastchat` alone opens the chat; `fastchat \"question\"` (a first word that is not a COMMAND) "
                    "runs `fastchat ask \"question\"`.",
    )
    parser.add_argument("--version", action="version", version=f"fastchat {__version__}")
    parser.add_argument("-s", "--source", dest="global_source", metavar="SOURCE",
                        help="the source for the chat, or for a COMMAND that takes -s (default: the config's "
                             "default_source)")
    add_model_option(parser, dest="global_model")
    add_chat_options(parser, prefix="global_")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"fastchat_tui.commands.{name}").register(subparsers)
    return parser, subparsers.choices


def is_option(word: str) -> bool:
    """Whether a command-line word is an option (``-x``, ``--name``), as argparse reads one: not ``-`` or a
    negative number."""
    return word.startswith("-") and word != "-" and not _NEGATIVE.fullmatch(word)


_NEGATIVE = re.compile(r"-\d+$|-\d*\.\d+$")


def _bare_prompt(argv: list[str], parser: _Parser, commands: dict[str, _Parser]) -> list[str]:
    """``fastchat "question"``: a first word that is neither an option nor a command makes the line an
    ``ask`` (with every option given, which ``ask`` takes too). A lone word that reads as a command (a
    command's name mistyped, ``fastchat histroy``, or another tool's, ``fastchat logs``) is a usage error
    that says what to type instead; so is an option before the first word that neither the top level nor
    ``ask`` knows (``fastchat -r coder``), which argparse would report as a wrong command."""
    words, unknown = _positionals(argv, commands["ask"], parser)
    if words and words[0] in commands:
        return argv
    if len(words) == 1 and not words[0].split()[1:] and (mistake := command_mistake(words[0], commands)):
        parser.error(f"{mistake} To send it as a prompt: fastchat ask {words[0]}")
    if unknown is not None and not words:
        parser.refuse_option(unknown, also=commands["ask"])
    return ["ask", *argv] if words else argv


def _positionals(argv: list[str], ask: _Parser, top: _Parser) -> tuple[list[str], str | None]:
    """The words of ``argv`` that are not options or their values, read as ``ask`` reads them, up to the first
    option ``ask`` does not know; and that option, unless the top level knows it (``--version``: argparse
    answers it)."""
    options = ask._option_string_actions  # argparse has no public list of a parser's options
    words: list[str] = []
    index = 0
    while index < len(argv):
        word = argv[index]
        index += 1
        if word == "--":
            return words + argv[index:], None
        if not is_option(word):
            words.append(word)
            continue
        name, equals, _ = word.partition("=")
        action = options.get(name) or (options.get(word[:2]) if not word.startswith("--") else None)
        if action is None:
            return words, None if name in top._option_string_actions else word
        if action.nargs != 0 and not equals and name in options:  # the value is the next word
            index += 1
    return words, None


def _apply_global(args: argparse.Namespace, commands: dict[str, _Parser]) -> None:
    """``fastchat -s X -m M -c COMMAND ...``: each becomes the command's own option, or is refused if it has none."""
    for flag, option, dest, lacking in GLOBAL:
        given = vars(args).pop(f"global_{dest}")
        if args.command is None:
            setattr(args, dest, given)
            continue
        if given in (None, False):
            continue
        command = commands[args.command]
        shown = flag if given is True else f"{flag} {given}"
        if option not in command._option_string_actions:  # argparse has no public list of a parser's options
            command.error(f"{shown} was given before '{args.command}', which {lacking}")
        if getattr(args, dest) not in (None, False, given):
            command.error(f"two different {option.lstrip('-')}s: {shown} before '{args.command}' and "
                          f"{flag} {getattr(args, dest)} after it")
        setattr(args, dest, given)


def _check_source(args: argparse.Namespace) -> None:
    """An unknown source is a usage error (exit 2) before any command starts."""
    if args.command not in ONE_SOURCE or args.source in (None, "auto"):
        return
    from fastchat_tui.config import load, unknown_source
    from fastchat_tui.keys import has_stored_key

    configured = load(has_stored_key=has_stored_key).sources
    if args.source not in configured:
        raise CommandError(unknown_source(args.source, configured, also="auto"), EXIT_USAGE)


INTERRUPTING = (signal.SIGTERM, signal.SIGHUP)
"""Signals that end a command the way Ctrl+C (SIGINT) does, instead of killing it mid-write."""


@contextlib.contextmanager
def _interrupting_signals() -> Iterator[list[int]]:
    """While the command runs, SIGTERM and SIGHUP run the SIGINT handler of the moment: asyncio's cancels
    the running reply (the session keeps it, marks it cancelled and saves it), Python's raises
    ``KeyboardInterrupt``. Yields the signals received, for the exit code. A signal the parent set to
    be ignored (``nohup``) stays ignored; the chat handles them itself while it runs (``FastchatApp``)."""
    received: list[int] = []

    def interrupt(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        handler = signal.getsignal(signal.SIGINT)
        (handler if callable(handler) else signal.default_int_handler)(signal.SIGINT, frame)

    taken = [sig for sig in INTERRUPTING if signal.getsignal(sig) == signal.SIG_DFL]
    for sig in taken:
        signal.signal(sig, interrupt)
    try:
        yield received
    finally:
        for sig in taken:
            signal.signal(sig, signal.SIG_DFL)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv in (["--version"], ["-V"]):
        print(f"fastchat {__version__}")
        return EXIT_OK
    with _interrupting_signals() as received:
        try:
            code = _main(argv)
        except OSError as exc:
            if not (received and exc.errno == errno.EIO):
                raise
            # The terminal hung up (SIGHUP, then EIO on every write): the reply was saved before the
            # write failed, and nothing more can be shown. Silence the interpreter's last flush too.
            _to_devnull(1, 2)
            code = EXIT_INTERRUPTED
    return 128 + received[0] if code == EXIT_INTERRUPTED and received else code


def _to_devnull(*fds: int) -> None:
    """Point ``fds`` at /dev/null: for output that has no one left to read it."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in fds:
        os.dup2(devnull, fd)
    os.close(devnull)


def _main(argv: list[str]) -> int:
    from fastchat_tui.keys import install_excepthook, install_log_redaction

    install_excepthook()
    install_log_redaction()
    parser, commands = build_parser()
    args = parser.parse_args(_bare_prompt(argv, parser, commands))
    _apply_global(args, commands)
    try:
        _check_source(args)
        run = getattr(args, "run", None)
        if run is None:
            from fastchat_tui.commands.tui import run_tui

            code = run_tui(args)
        else:
            code = run(args)
        if sys.stdout is not None:  # None when fd 1 was closed at start (print() then writes nothing)
            sys.stdout.flush()  # here, where a closed pipe can still be told apart from a failure
        return code
    except CommandError as exc:
        fail(str(exc))
        return exc.code
    except ConfigError as exc:
        fail(str(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`fastchat history --json | head`): nothing more can be shown to
        # anyone. Point stdout at /dev/null so the interpreter's last flush is silent too.
        _to_devnull(sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
