"""Pick what the chat talks to: auto, a source as configured, or any model a source lists.

Each source shows whether it answers, then the models it serves, from the catalog: what it last said
at once (nothing waits for a model list), asked again in the background where that answer is older
than the catalog keeps it, with a marker while the question is out. The configured model is marked;
one its source does not list is flagged with the catalog's words (:class:`~fastchat_tui.catalog.Unlisted`),
so a prompt that would fail is seen before it is sent.

Keys: type to filter (every word must appear in ``source/model``), Up/Down move, Enter chooses, Esc closes
(the ``picker.*`` ids of the keymap; the filter's placeholder names the keys the keymap gives them).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from rich.console import Group
from rich.padding import Padding
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from fastchat_tui.catalog import Listing, Unlisted, can_text, loaded_text, size_text, unlisted_in
from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.sources.base import ModelInfo, Probe
from fastchat_tui.ui.key_hints import bind, shown_key

NAME_WIDTH = 12
MODEL_WIDTH = 30
ResultT = TypeVar("ResultT")


@dataclass(frozen=True, slots=True)
class Pick:
    """What was chosen: ``source`` (``"auto"`` routes each prompt), and a ``model`` it lists, or ``None`` for
    the source's configured one."""

    source: str
    model: str | None = None
    pull: bool = False
    """Pull ``model`` into ``source`` (an Ollama source that lacks it) rather than switch to it."""


CURRENT = "●"
"""The mark of the chat's choice now, in the source picker."""


def _mark(mark: str) -> Text:
    """The first column of a row: its ``mark`` (the picker's own: :data:`CURRENT`, a column number), or blank."""
    return Text(f"{mark:<1} ", style="bold")


def source_label(name: str, spec: SourceConfig | None, probe: Probe | None, listing: Listing | None = None,
                 asking: bool = False, mark: str = "") -> Text:
    """``  local        ollama · ● reachable · 3 models`` for a source's row (``auto`` when ``spec`` is ``None``).

    Whether it answers comes from its model list, else from the start-up probe; ``asking``: a list is on its way."""
    text = _mark(mark).append(f"{name:<{NAME_WIDTH}} ", style="bold")
    if spec is None:
        return text.append("route each prompt to the best source")
    text.append(f"{spec.kind} · ", style="dim")
    error = listing.error if listing is not None else probe.error if probe is not None else None
    reachable = listing.reachable if listing is not None else probe.reachable if probe is not None else None
    if reachable is None:
        text.append("○ checking…", style="dim")
    elif not reachable:
        text.append(f"✗ {error.label if error else 'unreachable'}", style="red")
    else:
        text.append("● reachable", style="green")
        if listing is not None and listing.error is not None:
            text.append(f" · no model list ({listing.error.label})", style="yellow")
        elif listing is not None:
            count = len(listing.models)
            text.append(f" · {count} model{'s' if count != 1 else ''}", style="dim")
    if asking:
        text.append(" · listing models…" if listing is None else " · ↻", style="dim italic")
    return text


def model_label(model: ModelInfo, configured: bool, mark: str = "") -> Text:
    """``      llama3.2:latest   configured · 2.0 GB · Q4_K_M · 131,072 ctx``: one listed model."""
    text = _mark(mark).append(f"    {model.id:<{MODEL_WIDTH}} ", style="bold" if mark else "")
    details = ["configured"] if configured else []
    if model.size_bytes is not None:
        details.append(size_text(model.size_bytes))
    if model.quantisation:
        details.append(model.quantisation)
    if model.context_tokens:
        details.append(f"{model.context_tokens:,} ctx")
    if (can := can_text(model.capabilities)) != "-":
        details.append(can)
    text.append(" · ".join(details), style="dim")
    if model.loaded is not None:
        text.append(f" · loaded {loaded_text(model.loaded)}", style="green")
    return text


def unlisted_label(flag: Unlisted, mark: str = "", pull_key: str | None = None) -> Group:
    """The configured model its source does not list, and below it what the catalog says about that
    (yellow: the source uses another model instead; red: its requests will fail); ``pull_key``: the key that
    pulls it, for an Ollama source."""
    style = "yellow" if flag.default else "red"
    head = _mark(mark).append("  ! ", style=f"bold {style}").append(f"{flag.model:<{MODEL_WIDTH}} ")
    head.append("configured · not listed", style=style)
    if pull_key:
        head.append(f" · {pull_key} pulls it", style="bold")
    return Group(head, Padding(Text(flag.message, style=style), (0, 0, 0, 6)))


