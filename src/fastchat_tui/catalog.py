"""Which models each source serves, asked of every source at once and kept briefly; what a model spec names.

:class:`Catalog` asks each source for its list (:meth:`Source.models
<fastchat_tui.sources.base.Source.models>`) in parallel, each within :data:`LIST_TIMEOUT_S`, and keeps
every answer, failures too, for :data:`~fastchat_tui.sources.base.MODEL_LIST_TTL_S`. Its methods are
coroutines, so a UI asks in a worker and paints first; :meth:`Catalog.cached` never waits.

The cache is in memory only. A list is wanted at most once per command (``fastchat models``, ``ask -m``
with a bare name) or once a minute in the chat, and on disk it would outlive what it describes: a key
set or a model pulled a moment later would go unseen for as long as the file is trusted.

A model spec (``-m``, the picker) is ``SOURCE/MODEL`` or a bare model name (:meth:`Catalog.resolve`).
A configured model that its source does not list is found before the first prompt by
:meth:`Catalog.unlisted` (for ``config check`` and the picker).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from fastchat_tui.config import Config
from fastchat_tui.model_choice import model_is_default, not_served, substitute
from fastchat_tui.sources.base import MODEL_LIST_TTL_S, ErrorKind, Loaded, ModelInfo, Source, SourceError, find_model

__all__ = [
    "LIST_TIMEOUT_S",
    "Catalog",
    "Listing",
    "ModelChoice",
    "ModelSpecError",
    "Unlisted",
    "can_text",
    "loaded_text",
    "model_is_default",
    "resolve_in",
    "size_text",
    "unlisted_in",
]

LIST_TIMEOUT_S = 5.0
"""Longest wait for one source's list (its own bounds are shorter: 3 s for Ollama's, 5 s for a provider's)."""
SHOWN_IDS = 6
"""Models named per source in an error message; the rest are counted."""


@dataclass(frozen=True, slots=True)
class Listing:
    """One source's answer: the models it serves, or why it could not say; ``at`` is when (the catalog's clock)."""

    source: str
    models: tuple[ModelInfo, ...] = ()
    error: SourceError | None = None
    at: float = 0.0

    @property
    def reachable(self) -> bool:
        """An answer came back, even a refusal (a rejected key, no list)."""
        return self.error is None or self.error.kind is not ErrorKind.UNREACHABLE

    @property
    def ids(self) -> list[str]:
        return [model.id for model in self.models]

    def find(self, name: str) -> ModelInfo | None:
        """The listed model ``name`` names (``llama3.2`` finds ``llama3.2:latest``), if any."""
        return find_model(self.models, name)


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """Where a model spec sends a request: ``model`` on ``source``; ``listed``: the source lists it."""

    source: str
    model: str
    listed: bool = True

    @property
    def spec(self) -> str:
        """``source/model``, the spec that names this choice alone."""
        return f"{self.source}/{self.model}"


