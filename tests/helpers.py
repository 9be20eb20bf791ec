"""What many test files need, written once: ``fastchat`` run in a subprocess and the environment it gets, a config
file, a session over loopback sources, and waiting on a Textual app. A change to how fastchat starts, reads its
config or builds a session is then made here, not in every test file."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from contextlib import aclosing
from functools import partial
from pathlib import Path
from typing import Any, Literal, overload

from textual.geometry import Region
from textual.widget import Widget

from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.events import SessionEvent
from fastchat_tui.router import Router
from fastchat_tui.session import Router as RouterLike, Session
from fastchat_tui.store import Store, StoreLedger
from fastchat_tui.turn import SendOptions

BOUND_S = 60.0
"""The longest a ``fastchat`` child may run; each test goes on as soon as the child ends."""
TEST_KEY = "test-key"
"""The key every source of :func:`session_for` gets (the loopback servers take any key)."""
FASTCHAT = [sys.executable, "-m", "fastchat_tui"]
"""The argv that starts the command from this checkout's interpreter."""
NO_KEYRING = "keyring.backends.fail.Keyring"
"""A keyring backend that holds nothing, so a child never reads or writes the user's keyring."""


def as_a_shell_starts_it(*ignored: int) -> None:
    """For ``preexec_fn``: the child starts with SIGHUP, SIGTERM and SIGINT handled by default, as a shell in a
    terminal starts a command, but for the ``ignored`` ones (as ``nohup`` ignores SIGHUP). Without this it inherits
    the test run's: a run under ``nohup``, or in the background, ignores some, and the child keeps ignoring them."""
    for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN if sig in ignored else signal.SIG_DFL)


def child_env(config: Path | str | None = None, *, data: Path | None = None, home: Path | None = None,
              **extra: str) -> dict[str, str]:
    """The environment of a ``fastchat`` child: this process's (whose XDG dirs and data folder are the test's own,
    see ``isolated_dirs`` in conftest) without proxy variables, so loopback requests go direct, and with a keyring
    that holds nothing. ``config``: its config file; ``data``: its history folder; ``home``: start instead from
    nothing but ``PATH`` (and ``PYTHONPATH``, so the child runs this checkout), with ``HOME`` there and the
    config (``XDG_CONFIG_HOME``) and data folders in it; ``extra``: more variables (a key, a tuning knob)."""
    if home is None:
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    else:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "XDG_CONFIG_HOME": str(home / "xdg"),
               "FASTCHAT_DATA_DIR": str(home / "data")}
        if "PYTHONPATH" in os.environ:
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    env["PYTHON_KEYRING_BACKEND"] = NO_KEYRING
    if config is not None:
        env["FASTCHAT_CONFIG"] = str(config)
    if data is not None:
        env["FASTCHAT_DATA_DIR"] = str(data)
    env.update(extra)
    return env


@overload
def fastchat(env: Mapping[str, str], *args: str | bytes, stdin: str | bytes | int | None = None,
             cwd: Path | None = None, timeout: float = BOUND_S, text: Literal[True] = True,
             shell_redirect: str | None = None) -> subprocess.CompletedProcess[str]: ...
@overload
def fastchat(env: Mapping[str, str], *args: str | bytes, stdin: str | bytes | int | None = None,
             cwd: Path | None = None, timeout: float = BOUND_S, text: Literal[False],
             shell_redirect: str | None = None) -> subprocess.CompletedProcess[bytes]: ...
