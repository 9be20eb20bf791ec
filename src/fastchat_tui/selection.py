"""Where a chat's prompts go: the selected source, the model chosen there, and ``-m`` until it is found.

The chat's status bar and every prompt read the same choice from here, so a prompt sent while ``-m`` is
still being looked up in the sources' model lists waits for it (:attr:`Selection.found`), and a choice made
by hand meanwhile wins over it. What a source said about its model (it serves another one in place of its
default, :class:`~fastchat_tui.sources.base.ModelChosen`) is remembered here too, for the status bar.
"""

from __future__ import annotations

import asyncio

from fastchat_tui.catalog import Catalog, ModelSpecError, Unlisted, unlisted_in
from fastchat_tui.keymap import key_label
from fastchat_tui.session import Session
from fastchat_tui.sources.base import ModelChosen
from fastchat_tui.turn import ENDED_NORMALLY, Turn


class Selection:
    """The chat's source (kept by the session as ``session.selected``) and model; ``-m`` resolved in ``catalog``."""

    def __init__(self, session: Session, catalog: Catalog, spec: str | None = None) -> None:
        """``spec``: ``-m`` (``SOURCE/MODEL`` or a model name one source lists), found by :meth:`find`."""
        self.session, self.catalog, self.spec = session, catalog, spec
        self.model: str | None = None
        """The model chosen for the selected source (the picker, ``-m``), sent with each prompt there;
        ``None``: the source's configured one."""
        self.found = asyncio.Event()
        """Set once ``-m`` is resolved, or needs no resolving, or the user chose meanwhile: prompts wait for it."""
        if spec is None:
            self.found.set()
        self.chosen: dict[str, ModelChosen] = {}
        """The model each source last used in place of its default one (it does not serve that), by source."""
        self.answered: set[tuple[str, str]] = set()
        """The models that have answered, by source: a model list that left one out does not make it a warning."""

    def select(self, source: str, model: str | None = None) -> None:
        """Send the following prompts to ``source`` (``"auto"``: route each), to ``model`` there if given."""
        self.session.selected = source
        self.model = model if source != "auto" else None
        self.found.set()

    async def find(self) -> tuple[str, str] | None:
        """Resolve ``-m`` and select it. Returns what to tell the user, with its severity (``"error"``: not
        found, prompts go to the selection as it is; ``"warning"``: found but not listed), else ``None``."""
        spec = self.spec
        assert spec is not None
        try:
            choice = await self.catalog.resolve(spec)
        except ModelSpecError as exc:
            if self.found.is_set():
                return None
            self.found.set()
            return (f"-m {spec}: {exc}. Prompts go to {self.label()} until you pick a model "
                    f"({key_label('app.command_palette', self.session.config.keys)}, Switch source)", "error")
        if self.found.is_set():  # the user chose something else meanwhile
            return None
        self.select(choice.source, choice.model)
        listing = self.catalog.cached(choice.source)
        if not choice.listed and listing is not None and listing.error is None:
            return (f"-m {spec}: {choice.source} does not list {choice.model}; prompts go there anyway "
                    f"(`fastchat models -s {choice.source}` lists what it serves)", "warning")
        return None

    def label(self) -> str:
        """``local · llama3.2:latest``: the selected source and the model its prompts go to."""
        selected = self.session.selected
        if not self.found.is_set():
            return f"-m {self.spec}"
        if selected == "auto":
            return "auto"
        return f"{selected} · {self.model or self.source_model(selected)}"

    def _unlisted(self, name: str) -> Unlisted | None:
        """``name``'s configured model, if its model list leaves it out and it has not answered since."""
        listing = self.catalog.cached(name)
        found = unlisted_in(self.session.config, {name: listing}) if listing is not None else []
        return found[0] if found and (found[0].source, found[0].model) not in self.answered else None

    def source_model(self, name: str) -> str:
        """The model ``name`` uses when none is chosen: the configured one, or the one it uses instead because
        it does not serve that (said by its last reply, else foreseen from its model list)."""
        if name in self.chosen:
            return self.chosen[name].model
        flag = self._unlisted(name)
        if flag is not None and flag.default and flag.instead:
            return flag.instead
        return self.session.config.sources[name].model

    def note(self, last: Turn | None) -> tuple[str, bool]:
        """Why the model shown is not the configured one, or that the configured one is missing (``True``: its
        requests will fail), for the selected source (in auto, the source of ``last``, the last reply)."""
        if not self.found.is_set():
            return "finding the source that serves it…", False
        if self.model is not None:
            return "", False
        name = self.session.selected
        if name == "auto":
            name = last.source if last is not None and last.source else ""
        if name in self.chosen:
            return self.chosen[name].note, False
        flag = self._unlisted(name) if name else None
        return (flag.message, not flag.default) if flag is not None else ("", False)

    def ended(self, turn: Turn) -> bool:
        """``turn`` ended: a source that answered with its default model serves it now, and a model that
        answered is no longer flagged as missing from its source's list. Whether that changed the model shown or
        its note."""
        if turn.status in ENDED_NORMALLY and turn.source and turn.model:
            flagged = self._unlisted(turn.source)
            self.answered.add((turn.source, turn.model))
            if flagged is not None and flagged.model == turn.model:
                return True
        chosen = self.chosen.get(turn.source or "")
        if chosen is not None and turn.status in ENDED_NORMALLY and turn.options.model is None \
                and turn.model != chosen.model:
            del self.chosen[chosen.source]
            return True
        return False
