"""The one registry of source kinds: the built-in ``openai``, ``ollama`` and ``embedded``, and those that
installed packages add through the entry point group ``fastchat_tui.sources``.

Every kind is named as an entry point is, ``module:attribute``, and that is imported only when a source of
the kind is made, so the config can check a kind without importing any protocol's SDK (and without this
module importing the source modules, which import the config). A plugin's entry point is named by its kind
and points at a factory, ``make(config, api_key) -> Source`` (usually the source's class: see
:mod:`fastchat_tui.sources.base` for what a source implements and the config it gets).

Entry points are read the first time a kind that is not built in is asked for (a config that uses only
built-in kinds never reads them), and each plugin is imported once, when its kind is first needed. A plugin
that fails to import, that is not callable, that names a built-in kind or whose kind two distributions
claim is no kind: :func:`problems` says why, naming the plugin and its distribution, and the others go on.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from importlib.metadata import EntryPoint

GROUP = "fastchat_tui.sources"
"""The entry point group a package adds a source kind to."""


class KindError(ValueError):
    """A kind no built-in and no installed plugin provides, or a plugin that failed to load or to make a source."""


@dataclass(slots=True)
class Kind:
    """A kind of source: its name, the factory that makes one (``module:attribute``) and where it comes from."""

    name: str
    target: str
    origin: str = "built-in"
    """``built-in``, or the distribution that provides the plugin (``fastchat-echo 0.1``)."""
    takes_key: bool = True
    """Whether the key found for a source of this kind (keyring or ``api_key_env``) is passed to the factory
    (``factory(config, api_key)``; ``factory(config)`` otherwise). Every plugin's is (``None`` when there is none)."""
    entry: EntryPoint | None = field(default=None, repr=False)
    factory: Callable[..., Any] | None = field(default=None, repr=False)
    problem: str | None = None

    @property
    def label(self) -> str:
        """``plugin 'echo' (fastchat_echo:EchoSource) of fastchat-echo 0.1``."""
        return f"plugin '{self.name}' ({self.target}) of {self.origin}"

    @property
    def built_in(self) -> bool:
        return self.entry is None


BUILT_IN: dict[str, Kind] = {kind.name: kind for kind in (
    Kind("openai", "fastchat_tui.sources.openai_compat:OpenAISource"),
    Kind("ollama", "fastchat_tui.sources.ollama:OllamaSource", takes_key=False),
    Kind("embedded", "fastchat_tui.sources.embedded:EmbeddedSource", takes_key=False),
)}
"""The kinds fastchat ships."""


@functools.cache
def _plugins() -> dict[str, Kind]:
    """The installed plugins by kind (in the order of their names), read from the entry points once; none is
    imported here."""
    import importlib.metadata  # here: reading the installed distributions costs tens of ms, so only when needed

    found: dict[str, Kind] = {}
    for entry in importlib.metadata.entry_points(group=GROUP):
        dist = entry.dist
        plugin = Kind(entry.name, entry.value, f"{dist.name} {dist.version}" if dist else "an unknown distribution",
                      entry=entry)
        if entry.name in BUILT_IN:
            plugin.problem = f"{plugin.label} names the built-in kind '{entry.name}', so it is ignored"
        if entry.name in found:
            if found[entry.name].origin != plugin.origin:
                found[entry.name].problem = (f"plugin kind '{entry.name}' is provided by {found[entry.name].origin} "
                                             f"and by {plugin.origin}; uninstall all but one to use it")
            continue
        found[entry.name] = plugin
    return dict(sorted(found.items()))


def _load(kind: Kind) -> None:
    """Import ``kind``'s factory once; for a plugin, what went wrong is kept as its problem, in words that name it."""
    if kind.factory is not None or kind.problem is not None:
        return
    if kind.entry is None:  # built in: a failure here is fastchat's own bug, raised as it is
        module, _, attribute = kind.target.partition(":")
        kind.factory = getattr(importlib.import_module(module), attribute)
        return
    try:
        factory = kind.entry.load()
    except Exception as error:  # a plugin's import can raise anything: it is reported, not fatal
        kind.problem = f"{kind.label} failed to load: {type(error).__name__}: {error}"
        return
    if not callable(factory):
        kind.problem = (f"{kind.label} is a {type(factory).__name__}, not a factory: it must name a callable "
                        "make(config, api_key) -> Source, such as the source's class")
        return
    kind.factory = factory


def kind(name: str) -> Kind:
    """The kind ``name``, a plugin's loaded; raises :class:`KindError` saying what to do when there is none or its
    plugin is broken. A built-in kind is not imported here (:func:`factory` does)."""
    if name in BUILT_IN:
        return BUILT_IN[name]
    plugin = _plugins().get(name)
    if plugin is None:
        import difflib

        close = difflib.get_close_matches(name, [*BUILT_IN, *_plugins()], n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise KindError(f"unknown kind '{name}' ({hint}built-in: {', '.join(BUILT_IN)}; "
                        f"plugins: {', '.join(_plugins()) or 'none installed'})")
    _load(plugin)
    if plugin.problem is not None:
        raise KindError(plugin.problem)
    return plugin


def factory(found: Kind) -> Callable[..., Any]:
    """What makes a source of ``found``, imported on first use."""
    _load(found)
    if found.factory is None:
        raise KindError(str(found.problem))
    return found.factory


def takes_key(name: str) -> bool:
    """Whether a source of kind ``name`` is given a key (so the rules of where a key may go apply to it)."""
    return BUILT_IN[name].takes_key if name in BUILT_IN else True


def installed() -> list[Kind]:
    """Every installed plugin, each imported now: those with a :attr:`~Kind.problem` are not kinds."""
    for plugin in _plugins().values():
        _load(plugin)
    return list(_plugins().values())


def problems() -> list[str]:
    """Why each installed plugin that is no kind is not, after importing every plugin."""
    return [plugin.problem for plugin in installed() if plugin.problem is not None]