def fastchat(env: Mapping[str, str], *args: str | bytes, stdin: str | bytes | int | None = None,
             cwd: Path | None = None, timeout: float = BOUND_S, text: bool = True,
             shell_redirect: str | None = None) -> subprocess.CompletedProcess[Any]:
    """Run the real command with ``args`` and wait for it; fails the test if it printed a traceback.

    ``stdin``: text or bytes to pipe in, a file descriptor to read, or ``None`` for ``/dev/null``.
    ``text``: decode stdout and stderr (UTF-8), else keep them bytes. ``shell_redirect`` (``<&-``, ``>&-``,
    ``2>&-``): a real shell closes that stream before fastchat starts.
    """
    argv: list[str | bytes] = [*FASTCHAT, *args]
    if shell_redirect:
        argv = ["sh", "-c", f'exec "$@" {shell_redirect}', "sh", *argv]
    feed: dict[str, Any] = {"stdin": subprocess.DEVNULL if stdin is None else stdin}
    if isinstance(stdin, (str, bytes)):
        data = stdin.encode() if isinstance(stdin, str) else stdin
        feed = {"input": data.decode() if text else data}
    done = subprocess.run(argv, **feed, capture_output=True, encoding="utf-8" if text else None, env=dict(env),
                          cwd=cwd, timeout=timeout)
    err = done.stderr if text else done.stderr.decode(errors="replace")
    assert "Traceback" not in err, err
    return done


def _toml_value(value: Any) -> str:
    """``value`` (text, number, truth value or a list of them) as TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_config(where: Path, sources: Mapping[str, Mapping[str, Any]] | None = None, *,
                 router: Mapping[str, Any] | None = None, **top: Any) -> Path:
    """Write ``where/config.toml``: the ``top`` keys, a ``[sources.NAME]`` table for each of ``sources`` (in order)
    and a ``[router]`` table; its path."""
    lines = [f"{key} = {_toml_value(value)}" for key, value in top.items()]
    for name, keys in (sources or {}).items():
        lines.append(f"[sources.{name}]")
        lines += [f"{key} = {_toml_value(value)}" for key, value in keys.items()]
    if router:
        lines.append("[router]")
        lines += [f"{key} = {_toml_value(value)}" for key, value in router.items()]
    path = where / "config.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def source(name: str, url: str, *tags: str, **extra: Any) -> SourceConfig:
    """An OpenAI-compatible source at ``url`` whose model is ``NAME-model``, tagged ``tags`` (``hosted`` if none)."""
    return SourceConfig(name, "openai", url, f"{name}-model", tags=list(tags or ("hosted",)), timeout_s=5, **extra)


def session_for(*specs: SourceConfig, config: Config | None = None, store: Store | None = None,
                router: RouterLike | None = None, routed: bool = False, key: str | None = TEST_KEY) -> Session:
    """A session over ``specs`` (or a whole ``config``) whose every source gets ``key``. ``store``: replies are
    recorded there; ``router``: routes each prompt; ``routed``: the configured :class:`Router` does, on the store's
    figures when there is a store (default: the session's own route, to the default source)."""
    config = config or Config(sources={s.name: s for s in specs})
    if routed:
        router = Router.from_config(config, ledger=StoreLedger(store) if store else None)
    recorder = store.recorder(config) if store else None
    return Session(config, key_lookup=lambda spec: key, recorder=recorder, router=router)


async def session_events(session: Session, prompt: str, options: SendOptions | None = None) -> list[SessionEvent]:
    """Every event ``session.stream`` yields for ``prompt``, in order."""
    async with aclosing(session.stream(prompt, options)) as events:
        return [event async for event in events]


async def until(pilot: Any, condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Let the app run until ``condition()`` holds (bounded, so a hang fails instead of blocking)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.02)


def drawn_and_textuals(widget: Any) -> tuple[list[str], list[str]]:
    """A widget's lines as it draws them, and as Textual draws them from its `render` (for a widget that draws
    its own `render_line`), in escape codes."""
    crop = Region(0, 0, widget.region.width, widget.region.height)
    drawn = [strip.render(widget.app.console) for strip in widget.render_lines(crop)]
    widget._styles_cache.clear()
    widget._render_content()
    widget.render_line = partial(Widget.render_line, widget)
    try:
        return drawn, [strip.render(widget.app.console) for strip in Widget.render_lines(widget, crop)]
    finally:
        del widget.render_line
        widget._styles_cache.clear()
