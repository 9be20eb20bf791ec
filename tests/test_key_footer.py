"""The footer of keys: one widget that reads as Textual's footer, cell for cell, and that repaints its line when a
key comes or goes, where Textual's composes every key anew and lays out the screen."""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, Label
from textual.widgets._footer import FooterKey

from fastchat_tui.ui.widgets.key_footer import KeyFooter


class FooterApp(App[None]):
    FOOTER: type[Widget] = KeyFooter

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "retry", "Retry"),
        Binding("escape", "cancel", "Cancel"),
        Binding("f4", "compare", "Compare", tooltip="Ask two sources at once"),
        Binding("f5", "compare", "Compare"),  # a second key for an action: the footer shows the first
    ]

    def __init__(self) -> None:
        super().__init__()
        self.retry_lit = False
        self.cancel_shown = False
        self.compared = 0

    def compose(self) -> ComposeResult:
        yield Input(id="first")
        yield Input(id="second")
        yield self.FOOTER()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "retry":
            return True if self.retry_lit else None  # shown dim until there is something to retry
        if action == "cancel":
            return self.cancel_shown
        return True

    def action_retry(self) -> None: ...

    def action_compare(self) -> None:
        self.compared += 1

    def action_cancel(self) -> None: ...


class PlainFooterApp(FooterApp):
    FOOTER = Footer


def footer_cells(app: FooterApp) -> list[tuple[str, Style | None]]:
    """The footer's line as the compositor draws it: each cell's character and style."""
    strips = app.screen._compositor.render_strips()
    footer = app.screen.query_one(app.FOOTER)
    cells: list[tuple[str, Style | None]] = []
    for segment in strips[footer.region.y]:
        style = None if segment.style is None else segment.style.clear_meta_and_links()  # the mouse's offsets
        cells += [(character, style) for character in segment.text]
    return cells


async def test_the_footer_reads_as_textuals_for_every_state_of_the_keys_and_at_any_width() -> None:
    """Esc comes and goes, Retry is dim then lit, focus moves: the line is Textual's footer's, cell for cell and
    style for style, the command palette's key on the right; at 40 columns the keys are cut as Textual cuts them."""
    for size in ((100, 6), (40, 6)):
        ours, plain = FooterApp(), PlainFooterApp()
        async with ours.run_test(size=size) as pilot, plain.run_test(size=size) as plain_pilot:
            for cancel_shown, retry_lit, focus in ((False, False, "#first"), (True, False, "#second"),
                                                   (False, True, "#first"), (True, True, "#second")):
                for app in (ours, plain):
                    app.cancel_shown, app.retry_lit = cancel_shown, retry_lit
                    app.query_one(focus).focus()
                    app.refresh_bindings()
                await pilot.pause()
                await plain_pilot.pause()
                await pilot.pause()
                await plain_pilot.pause()
                shown = "".join(character for character, _style in footer_cells(ours))
                assert ("Cancel" in shown) == cancel_shown
                assert footer_cells(ours) == footer_cells(plain), (size, cancel_shown, retry_lit)


async def test_the_key_under_the_mouse_is_lit_as_textuals_and_shows_its_tooltip() -> None:
    plain = PlainFooterApp()
    async with plain.run_test(size=(100, 6)) as pilot:
        await pilot.pause()
        compare = next(key for key in plain.query(FooterKey) if key.key == "f4")
        x = compare.region.x + 1
        unlit = footer_cells(plain)
        await pilot.hover(compare)
        for _ in range(50):  # Textual lights a key a pass or two after the mouse came (later on a loaded machine)
            await pilot.pause()
            if (lit := footer_cells(plain)) != unlit:
                break
    ours = FooterApp()
    async with ours.run_test(size=(100, 6)) as pilot:
        await pilot.pause()
        footer = ours.query_one(KeyFooter)
        await pilot.hover(footer, offset=(x, 0))
        await pilot.pause()
        assert lit != unlit and footer_cells(ours) == lit
        assert footer.tooltip == "Ask two sources at once"
        await pilot.hover(Input)
        await pilot.pause()
        assert footer.tooltip is None and footer_cells(ours) != lit


async def test_a_click_presses_the_key_and_a_disabled_one_rings_the_bell() -> None:
    app = FooterApp()
    bells: list[None] = []
    app.bell = lambda: bells.append(None)  # type: ignore[method-assign]
    async with app.run_test(size=(100, 6)) as pilot:
        await pilot.pause()
        footer = app.query_one(KeyFooter)
        line = "".join(character for character, _style in footer_cells(app))
        await pilot.click(footer, offset=(line.index("Compare"), 0))
        assert app.compared == 1
        await pilot.click(footer, offset=(line.index("Retry"), 0))  # dim until there is something to retry
        assert bells == [None] and app.compared == 1
        await pilot.click(footer, offset=(len(line) - 4, 0))  # the palette's key opens the palette
        await pilot.pause()
        assert type(app.screen).__name__ == "CommandPalette"


async def test_a_key_that_comes_or_goes_repaints_the_line_and_lays_out_nothing() -> None:
    """Esc comes at Enter and goes at the reply's end: Textual's footer mounts or removes a key and lays out the
    screen; this one repaints its line."""
    app = FooterApp()
    async with app.run_test(size=(100, 6)) as pilot:
        await pilot.pause()
        layouts: list[object] = []
        refresh_layout = app.screen._refresh_layout

        def counted(*args: object, **kwargs: object) -> None:
            layouts.append(args)
            refresh_layout(*args, **kwargs)  # type: ignore[arg-type]

        app.screen._refresh_layout = counted  # type: ignore[method-assign]
        children = list(app.query_one(KeyFooter).children)
        for cancel_shown in (True, False, True):
            app.cancel_shown = cancel_shown
            app.refresh_bindings()
            await pilot.pause()
            line = "".join(character for character, _style in footer_cells(app))
            assert ("Cancel" in line) == cancel_shown
        assert layouts == [] and children == []


class KeysScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("y", "accept", "Accept"), Binding("n", "reject", "Reject")]

    def compose(self) -> ComposeResult:
        yield Label("changes")
        yield KeyFooter()


async def test_a_screen_just_shown_has_its_keys_in_its_first_paint() -> None:
    """Textual's footer shows its keys only after the screen's first paint: one more layout and paint before
    a preview reads whole."""
    app = FooterApp()
    async with app.run_test(size=(100, 6)) as pilot:
        await pilot.pause()
        screen = KeysScreen()
        painted: list[str] = []
        compositor_refresh = screen._compositor_refresh

        def first_paint() -> None:
            if not painted:
                painted.append("".join(character for character, _style in footer_cells(app)))
            compositor_refresh()

        screen._compositor_refresh = first_paint  # type: ignore[method-assign]
        app.push_screen(screen)
        await pilot.pause()
        assert painted and "Accept" in painted[0] and "Reject" in painted[0]
