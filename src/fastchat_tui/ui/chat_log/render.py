"""Turning Markdown, code and plain text into the log's lines (strips).

A `Renderer` holds what rendering at one width and one set of styles needs, so the
log makes a new one when either changes and every entry rendered with an older one
is known to be stale. Code is highlighted with Pygments lexers looked up once.

A code block's lines are made from the lexer's tokens directly, each token's style combined once per
token type: what Rich's `Syntax` draws, segment for segment, in under a third of the time (Rich's text
machinery spans, divides and wraps every line). Only a line wider than the block is wrapped by Rich.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache, partial

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound
from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.control import strip_control_codes
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax, SyntaxTheme
from rich.text import Text
from rich.theme import Theme
from textual.strip import Strip

from fastchat_tui.ui.chat_log.blocks import Block
from fastchat_tui.ui.chat_log.markdown import MARKDOWN_STYLES, ChatMarkdown

__all__ = ["BLANK", "RenderStats", "Renderer", "lexer_for", "warm_lexers"]

BLANK = Strip([])
"""An empty line."""

_WRAPS_KEPT = 512
"""Wrapped long lines a renderer keeps (all dropped when full)."""

_COMMON_LANGUAGES = ("python", "javascript", "typescript", "rust", "go", "bash", "json", "c", "cpp", "java", "?")


@lru_cache(maxsize=64)
def _lexer(info: str) -> Lexer | None:
    """The Pygments lexer for a fence info string, if there is one."""
    words = info.split(maxsplit=1)
    name = words[0].strip("{}.").lower() if words else ""
    if not name:
        return None
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=True, tabsize=4)
    except ClassNotFound:
        return None


def lexer_for(info: str) -> Lexer | None:
    """The Pygments lexer a fence's info string names (its first word), if there is one."""
    return _lexer(info)


def warm_lexers() -> None:
    """Load common lexers (and the list of plugins, "?") before a stream needs them."""
    for name in _COMMON_LANGUAGES:
        _lexer(name)


@lru_cache(maxsize=8)
def _syntax_theme(name: str) -> SyntaxTheme:
    return Syntax.get_theme(name)


def _is_blank(strip: Strip) -> bool:
    return not strip.text.strip() and not any(style is not None and style.bgcolor for _, style, _ in strip)


def _trimmed(strips: list[Strip]) -> list[Strip]:
    """The strips without leading or trailing blank lines."""
    start, end = 0, len(strips)
    while start < end and _is_blank(strips[start]):
        start += 1
    while end > start and _is_blank(strips[end - 1]):
        end -= 1
    return strips[start:end]


@dataclass
class RenderStats:
    """Counters for tests, benchmarks and diagnostics."""

    frames: int = 0
    block_renders: int = 0
    """Finished blocks rendered: once each, again after a re-wrap or a cache eviction."""
    tail_renders: int = 0
    frame_seconds: deque[float] = field(default_factory=lambda: deque(maxlen=4096))
    """Processing time of recent frames."""


