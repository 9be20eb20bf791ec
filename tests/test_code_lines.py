"""A code block's lines are made from the lexer's tokens (``Renderer.code``), not by Rich's ``Syntax``: they must be
what ``Syntax`` draws with the same options, segment for segment, in every theme, width and shape of code."""

from __future__ import annotations

import pytest
from rich.console import Console
from rich.style import Style

from fastchat_tui.ui.chat_log.blocks import BlockSplitter
from fastchat_tui.ui.chat_log.markdown import MARKDOWN_STYLES
from fastchat_tui.ui.chat_log.render import Renderer, RenderStats

CODE = {
    "python": ("python", "def step(value: int) -> int:\n    \"\"\"A step.\"\"\"\n    return value * 2  # twice\n"),
    "no last newline": ("python", "x = 1\ny = 2"),
    "blank lines around": ("python", "\n\nx\n\n"),
    "a tab and a long string": ("python", "def f():\n\treturn '" + "very long string " * 20 + "'\n"),
    "one long word": ("python", "x" * 300 + "\n"),
    "wide characters": ("python", "名前 = '漢字漢字'\n" + "漢" * 80 + "\n"),
    "trailing spaces": ("python", "a = 1  \n   \n"),
    "a multi-line string": ("python", "s = '''\nmulti\nline\n'''\n"),
    "rust": ("rust", "fn main() {\n    println!(\"hi\");\n}\n"),
    "json, one line": ("json", '{"a": [1, 2, {"b": null}]}'),
    "no language": ("", "plain text\n  indented\n"),
    "an unknown language": ("nosuchlang", "a\tb\n"),
    "a control character": ("bash", "echo \x07bell\n"),
}
THEMES = [("monokai", "#1e1e1e"), ("github-dark", None), ("solarized-light", "#fdf6e3")]


def _renderer(width: int, theme: str, background: str | None) -> Renderer:
    console = Console(width=width, color_system="truecolor", force_terminal=True, legacy_windows=False)
    styles = {component: Style() for component in MARKDOWN_STYLES.values()}
    styles["chat-log--code-block"] = Style(bgcolor=background) if background else Style()
    return Renderer(console, (width,), styles, theme, RenderStats())


@pytest.mark.parametrize("width", [24, 80, 118])
@pytest.mark.parametrize(("theme", "background"), THEMES)
@pytest.mark.parametrize("name", sorted(CODE))
def test_code_lines_are_what_syntax_draws(name: str, theme: str, background: str | None, width: int) -> None:
    info, code = CODE[name]
    renderer = _renderer(width, theme, background)
    for top, bottom in ((True, True), (False, True), (True, False), (False, False)):
        by_syntax = renderer._strips(renderer.syntax(code, info, top=top, bottom=bottom))
        assert renderer.code(code, info, top=top, bottom=bottom) == by_syntax, (top, bottom)
        assert [strip.cell_length for strip in by_syntax] == [width] * len(by_syntax)


def test_a_finished_fence_even_an_empty_one_is_what_syntax_draws() -> None:
    renderer = _renderer(60, "monokai", "#1e1e1e")
    splitter = BlockSplitter()
    splitter.feed("```python\nx = 1\n```\n\n```\n```\n")
    splitter.close()
    fences = [block for block in splitter.blocks if block.kind == "fence"]
    assert [block.code for block in fences] == ["x = 1", ""]
    for block in fences:
        assert renderer.block(block) == renderer._strips(renderer.syntax(block.code, block.info, top=True, bottom=True))
