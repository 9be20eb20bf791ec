"""Pick two to four sources, or source/model pairs, to send each prompt to at once (compare mode).

The same list as the source picker (:class:`~fastchat_tui.ui.screens.source_picker.ModelList`: each source,
whether it answers, the models it serves, filtered as you type), without ``auto``. Rows are marked with
the number of the column they will fill, in the order they were marked; those numbers are the keys that
keep a column's reply afterwards (``compare.keep_N`` in the keymap).

Keys: type to filter, Up/Down move, Tab (or a click) marks or unmarks the highlighted row, Enter compares the marked
rows (with fewer than two marked, Enter marks the highlighted row instead), Esc closes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

from textual.widgets import OptionList

from fastchat_tui.catalog import Listing
from fastchat_tui.config import Config
from fastchat_tui.sources.base import Probe
from fastchat_tui.ui.chat_log.compare import MAX_COLUMNS
from fastchat_tui.ui.key_hints import bind, shown_key
from fastchat_tui.ui.screens.source_picker import ModelList, Pick

__all__ = ["MIN_COLUMNS", "ComparePicker", "pick_label"]

MIN_COLUMNS = 2


def pick_label(pick: Pick) -> str:
    """``groq`` for a source as configured, ``local · qwen3:8b`` for another of its models (the status bar)."""
    return pick.source if pick.model is None else f"{pick.source} · {pick.model}"


class ComparePicker(ModelList[list[Pick] | None]):
    """A modal list of sources and their models; dismisses with the marked picks (two to four, in column
    order), or ``None``. ``marked``: the picks marked when it opens (the last comparison's)."""

    TITLE_TEXT = f"Compare sources: mark {MIN_COLUMNS} to {MAX_COLUMNS}, each prompt goes to all of them at once"
    CHOOSES = "compares the marked"
    OFFERS_AUTO = False

    BINDINGS = [bind("picker.mark", "mark", "Mark", show=False, priority=True)]

    def __init__(self, config: Config, probes: Mapping[str, Probe], marked: Sequence[Pick] = (), *,
                 cached: Callable[[str], Listing | None], listing: Callable[[str], Awaitable[Listing]]) -> None:
        super().__init__(config, probes, cached=cached, listing=listing)
        self.marked: list[Pick] = [pick for pick in marked if pick.source in config.sources][:MAX_COLUMNS]
        """The picks marked so far, in column order."""

    def marking_hint(self) -> list[str]:
        return [f"{shown_key(self.app, 'picker.mark')} marks"]

    def mark(self, keys: list[str]) -> dict[str, str]:
        return {key: str(self.marked.index(self.picks[key]) + 1) for key in keys if self.picks[key] in self.marked}

    def action_mark(self) -> None:
        if (key := self.highlighted) is not None:
            self._toggle(self.picks[key])

    def _toggle(self, pick: Pick) -> None:
        if pick in self.marked:
            self.marked.remove(pick)
        elif len(self.marked) >= MAX_COLUMNS:
            self.notify(f"{MAX_COLUMNS} at most: unmark one first ({shown_key(self.app, 'picker.mark')} on a marked row).",
                        severity="warning")
            return
        else:
            self.marked.append(pick)
        self._fill()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """A click marks or unmarks its row."""
        if event.option.id is not None:
            self._toggle(self.picks[event.option.id])

    def _choose(self, key: str) -> None:
        """Enter: compare the marked rows, or mark this one while fewer than two are marked."""
        if len(self.marked) >= MIN_COLUMNS:
            self.dismiss(list(self.marked))
            return
        pick = self.picks[key]
        if pick not in self.marked:
            self._toggle(pick)
        if len(self.marked) < MIN_COLUMNS:
            self.notify(f"Mark {MIN_COLUMNS - len(self.marked)} more ({shown_key(self.app, 'picker.mark')}), then "
                        f"{shown_key(self.app, 'picker.choose')} compares.", timeout=4)