def unlisted(config: Config, listing: Listing | None) -> Unlisted | None:
    """The catalog's flag for the configured model of ``listing``'s source, when that list lacks it."""
    found = unlisted_in(config, {listing.source: listing}) if listing is not None else []
    return found[0] if found else None


def matches(words: list[str], *names: str) -> bool:
    """Every word of the filter appears in one of ``names`` (case is ignored)."""
    haystack = " ".join(names).lower()
    return all(word in haystack for word in words)


class ModelList(ModalScreen[ResultT]):
    """A modal list of sources and their models, filtered as the user types: what :class:`SourcePicker` and
    the compare picker share. Subclasses say what choosing a row does (:meth:`_choose`) and how rows are
    marked (:meth:`mark`).

    ``cached(name)`` is what the catalog last heard from ``name`` (it never waits); ``listing(name)`` asks
    again where that is stale, in the background.
    """

    TITLE_TEXT = ""
    CHOOSES = "chooses"
    """What the hint says ``picker.choose`` does here."""
    OFFERS_AUTO = True
    """Whether the list starts with ``auto`` (route each prompt)."""

    BINDINGS = [
        bind("picker.close", "dismiss_none", "Close"),
        bind("picker.choose", "choose", show=False, priority=True),
        bind("picker.down", "move(1)", show=False),
        bind("picker.up", "move(-1)", show=False),
        bind("picker.page_down", "move(10)", show=False),
        bind("picker.page_up", "move(-10)", show=False),
    ]

    DEFAULT_CSS = """
    ModelList {
        align: center middle;
    }
    ModelList > Vertical {
        width: 100;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    ModelList OptionList {
        height: auto;
        max-height: 24;
    }
    """

    def __init__(self, config: Config, probes: Mapping[str, Probe], *,
                 cached: Callable[[str], Listing | None], listing: Callable[[str], Awaitable[Listing]]) -> None:
        super().__init__()
        self.config, self.probes = config, probes
        self.cached, self.listing = cached, listing
        self.asking: set[str] = set(config.sources)
        """The sources whose lists are being asked for."""
        self.picks: dict[str, Pick] = {}
        """What each row (by its id) chooses."""
        self.first: str | None = None
        """The first row that matches the filter by its own name (highlighted as the filter changes)."""
        self.pullable: dict[str, Pick] = {}
        """The rows of configured Ollama models that are not installed, and the pull each one offers."""

    @property
    def pull_key(self) -> str | None:
        """The key that pulls a row's model, where this list offers it (:class:`SourcePicker`)."""
        return None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.TITLE_TEXT, id="title")
            yield Input(placeholder=self.hint(), id="filter")
            yield OptionList(id="choices")

    def on_mount(self) -> None:
        self._fill()
        self.query_one(Input).focus()
        for name in self.asking:
            self.run_worker(self._ask(name), group="listing")

    async def _ask(self, name: str) -> None:
        try:
            await self.listing(name)
        finally:
            self.asking.discard(name)
            if self.is_attached:
                self._fill()

    def mark(self, keys: list[str]) -> dict[str, str]:
        """Each row's mark (by id), for the rows ``keys`` now shown; a row left out has none."""
        return {}

    def initial(self) -> str | None:
        """The row highlighted first, when it shows."""
        return None

    def options(self, query: str) -> list[Option]:
        """The rows that match ``query``: auto, then each source followed by its models. Each row's id is
        its own; the configured model's row chooses the source as configured (``Pick(name)``), as the source's
        row does. :attr:`first` becomes the first row that matches by its own name (a model, not its source)."""
        words = query.lower().split()
        self.picks, self.first, self.pullable = {}, None, {}
        rows: list[tuple[str, Callable[..., Text | Group]]] = []

        def add(key: str, pick: Pick, label: Callable[..., Text | Group], *names: str) -> None:
            self.picks[key] = pick
            rows.append((key, label))
            if self.first is None and matches(words, *names):
                self.first = key

        if self.OFFERS_AUTO and matches(words, "auto"):
            add("auto", Pick("auto"), partial(source_label, "auto", None, None), "auto")
        for name, spec in self.config.sources.items():
            listing = self.cached(name)
            flag = unlisted(self.config, listing)
            configured = listing.find(spec.model) if listing is not None else None
            models = [model for model in listing.models if matches(words, f"{name}/{model.id}")] if listing else []
            show_flag = flag is not None and matches(words, f"{name}/{flag.model}")
            if not (models or show_flag or matches(words, name)):
                continue
            add(name, Pick(name), partial(source_label, name, spec, self.probes.get(name), listing,
                                          name in self.asking), name)
            if show_flag and flag is not None:
                pull_key = self.pull_key if spec.kind == "ollama" else None
                add(f"{name}/{flag.model}", Pick(name), partial(unlisted_label, flag, pull_key=pull_key),
                    f"{name}/{flag.model}")
                if pull_key:
                    self.pullable[f"{name}/{flag.model}"] = Pick(name, flag.model, pull=True)
            for model in models:
                add(f"{name}/{model.id}", Pick(name) if model is configured else Pick(name, model.id),
                    partial(model_label, model, model is configured), f"{name}/{model.id}")
        marks = self.mark([key for key, _ in rows])
        return [Option(label(mark=marks.get(key, "")), id=key) for key, label in rows]

    def _fill(self, *, best: bool = False) -> None:
        """Rebuild the rows for the filter's text. Highlighted: with ``best`` (the filter changed) the first row
        that matches by its own name, else the row highlighted before where it still shows, else :meth:`initial`."""
        option_list = self.query_one(OptionList)
        before = option_list.highlighted_option
        option_list.set_options(self.options(self.query_one(Input).value))
        ids = [option.id for option in option_list.options]
        target = self.first if best else before.id if before is not None else self.initial()
        option_list.highlighted = ids.index(target) if target in ids else (0 if ids else None)

    @property
    def highlighted(self) -> str | None:
        """The id of the highlighted row, if any."""
        option = self.query_one(OptionList).highlighted_option
        return option.id if option is not None else None

    @on(Input.Changed, "#filter")
    def _filtered(self) -> None:
        self._fill(best=True)

    def hint(self) -> str:
        """The filter's placeholder: the keys of the list as the app's keymap has them
        (``type to filter · ↑↓ move · Enter chooses · Esc closes``)."""
        return " · ".join(["type to filter", f"{shown_key(self.app, 'picker.up')}{shown_key(self.app, 'picker.down')} move",
                           *self.marking_hint(), f"{shown_key(self.app, 'picker.choose')} {self.CHOOSES}",
                           f"{shown_key(self.app, 'picker.close')} closes"])

    def marking_hint(self) -> list[str]:
        """The hint's words for the key that marks rows, where rows are marked by key."""
        return []

    def action_choose(self) -> None:
        """Enter, in the filter or on the list: choose the highlighted row."""
        if (row := self.highlighted) is not None:
            self._choose(row)

    def action_move(self, rows: int) -> None:
        option_list = self.query_one(OptionList)
        if option_list.option_count:
            now = option_list.highlighted if option_list.highlighted is not None else 0
            option_list.highlighted = max(0, min(option_list.option_count - 1, now + rows))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self._choose(event.option.id)

    def _choose(self, key: str) -> None:
        raise NotImplementedError

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class SourcePicker(ModelList[Pick | None]):
    """A modal list of sources and their models; dismisses with a :class:`Pick`, or ``None``.

    ``current`` is the chat's choice now, marked ``●`` and highlighted first. ``picker.pull`` on the row of a
    configured Ollama model that is not installed dismisses with that model to pull (``Pick.pull``).
    """

    TITLE_TEXT = "Switch source or model"
    BINDINGS = [bind("picker.pull", "pull", show=False)]

    @property
    def pull_key(self) -> str | None:
        return shown_key(self.app, "picker.pull")

    def marking_hint(self) -> list[str]:
        return [f"{shown_key(self.app, 'picker.pull')} pulls a missing model"]

    def action_pull(self) -> None:
        """Pull the highlighted configured model its Ollama source lacks; elsewhere, say what can be pulled."""
        row = self.highlighted
        if row is not None and row in self.pullable:
            self.dismiss(self.pullable[row])
        else:
            self.notify("Only a configured Ollama model that is not installed (a row marked !) is pulled here; "
                        "`fastchat models pull NAME` pulls any other.", timeout=6)

    def __init__(self, config: Config, probes: Mapping[str, Probe], current: Pick, *,
                 cached: Callable[[str], Listing | None], listing: Callable[[str], Awaitable[Listing]]) -> None:
        super().__init__(config, probes, cached=cached, listing=listing)
        self.current = current
        self.marked: str | None = None
        """The row marked as the chat's choice now."""

    def mark(self, keys: list[str]) -> dict[str, str]:
        chosen = [key for key in keys if self.picks[key] == self.current]
        self.marked = chosen[-1] if chosen else None  # the most precise row: the model's, after its source's
        return {self.marked: CURRENT} if self.marked is not None else {}

    def initial(self) -> str | None:
        return self.marked

    def _choose(self, key: str) -> None:
        self.dismiss(self.picks.get(key))