class ModelSpecError(ValueError):
    """A model spec that names no model, or more than one; the message lists what there is.

    ``candidates``: the ``source/model`` specs an ambiguous name could mean (empty for an unknown one).
    """

    def __init__(self, message: str, candidates: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.candidates = list(candidates)

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class Unlisted:
    """A configured model its source does not list, found before any prompt is sent.

    ``default``: the model came from a preset (the user chose none), so the source uses ``instead`` for chat
    (``None`` when nothing it lists can chat; the message also names a code model it would use for code);
    otherwise the source stays on ``model`` and its requests will fail.
    ``message`` says so, once, for ``config check``, the picker and ``fastchat models``.
    """

    source: str
    model: str
    default: bool
    instead: str | None
    message: str


class Catalog:
    """Every configured source's models, asked in parallel and kept for ``ttl_s``.

    ``source(name)`` gives the source's warm client (``Session.source``: keys and their rules applied).
    One request per source is in flight at a time: callers that ask meanwhile share its answer.
    """

    def __init__(self, config: Config, source: Callable[[str], Source], *, ttl_s: float = MODEL_LIST_TTL_S,
                 timeout_s: float = LIST_TIMEOUT_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.source = source
        self.ttl_s, self.timeout_s, self.clock = ttl_s, timeout_s, clock
        self._listings: dict[str, Listing] = {}
        self._asking: dict[str, asyncio.Future[Listing]] = {}

    def cached(self, name: str) -> Listing | None:
        """The last answer from ``name`` however old (``None`` before the first), without waiting: for a first paint."""
        return self._listings.get(name)

    def forget(self, name: str | None = None) -> None:
        """Drop what ``name`` (or every source) said, e.g. after its key changed; the next call asks again."""
        if name is None:
            self._listings.clear()
        else:
            self._listings.pop(name, None)

    async def listing(self, name: str, *, fresh: bool = False) -> Listing:
        """``name``'s models: the kept answer if younger than ``ttl_s`` (unless ``fresh``), else a new one. Never raises."""
        kept = self._listings.get(name)
        if kept is not None and not fresh and self.clock() - kept.at < self.ttl_s:
            return kept
        asking = self._asking.get(name)
        if asking is None:
            asking = self._asking[name] = asyncio.ensure_future(self._ask(name))
            asking.add_done_callback(lambda _: self._asking.pop(name, None))
        return await asyncio.shield(asking)  # one caller cancelled leaves the request to the others

    async def listings(self, names: Iterable[str] | None = None, *, fresh: bool = False) -> dict[str, Listing]:
        """:meth:`listing` for ``names`` (default: every configured source), all at once, in config order."""
        wanted = list(self.config.sources if names is None else names)
        found = await asyncio.gather(*(self.listing(name, fresh=fresh) for name in wanted))
        return dict(zip(wanted, found))

    async def _ask(self, name: str) -> Listing:
        source = self.source(name)
        try:
            async with asyncio.timeout(self.timeout_s):
                models = await source.models()
            listing = Listing(name, tuple(models), at=self.clock())
        except SourceError as error:
            listing = Listing(name, error=error, at=self.clock())
        except TimeoutError:
            listing = Listing(name, error=SourceError(
                ErrorKind.UNREACHABLE, f"{name}: no model list within {self.timeout_s:g} s", source=name), at=self.clock())
        except Exception as exc:  # a listing never raises: one source's fault must not hide the others' answers
            listing = Listing(name, error=SourceError(
                ErrorKind.PROTOCOL, f"{name}: listing its models failed: {exc}", source=name), at=self.clock())
        self._listings[name] = listing
        return listing

    async def resolve(self, spec: str) -> ModelChoice:
        """The source and model ``spec`` names (:func:`resolve_in`), asking only the sources it needs."""
        head, slash, _ = spec.partition("/")
        names = [head] if slash and head in self.config.sources else None
        return resolve_in(self.config, await self.listings(names), spec)

    async def unlisted(self, names: Iterable[str] | None = None) -> list[Unlisted]:
        """The configured models of ``names`` (default: all) that their sources do not list (:func:`unlisted_in`)."""
        return unlisted_in(self.config, await self.listings(names))


def size_text(size: int | None) -> str:
    """A model's size as Ollama shows it (decimal units): ``2.0 GB``, ``274 MB``; ``-`` when unknown."""
    if size is None:
        return "-"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            value = size / scale
            return f"{value:.1f} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{size} B"


SHOWN_CAPABILITIES = ("tools", "thinking", "vision", "embedding", "insert")
"""What a model can do that is worth a column (``completion`` is what they all do)."""


def can_text(capabilities: tuple[str, ...]) -> str:
    """``tools, thinking`` for the capabilities that tell models apart; ``-`` for none said."""
    found = [c for c in SHOWN_CAPABILITIES if c in capabilities]
    return ", ".join(found) or "-"


def loaded_text(loaded: Loaded | None, now: datetime | None = None) -> str:
    """``6.0 GB 81% GPU 8,192 ctx until 14:05``: its memory, the share on a GPU, the window it runs with (the
    ``num_ctx`` it was loaded with, which limits a request, where the trained CONTEXT is the most it could take)
    and when it unloads; ``-`` for a model not in memory."""
    if loaded is None:
        return "-"
    parts = [size_text(loaded.size_bytes)]
    if loaded.size_bytes and loaded.vram_bytes:
        parts.append(f"{round(100 * loaded.vram_bytes / loaded.size_bytes)}% GPU")
    if loaded.context_tokens:
        parts.append(f"{loaded.context_tokens:,} ctx")
    if loaded.expires_at is not None:
        now = now or datetime.now(UTC)
        until = loaded.expires_at.astimezone()
        if (loaded.expires_at - now).days > 365:
            parts.append("until stopped")  # keep_alive -1
        else:
            parts.append(f"until {until:%H:%M}" if (loaded.expires_at - now).days < 1 else f"until {until:%Y-%m-%d %H:%M}")
    return " ".join(parts)


def resolve_in(config: Config, listings: Mapping[str, Listing], spec: str) -> ModelChoice:
    """What ``spec`` names, by these listings. Raises :class:`ModelSpecError`.

    - ``SOURCE/MODEL``, where ``SOURCE`` is a configured source: that model there, as given (``listed`` says
      whether the source lists it; a provider may serve more than it lists). The source's name wins, so
      OpenRouter's ``openai/gpt-4.1-mini`` needs ``openrouter/openai/gpt-4.1-mini`` beside a source ``openai``.
    - a bare name: the one source that lists it (``llama3.2`` finds ``llama3.2:latest``). Served by several, it
      is ambiguous and the error lists them; served by none, the error lists what each source serves.
    """
    spec = spec.strip()
    head, slash, rest = spec.partition("/")
    if slash and head in config.sources:
        if not rest:
            raise ModelSpecError(f"'{spec}' names the source {head} but no model: write {head}/MODEL "
                                 f"(`fastchat models -s {head}` lists them)")
        found = listings[head].find(rest) if head in listings else None
        return ModelChoice(head, found.id if found else rest, listed=found is not None)
    if not spec:
        raise ModelSpecError("no model given: write MODEL or SOURCE/MODEL (`fastchat models` lists them)")
    choices = [ModelChoice(name, found.id) for name, listing in listings.items() if (found := listing.find(spec))]
    if len(choices) == 1:
        return choices[0]
    if choices:
        specs = [choice.spec for choice in choices]
        raise ModelSpecError(f"'{spec}' is served by more than one source: {', '.join(specs)}; say which with "
                             "SOURCE/MODEL", specs)
    served = "; ".join(_serves(listing) for listing in listings.values()) or "no source is configured"
    raise ModelSpecError(f"no source serves '{spec}' ({served}). Pick one of those, or write SOURCE/MODEL to send "
                         "it to a source anyway")


def _serves(listing: Listing) -> str:
    """``local serves llama3.2:latest, qwen2.5:7b`` or ``fast could not say (unreachable: …)``."""
    if listing.error is not None:
        return f"{listing.source} could not say: {listing.error.shown}"
    return f"{listing.source} serves {_named(listing)}" if listing.models else f"{listing.source} serves no models"


def _named(listing: Listing) -> str:
    """The first :data:`SHOWN_IDS` model ids, and how many there are in all when there are more."""
    ids = listing.ids
    more = f", … ({len(ids)} in all: `fastchat models -s {listing.source}`)" if len(ids) > SHOWN_IDS else ""
    return ", ".join(ids[:SHOWN_IDS]) + more


def unlisted_in(config: Config, listings: Mapping[str, Listing]) -> list[Unlisted]:
    """The configured models that these listings lack, in config order. A source whose list failed is not
    flagged here: its listing's ``error`` says why it could not answer."""
    found: list[Unlisted] = []
    for name, listing in listings.items():
        spec = config.sources.get(name)
        if spec is None or listing.error is not None or listing.find(spec.model) is not None:
            continue
        missing = not_served(spec.kind, spec.model)
        if model_is_default(spec):
            instead = substitute(listing.models, spec.model, "chat")
            for_code = substitute(listing.models, spec.model, "completion")
            also = f", and {for_code} for code" if for_code != instead else ""
            message = (f"{name}: {missing}; it uses {instead} instead{also} (set model for [sources.{name}] to "
                       "choose one)" if instead else f"{name}: {missing}, and nothing it lists can chat")
            found.append(Unlisted(name, spec.model, True, instead, message))
            continue
        fix = f"download it with `fastchat models pull {spec.model}`" if spec.kind == "ollama" else "check its name"
        serves = f"it serves {_named(listing)}" if listing.models else "it serves none"
        message = (f"{name}: {missing} at {spec.base_url}, so its requests will fail; {fix}, or set model for "
                   f"[sources.{name}] to one it serves ({serves})")
        found.append(Unlisted(name, spec.model, False, None, message))
    return found
