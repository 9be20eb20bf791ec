"""The status bar's meter changes every frame of a reply: a new text repaints its line, of the same width or not; it
does not lay the screen out again (a transcript, the prompt's box, the footer's keys)."""

from __future__ import annotations

from collections import Counter

import pytest
from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import Label

from fastchat_tui.ui.widgets.status_bar import StatusBar
from tests.helpers import drawn_and_textuals


class Bar(App[None]):
    def compose(self) -> ComposeResult:
        yield Label("above")
        yield StatusBar()


@pytest.fixture
def layouts(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    counts: Counter[str] = Counter()
    original = Screen._refresh_layout

    def counted(self: Screen, *args: object, **kwargs: object) -> None:
        counts["layouts"] += 1
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Screen, "_refresh_layout", counted)
    return counts


def _drawn(app: Bar) -> str:
    return app.export_screenshot().replace("&#160;", " ")


async def test_a_new_meter_is_repainted_without_a_layout(layouts: Counter[str]) -> None:
    app = Bar()
    async with app.run_test(size=(80, 6)) as pilot:
        bar = app.query_one(StatusBar)
        bar.show(route="→ fast · m", meter="rate-11")
        await pilot.pause()
        layouts.clear()
        bar.show(meter="rate-22")
        await pilot.pause()
        assert layouts["layouts"] == 0
        assert "rate-22" in _drawn(app) and "rate-11" not in _drawn(app)
        bar.show(route="→ local · n")  # the route's room is the bar's rest: no layout either
        await pilot.pause()
        assert layouts["layouts"] == 0 and "→ local · n" in _drawn(app)


async def test_a_wider_meter_is_drawn_without_a_layout_right_aligned_and_the_route_makes_room(
        layouts: Counter[str]) -> None:
    app = Bar()
    async with app.run_test(size=(40, 6)) as pilot:
        bar = app.query_one(StatusBar)
        bar.show(route="→ fast · a-model-with-a-long-name", meter="rate-9")
        await pilot.pause()
        layouts.clear()
        bar.show(meter="rate-10000")
        await pilot.pause()
        assert layouts["layouts"] == 0
        line = _drawn_line(app, bar)
        assert line.endswith("  rate-10000 ")  # its gap, the meter, the bar's right padding
        assert line == " ● auto → fast · a-model-w…  rate-10000 ", line


def _drawn_line(app: Bar, bar: StatusBar) -> str:
    return "".join(segment.text for segment in app.screen._compositor.render_strips()[bar.region.y])


@pytest.mark.parametrize("width", [80, 30])
async def test_the_bar_is_drawn_as_textual_draws_its_line(width: int) -> None:
    app = Bar()
    async with app.run_test(size=(width, 6)) as pilot:
        bar = app.query_one(StatusBar)
        for parts in ({}, {"route": "→ fast · a-model · long prompt", "meter": "TTFT 120 ms · 1,204 tok/s"},
                      {"note": "using qwen2.5-coder:7b", "warn": True, "template": "explain", "think": "off"},
                      {"compare": "groq, local", "meter": "速い · ▁▂▃ " * 4}):
            bar.show(**parts)  # type: ignore[arg-type]
            await pilot.pause()
            drawn, textuals = drawn_and_textuals(bar)
            assert drawn == textuals, parts
