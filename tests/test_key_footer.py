"""The footer of keys: composed again when a key it shows changes, not at every refresh of the bindings."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.widgets import Input
from textual.widgets._footer import FooterKey

from fastchat_tui.ui.widgets.key_footer import KeyFooter


class FooterApp(App[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "retry", "Retry"),
        Binding("f4", "compare", "Compare"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.retry_lit = False

    def compose(self) -> ComposeResult:
        yield Input(id="first")
        yield Input(id="second")
        yield KeyFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "retry":
            return True if self.retry_lit else None  # shown dim until there is something to retry
        return True

    def action_retry(self) -> None: ...

    def action_compare(self) -> None: ...


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
        assert not after["ctrl+r"].has_class("-disabled") and after["ctrl+r"] is not before["ctrl+r"]
        assert [key.description for key in after.values()] == [key.description for key in before.values()]


async def test_a_compose_makes_each_key_in_the_footers_style_without_restyling_it() -> None:
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
            app.retry_lit = True  # a key changes: the footer composes again
            app.refresh_bindings()
            await pilot.pause()
            composed = keys(app)
            assert composed["ctrl+r"] is not None and not composed["ctrl+r"].has_class("-disabled")
            palette = composed.pop("ctrl+p")
            assert palette.compact and palette.has_class("-compact")
            assert all(key.compact == compact and key.has_class("-compact") == compact for key in composed.values())
            assert not [node for node in restyled if isinstance(node, FooterKey)]
