"""The log's flavour of Rich's Markdown.

Rich centres a top-level heading, numbers list items without a dot and highlights code
with its own theme and background; the log puts every heading on the left, writes "1."
and draws code blocks with the log's code renderer, so that a code block in a list
looks like a streamed fence. One parser serves every block: Rich makes a new one for each
`Markdown`, and setting one up took about a third of the time a streamed block's render took.
"""

from __future__ import annotations

from collections.abc import Callable

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.markdown import CodeBlock, Heading, ListItem, Markdown
from rich.segment import Segment

__all__ = ["MARKDOWN_STYLES", "ChatMarkdown", "CodeRenderer"]

MARKDOWN_STYLES = {
    **{f"markdown.h{level}": f"chat-log--h{level}" for level in range(1, 7)},
    "markdown.code": "chat-log--inline-code",
    "markdown.block_quote": "chat-log--quote",
    "markdown.link": "chat-log--link",
    "markdown.link_url": "chat-log--link",
    "markdown.item.bullet": "chat-log--decoration",
    "markdown.item.number": "chat-log--decoration",
    "markdown.table.border": "chat-log--decoration",
    "markdown.table.header": "chat-log--decoration",
    "markdown.hr": "chat-log--decoration",
}
"""The log's component class for each of Rich's Markdown styles."""

CodeRenderer = Callable[[str, str], RenderableType]
"""Draws a code block from its code and its fence's info string."""


class _Heading(Heading):
    """A heading aligned left at every level."""

    LEVEL_ALIGN = dict.fromkeys(Heading.LEVEL_ALIGN, "left")


class _ListItem(ListItem):
    """A list item whose number is followed by a dot."""

    def render_number(self, console: Console, options: ConsoleOptions, number: int, last_number: int) -> RenderResult:
        width = len(str(last_number)) + 3
        lines = console.render_lines(self.elements, options.update(width=options.max_width - width), style=self.style)
        style = console.get_style("markdown.item.number", default="none")
        numeral = Segment(f"{number}.".rjust(width - 1) + " ", style)
        indent = Segment(" " * width, style)
        for index, line in enumerate(lines):
            yield numeral if index == 0 else indent
            yield from line
            yield Segment.line()


class _CodeBlock(CodeBlock):
    """A code block drawn by the log's code renderer."""

    code: CodeRenderer

    @classmethod
    def create(cls, markdown: Markdown, token: Token) -> _CodeBlock:
        assert isinstance(markdown, ChatMarkdown)
        block = cls(token.info or "", "")
        block.code = markdown.code
        return block

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.code(str(self.text).removesuffix("\n"), self.lexer_name)


_PARSER = MarkdownIt().enable("strikethrough").enable("table")
"""Rich's Markdown parser, with the rules Rich enables; parsing keeps no state in it."""


class ChatMarkdown(Markdown):
    """Rich's Markdown with left-aligned headings, dotted numbers and the log's code blocks.

    `number`, if given, numbers the items of an ordered list that `markup` starts with
    from there: a block that is one item of a longer list keeps its number in that list.
    """

    elements = {
        **Markdown.elements,
        "heading_open": _Heading,
        "list_item_open": _ListItem,
        "fence": _CodeBlock,
        "code_block": _CodeBlock,
    }

    def __init__(self, markup: str, code: CodeRenderer, number: int | None = None) -> None:
        # Markdown.__init__ with its defaults, but the shared parser (tests/test_markdown_parser.py
        # checks that these are every attribute Rich's own sets).
        self.markup = markup
        self.parsed = _PARSER.parse(markup)
        self.code_theme = "monokai"
        self.justify = None
        self.style = "none"
        self.hyperlinks = True
        self.inline_code_lexer = None
        self.inline_code_theme = self.code_theme
        self.code = code
        if number is not None and self.parsed and self.parsed[0].type == "ordered_list_open":
            self.parsed[0].attrs["start"] = number
