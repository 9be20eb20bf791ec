"""The chat's model pulls: a model an Ollama source lacks is downloaded in the background, its progress in a line
above the status bar (:class:`~fastchat_tui.ui.widgets.pull_bar.PullBar`), while the chat goes on.

A pull is offered where a model is found missing: a reply that failed because its Ollama source lacks the model
(``not_found``) says which key pulls it (``app.pull_model``), and the source picker pulls the highlighted
configured model its source does not list (``picker.pull``). The same key again cancels the pull. When it is
done the catalog forgets that source's list and the model's ``show`` (:meth:`Catalog.forget`,
:meth:`OllamaAdmin.forget <fastchat_tui.ollama_admin.OllamaAdmin.forget>`), so the picker lists it and the next
request finds it. Progress is worded as ``fastchat models pull`` words it (:class:`~fastchat_tui.ollama_admin.PullMeter`).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from textual.app import App
from textual.worker import Worker

from fastchat_tui.sources.base import ErrorKind, SourceError
from fastchat_tui.ui.key_hints import shown_key
from fastchat_tui.ui.plain import plain

if TYPE_CHECKING:
    from fastchat_tui.catalog import Catalog
    from fastchat_tui.config import Config
    from fastchat_tui.ollama_admin import PullMeter
    from fastchat_tui.session import Session
    from fastchat_tui.turn import Turn
    from fastchat_tui.ui.widgets.pull_bar import PullBar

DRAW_EVERY_S = 0.1
BAR_WIDTH = 16
if TYPE_CHECKING:
    Base = App[None]
else:
    Base = object


class ModelPulls(Base):
    """The app's part that pulls models (a mixin of :class:`~fastchat_tui.ui.app.FastchatApp`)."""

    config: Config
    session: Session
    catalog: Catalog
    pull_bar: PullBar
    _pull: tuple[str, str, Worker[None]] | None = None
    """The pull going on: (source, model, its worker)."""
    _missing: tuple[str, str] | None = None
    """The last model a reply found missing, which ``app.pull_model`` pulls."""

    def offer_pull(self, turn: Turn | None) -> None:
        """After a reply: if it failed because its Ollama source lacks the model, say which key pulls it."""
        error = turn.error if turn is not None else None
        if turn is None or error is None or error.kind is not ErrorKind.NOT_FOUND or not turn.source or not turn.model:
            return
        spec = self.config.sources.get(turn.source)
        if spec is None or spec.kind != "ollama":
            return
        self._missing = (turn.source, turn.model)
        key = shown_key(self, "app.pull_model")
        self.notify(plain(f"{turn.source}: {turn.model} is not installed. {key} pulls it, in the background; the "
                          "chat goes on meanwhile."), title="Model not installed", timeout=15)

    def action_pull_model(self) -> None:
        """The model the last reply lacked, pulled in the background; pressed while a pull runs, cancels it."""
        if self._pull is not None:
            self.cancel_pull()
        elif self._missing is not None:
            self.start_pull(*self._missing)
        else:
            self.notify("No model to pull: a reply that finds its Ollama model missing offers it, and so does the "
                        "source picker (Ctrl+P, Switch source) for a configured model that is not installed.", timeout=8)

    def start_pull(self, source: str, model: str) -> None:
        """Download ``model`` into Ollama source ``source`` in a worker of its own; one pull at a time."""
        if self._pull is not None:
            running, what, _ = self._pull
            self.notify(plain(f"{running}/{what} is being pulled already; {shown_key(self, 'app.pull_model')} cancels "
                              "it."), severity="warning")
            return
        worker = self.run_worker(self._pulling(source, model), group="pull", exit_on_error=False)
        self._pull = (source, model, worker)

    def cancel_pull(self) -> None:
        if self._pull is not None:
            self._pull[2].cancel()

    async def _pulling(self, source: str, model: str) -> None:
        from fastchat_tui.ollama_admin import PullMeter
        from fastchat_tui.sources.ollama import OllamaSource

        bar, meter = self.pull_bar, PullMeter()
        key = shown_key(self, "app.pull_model")
        head = f"⇣ {source}/{model}"
        bar.show(f"{head}  starting…  {key} cancels")
        next_draw = 0.0
        try:
            client = self.session.source(source)
            if not isinstance(client, OllamaSource):
                raise SourceError(ErrorKind.PROTOCOL, f"{source} is not an Ollama source: only Ollama pulls models")
            async for progress in client.admin.pull(model):
                meter.feed(progress)
                now = time.monotonic()
                if now >= next_draw:
                    next_draw = now + DRAW_EVERY_S
                    bar.show(f"{head}  {_bar(meter)}{meter.text()}  {key} cancels")
        except SourceError as error:
            self.notify(plain(error.shown), title=f"Pulling {model} failed", severity="error", timeout=15)
        except asyncio.CancelledError:
            self.notify(plain(f"{source}: the pull of {model} was cancelled; Ollama keeps what it downloaded, and the "
                              "next pull resumes it."), severity="warning", timeout=8)
            raise
        except Exception as exc:  # a worker's error would otherwise pass unseen
            self.notify(plain(f"{source}: the pull of {model} failed: {exc}"), severity="error", timeout=15)
        else:
            self.catalog.forget(source)
            if self._missing == (source, model):
                self._missing = None
            self.notify(plain(f"{source}: {model} is installed; send the prompt again (or pick it with Ctrl+P, "
                              "Switch source)."), title="Model pulled", timeout=10)
        finally:
            self._pull = None
            bar.hide()


def _bar(meter: PullMeter) -> str:
    """``[#####-------]  42% `` while a layer's bytes are counted, else nothing."""
    if not meter.total or not meter.digest:
        return ""
    share = meter.done / meter.total
    filled = round(BAR_WIDTH * share)
    return f"[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {100 * share:3.0f}% "
