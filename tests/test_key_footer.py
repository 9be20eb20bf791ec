"""The footer of keys: changed where a key it shows changes, not composed again at every refresh of the bindings."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.widgets import Footer, Input
from textual.widgets._footer import FooterKey

from fastchat_tui.ui.widgets.key_footer import KeyFooter


class FooterApp(App[None]):
    FOOTER: type[Footer] = KeyFooter

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "retry", "Retry"),
        Binding("escape", "cancel", "Cancel"),
        Binding("f4", "compare", "Compare"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.retry_lit = False
        self.cancel_shown = False

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

    def action_compare(self) -> None: ...

    def action_cancel(self) -> None: ...


class PlainFooterApp(FooterApp):
    FOOTER = Footer


def keys(app: FooterApp) -> dict[str, FooterKey]:
    return {key.key: key for key in app.query(FooterKey)}


async def test_the_keys_stay_while_they_show_the_same_and_change_when_one_does() -> None:
    app = FooterApp()
    async with app.run_test() as pilot:
        await pilot.pause()
        before = keys(app)
        assert set(before) >= {"ctrl+r", "f4"}
        assert before["ctrl+r"].has_class("-disabled") and not before["f4"].has_class("-disabled")

        for _ in range(3):
            app.refresh_bindings()
            await pilot.pause()
        app.query_one("#second", Input).focus()  # a focus change refreshes the bindings too
        await pilot.pause()
        assert keys(app) == before  # the same widgets: nothing was composed again

        app.retry_lit = True
        app.refresh_bindings()
        await pilot.pause()
        after = keys(app)
        assert not after["ctrl+r"].has_class("-disabled") and not after["ctrl+r"]._disabled
        assert after == before  # enabled in place: the same widgets, in the same order


async def test_a_key_that_comes_or_goes_is_the_only_one_mounted_or_removed_and_the_footer_reads_as_textuals() -> None:
    """Esc appears at Enter and goes at the reply's end: the other keys stay the widgets they were. What shows
    is what Textual's own footer, composing every key anew, shows for the same bindings."""
    ours, plain = FooterApp(), PlainFooterApp()
    async with ours.run_test(size=(80, 6)) as pilot, plain.run_test(size=(80, 6)) as plain_pilot:
        await pilot.pause()
        before = keys(ours)
        assert "escape" not in before
        for cancel_shown, retry_lit in ((True, False), (False, True), (True, True), (False, False)):
            for app in (ours, plain):
                app.cancel_shown, app.retry_lit = cancel_shown, retry_lit
                app.refresh_bindings()
            await pilot.pause()
            await plain_pilot.pause()
            now = keys(ours)
            assert ("escape" in now) == cancel_shown
            assert all(now[key] is widget for key, widget in before.items())  # none of the others composed again
            assert [(key.key, key.has_class("-disabled")) for key in ours.query(FooterKey)] == \
                [(key.key, key.has_class("-disabled")) for key in plain.query(FooterKey)]
            assert _footer_text(ours) == _footer_text(plain)


def _footer_text(app: FooterApp) -> list[str]:
    """The footer's cells as text and styles, as the compositor has them."""
    footer = app.query_one(Footer)
    return [strip.text + repr([segment.style for segment in strip]) for strip in app.screen._compositor.render_strips()
            [footer.region.y:footer.region.bottom]]


async def test_a_key_mounted_is_made_in_the_footers_style_without_restyling_it() -> None:
    """Each key is mounted in the footer's style (compact or not), not restyled from compact once mounted; the
    command palette's stays compact, as Textual's footer makes it."""
    for compact in (False, True):
        app = FooterApp()
        async with app.run_test() as pilot:
            footer = app.query_one(KeyFooter)
            footer.compact = compact
            await pilot.pause()
            restyled: list[object] = []
            update_styles = app.update_styles

            def counted(node: DOMNode, animate: bool = True, restyled: list[object] = restyled,
                        update_styles: Callable[..., None] = update_styles) -> None:
                restyled.append(node)
                update_styles(node, animate=animate)

            app.update_styles = counted  # type: ignore[method-assign]
            app.cancel_shown = True  # a key comes: the footer mounts it
            app.refresh_bindings()
            await pilot.pause()
            composed = keys(app)
            assert "escape" in composed
            palette = composed.pop("ctrl+p")
            assert palette.compact and palette.has_class("-compact")
            assert all(key.compact == compact and key.has_class("-compact") == compact for key in composed.values())
            assert not [node for node in restyled if isinstance(node, FooterKey)]
