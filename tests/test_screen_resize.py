"""A screen just shown is not laid out a second time, nor the screens under it (``fastchat_tui.ui.screen_resize``)."""

from __future__ import annotations

from collections import Counter

import pytest
from textual.app import App, ComposeResult
from textual.screen import ModalScreen, Screen
from textual.widgets import Label

import fastchat_tui.ui  # noqa: F401  (installs the wrapper)
from fastchat_tui.ui import screen_resize


class Modal(ModalScreen[None]):
    def compose(self) -> ComposeResult:
        yield Label("over the chat")


class TextualsOwn(Modal):
    """A modal whose Resize goes to Textual's handler, as without the wrapper."""

    _on_resize = screen_resize._on_resize


class Under(App[None]):
    def compose(self) -> ComposeResult:
        for n in range(20):
            yield Label(f"line {n}")


@pytest.fixture
def layouts(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Layouts per screen kind ("modal", "background"), counted from when the test clears it."""
    counts: Counter[str] = Counter()
    original = Screen._refresh_layout

    def counted(self: Screen, *args: object, **kwargs: object) -> None:
        counts["modal" if isinstance(self, ModalScreen) else "background"] += 1
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Screen, "_refresh_layout", counted)
    return counts


async def _push(modal: ModalScreen[None], layouts: Counter[str]) -> Counter[str]:
    app = Under()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        layouts.clear()
        await app.push_screen(modal)
        await pilot.pause()
        await pilot.pause()
        assert modal.outer_size == (80, 24)
        return Counter(layouts)


async def test_textual_still_lays_a_shown_screen_out_again_for_its_own_resize(layouts: Counter[str]) -> None:
    # When this fails, Textual no longer does it: remove `screen_resize` and this test.
    counts = await _push(TextualsOwn(), layouts)
    assert counts["background"] >= 1
    assert counts["modal"] >= 2


async def test_a_shown_modal_lays_out_once_and_leaves_the_screen_under_it_alone(layouts: Counter[str]) -> None:
    textuals = await _push(TextualsOwn(), layouts)
    counts = await _push(Modal(), layouts)
    assert counts["background"] == 0
    assert counts["modal"] == textuals["modal"] - 1


async def test_a_terminal_resize_still_lays_out_the_modal_and_the_screen_under_it(layouts: Counter[str]) -> None:
    app = Under()
    async with app.run_test(size=(80, 24)) as pilot:
        modal = Modal()
        await app.push_screen(modal)
        await pilot.pause()
        layouts.clear()
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        await pilot.pause()
        assert layouts["modal"] >= 1 and layouts["background"] >= 1
        assert modal.outer_size == (100, 30)
        assert app.screen_stack[0].outer_size == (100, 30)


async def test_a_screen_with_breakpoints_gets_the_resize_that_applies_them() -> None:
    class Narrow(Modal):
        HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (90, "-wide")]

    app = Under()
    async with app.run_test(size=(100, 24)) as pilot:
        modal = Narrow()
        await app.push_screen(modal)
        await pilot.pause()
        await pilot.pause()
        assert modal.has_class("-wide") and not modal.has_class("-narrow")


def test_the_wrapper_is_installed_once_the_ui_is_imported() -> None:
    assert Screen._on_resize is screen_resize._on_resize_when_needed
