"""Pick the active source: auto, or one configured source with its model and reachability."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from fastchat_tui.config import SourceConfig
from fastchat_tui.sources.base import Probe


def source_label(name: str, spec: SourceConfig | None, probe: Probe | None) -> Text:
    """``name  model  ● reachable`` for one row of the picker."""
    text = Text(f"{name:<12}", style="bold")
    if spec is None:
        text.append("route each prompt to the best source")
        return text
    text.append(f"{spec.model:<28} ", style="")
    if probe is None:
        text.append("○ checking…", style="dim")
    elif probe.reachable:
        text.append("● reachable", style="green")
    else:
        reason = probe.error.kind if probe.error else "unreachable"
        text.append(f"✗ {reason}", style="red")
    return text


class SourcePicker(ModalScreen[str | None]):
    """A modal list of sources; dismisses with the chosen name, or ``None``."""

    BINDINGS = [Binding("escape", "dismiss_none", "Close")]

    DEFAULT_CSS = """
    SourcePicker {
        align: center middle;
    }
    SourcePicker > Vertical {
        width: 80;
        height: auto;
        max-height: 80%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    SourcePicker OptionList {
        height: auto;
        max-height: 20;
    }
    """

    def __init__(self, sources: dict[str, SourceConfig], probes: dict[str, Probe], selected: str) -> None:
        super().__init__()
        self.sources, self.probes, self.selected = sources, probes, selected

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Switch source")
            options = [Option(source_label("auto", None, None), id="auto")]
            options += [Option(source_label(name, spec, self.probes.get(name)), id=name) for name, spec in self.sources.items()]
            yield OptionList(*options)

    def on_mount(self) -> None:
        option_list = self.query_one(OptionList)
        names = ["auto", *self.sources]
        option_list.highlighted = names.index(self.selected) if self.selected in names else 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