class Renderer:
    """Renders Markdown, code and plain text to strips at one width and theme."""

    def __init__(self, console: Console, key: tuple, styles: dict[str, Style], code_theme: str, stats: RenderStats) -> None:
        self.key = key
        self.width: int = key[0]
        self.styles = styles
        self.stats = stats
        self._console = console
        self._options = console.options.update(width=self.width, height=None, highlight=False, markup=False)
        self._theme = Theme({name: styles[component] for name, component in MARKDOWN_STYLES.items()})
        self._syntax_theme = _syntax_theme(code_theme)
        background = styles["chat-log--code-block"].bgcolor
        self._code_background = None if background is None else background.name
        self._code_padding = Strip.blank(self.width, Style(bgcolor=background))
        self._code_block = partial(self.syntax, top=True, bottom=True)
        """A finished code block nested in the Markdown (a top-level one: `code`)."""
        # What `Syntax` with these options draws around and under every cell (see `_code_lines`)
        self._back = Style(bgcolor=background)
        self._base = self._syntax_theme.get_background_style() + self._back
        self._code_width = max(0, self.width - 2)
        self._code_edge = Segment(" ", self._base)
        self._code_pad_line = Strip([Segment(" " * self.width, self._base)], self.width)
        self._token_styles: dict[tuple[str, ...], Style] = {}  # Pygments' token types are tuples
        self._wraps: dict[tuple[tuple[str, Style], ...], list[list[Segment]]] = {}
        """Long lines wrapped lately: a streamed fence's line is wrapped as it comes and again when the fence
        closes and is drawn whole (a narrow compare column wraps most of its code)."""

    def _strips(self, renderable: RenderableType) -> list[Strip]:
        """Render to strips, without leading or trailing blank lines."""
        with self._console.use_theme(self._theme):
            lines = self._console.render_lines(renderable, self._options, pad=False)
        return _trimmed([Strip(line) for line in lines])

    def syntax(self, code: str, info: str, *, top: bool, bottom: bool) -> Syntax:
        """A highlighted code block; `top`/`bottom` choose its padding lines."""
        return Syntax(
            code,
            _lexer(info) or "text",
            theme=self._syntax_theme,
            word_wrap=True,
            padding=(int(top), 1, int(bottom), 1),
            background_color=self._code_background,
            tab_size=4,
        )

    def code(self, code: str, info: str, *, top: bool = True, bottom: bool = True) -> list[Strip]:
        """Strips for code lines, with optional padding lines above and below: those of `syntax`."""
        if not code:
            return [self._code_padding] * (top + bottom)
        return _trimmed(self._code_lines(code, info, top, bottom))

    def _code_lines(self, code: str, info: str, top: bool, bottom: bool) -> list[Strip]:
        """`syntax(code, info)` drawn at the renderer's width, one padding cell each side, from the tokens."""
        return self._token_strips(self._token_lines(code, info), top, bottom)

    def code_tokens(self, code: str, info: str) -> list[list[tuple[str, Style]]]:
        """A fenced block's code lexed whole, as `fence` draws it: the slow half of drawing it, and safe to run in
        another thread (the lexers and the style caches it reads are shared, and only ever added to)."""
        return self._token_lines(code, info)

    def fence(self, tokens: list[list[tuple[str, Style]]]) -> list[Strip]:
        """A finished fenced block's strips, from its `code_tokens`."""
        return _trimmed(self._token_strips(tokens, True, True))

    def _token_strips(self, token_lines: list[list[tuple[str, Style]]], top: bool, bottom: bool) -> list[Strip]:
        width, code_width, base, edge = self.width, self._code_width, self._base, self._code_edge
        strips = [self._code_pad_line] if top else []
        for line in token_lines:
            length = sum(cell_len(text) for text, _ in line)
            if length <= code_width:
                segments = [edge, *(Segment(text, style) for text, style in line if text)]
                if length < code_width:
                    segments.append(Segment(" " * (code_width - length), base))
                segments.append(edge)
                strips.append(Strip(segments, width))
            else:  # wrapped at words, as Syntax wraps
                strips += [Strip([edge, *Segment.apply_style(wrapped, base), edge], width) for wrapped in self._wrapped(line)]
        if bottom:
            strips.append(self._code_pad_line)
        return strips

    def _token_lines(self, code: str, info: str) -> list[list[tuple[str, Style]]]:
        """The code's lines, each a list of (text, final style) pieces; a code that ends its last line has a
        blank line after it, as `Syntax` draws it."""
        ends_on_newline = code.endswith("\n")
        processed = (code if ends_on_newline else code + "\n").expandtabs(4)
        lexer = _lexer(info) or _lexer("text")
        assert lexer is not None
        styled = self._token_style
        lines: list[list[tuple[str, Style]]] = [[]]
        for token_type, value in lexer.get_tokens(processed):
            style = styled(token_type)
            first, *rest = strip_control_codes(value).split("\n")
            lines[-1].append((first, style))
            for part in rest:
                lines.append([(part, style)])
        if not ends_on_newline:
            lines.pop()  # what follows the newline added above: nothing
        return lines

    def _token_style(self, token_type: tuple[str, ...]) -> Style:
        """A token's style in a cell: the block's (the theme's background, then the block's), the token's, then
        the block's background again."""
        style = self._token_styles.get(token_type)
        if style is None:
            token = self._syntax_theme.get_style_for_token(token_type)
            style = self._token_styles[token_type] = self._base + token + self._back
        return style

    def _wrapped(self, line: list[tuple[str, Style]]) -> list[list[Segment]]:
        """A line wider than the block, wrapped by Rich at words, as `Syntax` wraps it."""
        key = tuple(line)
        wrapped = self._wraps.get(key)
        if wrapped is None:
            text = Text(style=self._base, justify="left", tab_size=4)
            for part, style in line:
                text.append(part, style)
            options = self._options.update(width=self._code_width, height=None, justify="left")
            wrapped = self._console.render_lines(text, options, style=self._back, pad=True)
            if len(self._wraps) >= _WRAPS_KEPT:
                self._wraps.clear()
            self._wraps[key] = wrapped
        return wrapped

    def block(self, block: Block) -> list[Strip]:
        """Strips for a finished Markdown block."""
        self.stats.block_renders += 1
        if block.kind == "fence":  # an empty one too has a line between its paddings
            return self.fence(self._token_lines(block.code, block.info))
        return self.markdown(block.text + "\n", block.number)  # ends its last line, even a blank one

    def markdown(self, text: str, number: int | None = None) -> list[Strip]:
        """Strips for Markdown text; `number`: see `ChatMarkdown`."""
        return self._strips(ChatMarkdown(text, self._code_block, number))

    def text(self, text: str, component: str) -> list[Strip]:
        """Plain wrapped text in a component style."""
        content = Text(text, style=self.styles[component])
        content.expand_tabs()
        return [Strip(line) for line in self._console.render_lines(content, self._options, pad=False)]

    def line(self, text: str, component: str) -> list[Strip]:
        """One line of text in a component style, cut with an ellipsis if too long."""
        content = Text(text, style=self.styles[component], no_wrap=True, overflow="ellipsis")
        return [Strip(line) for line in self._console.render_lines(content, self._options, pad=False)[:1]]

    def tint(self, strips: list[Strip], component: str) -> list[Strip]:
        """The strips with a component's style laid over their own (its colour wins), as the
        thinking block is dimmed whatever its Markdown or code would colour."""
        style = self.styles[component]
        return [Strip(Segment.apply_style(strip, post_style=style), strip.cell_length) for strip in strips]
