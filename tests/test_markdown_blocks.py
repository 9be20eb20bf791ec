"""Tests for the incremental Markdown block splitter, against markdown-it's whole-document parse."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from markdown_it.token import Token
from rich.console import Console
from rich.markdown import Markdown
from rich.style import Style
from textual.strip import Strip

from fastchat_tui.ui.chat_log import ChatLog, RenderStats, blocks
from fastchat_tui.ui.chat_log.blocks import Block, BlockSplitter
from fastchat_tui.ui.chat_log.markdown import ChatMarkdown
from fastchat_tui.ui.chat_log.render import Renderer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import corpus


def split(text: str) -> list[Block]:
    splitter = BlockSplitter()
    return splitter.feed(text) + splitter.close()


def state(splitter: BlockSplitter) -> tuple[object, ...]:
    """What a splitter holds, copied: its blocks, its tail, its open fence."""
    fence = splitter.open_fence
    return list(splitter.blocks), splitter.tail_text(), fence and (fence.info, list(fence.lines), fence.partial)


def kinds(text: str) -> list[tuple[str, str]]:
    return [(block.kind, block.text) for block in split(text)]


DOCUMENTS = {
    "mixed": (
        "# Title\n\nIntro paragraph\nwith two lines.\n\n- one\n- two\n  - nested\n- three\n\n"
        "1. first\n2. second\n\n> quoted\n> text\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "```python\ndef f():\n\n    return 1\n```\n\nSetext\n======\n\n---\n\nEnd.\n"
    ),
    "fences": (
        "Here:\n```js\nlet a = '```';\n```\n~~~\n```\nnot closed by backticks\n```\n~~~\n"
        "````md\n```\ninner\n```\n````\n```\nunterminated\n\n\ncode"
    ),
    "lists": (
        "1. Install:\n\n   ```bash\n   pip install x\n\n   ```\n\n2. Run it\n   lazily\ncontinued\n\n"
        "- loose\n\n- items\n\n  second paragraph\n\nafter\n"
    ),
    "crlf": "# Head\r\n\r\npara\r\nline\r\n\r\n```\r\ncode\r\n```\r\n",
    "corpus": (lambda reply: reply[reply.index("\n## ", 15_000) + 1 :][:2500])(corpus.text()),
}


def test_paragraphs_end_at_blank_lines() -> None:
    assert kinds("one\ntwo\n\nthree\n") == [("paragraph", "one\ntwo"), ("paragraph", "three")]


def test_headings_are_blocks_of_their_own() -> None:
    assert kinds("# A\ntext\n## B\n") == [("heading", "# A"), ("paragraph", "text"), ("heading", "## B")]
    assert kinds("Title\n===\nbody\n") == [("heading", "Title\n==="), ("paragraph", "body")]
    assert kinds("Sub\n---\n") == [("heading", "Sub\n---")]


def test_thematic_break() -> None:
    assert kinds("a\n\n***\n\nb\n") == [("paragraph", "a"), ("rule", "***"), ("paragraph", "b")]


def test_fence_info_and_code() -> None:
    (block,) = split("```python title=x.py\nprint(1)\n\nprint(2)\n```\n")
    assert block.kind == "fence"
    assert block.info == "python title=x.py"
    assert block.code == "print(1)\n\nprint(2)"


def test_fence_closes_only_on_a_matching_fence() -> None:
    blocks = split(DOCUMENTS["fences"])
    assert [block.kind for block in blocks] == ["paragraph", "fence", "fence", "fence", "fence"]
    assert blocks[1].code == "let a = '```';"
    assert blocks[2].code == "```\nnot closed by backticks\n```"
    assert blocks[3].info == "md" and blocks[3].code == "```\ninner\n```"
    assert blocks[4].code == "unterminated\n\n\ncode"


def test_backtick_fence_info_cannot_hold_backticks() -> None:
    assert kinds("```not `a` fence```\ntext\n") == [("paragraph", "```not `a` fence```\ntext")]


def test_fence_and_list_interrupt_a_paragraph() -> None:
    assert [kind for kind, _ in kinds("Here:\n```\nx\n```\n")] == ["paragraph", "fence"]
    assert [kind for kind, _ in kinds("Steps:\n1. a\n2. b\n")] == ["paragraph", "list", "list"]
    assert kinds("In\n2019. was a year\n") == [("paragraph", "In\n2019. was a year")]


def test_top_level_list_items_are_separate_blocks() -> None:
    blocks = split("- one\n- two\n  - nested\n- three\n")
    assert [(block.text, block.gap) for block in blocks] == [
        ("- one", False),
        ("- two\n  - nested", False),
        ("- three", False),
    ]


def test_list_item_keeps_indented_content_after_blank_lines() -> None:
    blocks = split(DOCUMENTS["lists"])
    assert blocks[0].kind == "list"
    assert blocks[0].text == "1. Install:\n\n   ```bash\n   pip install x\n\n   ```"
    assert blocks[1].text == "2. Run it\n   lazily\ncontinued"
    assert blocks[1].gap
    assert [block.text for block in blocks[2:]] == ["- loose", "- items\n\n  second paragraph", "after"]


def test_gap_records_blank_lines_between_blocks() -> None:
    assert [block.gap for block in split("a\n\n\nb\n# c\n\nd")] == [False, True, False, True]


def test_crlf_line_endings() -> None:
    assert kinds(DOCUMENTS["crlf"]) == [("heading", "# Head"), ("paragraph", "para\nline"), ("fence", "```\ncode\n```")]


def test_tail_and_open_fence_while_streaming() -> None:
    splitter = BlockSplitter()
    assert splitter.feed("Intro\n\n```py\nx = 1\ny") == [Block("Intro", "paragraph", False)]
    fence = splitter.open_fence
    assert fence is not None
    assert (fence.info, list(fence.lines), fence.partial) == ("py", ["x = 1"], "y")
    assert splitter.tail_kind == "fence" and splitter.tail_gap
    assert splitter.tail_text() == "```py\nx = 1\ny"
    (block,) = splitter.feed(" = 2\n```\nnext")
    assert block.code == "x = 1\ny = 2"
    assert splitter.open_fence is None
    assert splitter.tail_text() == "next"
    assert splitter.tail_kind == "paragraph"


def test_fence_nested_in_a_list_is_not_an_open_fence() -> None:
    splitter = BlockSplitter()
    splitter.feed("- item\n  ```\n  code\n")
    assert splitter.open_fence is None
    assert splitter.tail_kind == "list"


def test_partial_list_item_is_classified_as_list() -> None:
    splitter = BlockSplitter()
    splitter.feed("- one\n\n- tw")
    assert splitter.tail_kind == "list"
    assert splitter.tail_text() == "- one\n\n- tw"


def test_close_finishes_everything_and_ends_input() -> None:
    splitter = BlockSplitter()
    splitter.feed("para\n- item")
    assert [block.text for block in splitter.close()] == ["para", "- item"]
    assert splitter.tail_text() == "" and splitter.tail_kind is None
    assert splitter.close() == []
    with pytest.raises(RuntimeError):
        splitter.feed("more")


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_every_split_point_gives_the_same_blocks(name: str) -> None:
    text = DOCUMENTS[name]
    expected = split(text)
    for cut in range(len(text) + 1):
        splitter = BlockSplitter()
        blocks = splitter.feed(text[:cut]) + splitter.feed(text[cut:]) + splitter.close()
        assert blocks == expected, f"split at {cut}"


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_any_chunking_gives_the_same_blocks(name: str) -> None:
    text = DOCUMENTS[name]
    expected = split(text)
    by_char = BlockSplitter()
    for char in text:
        by_char.feed(char)
    by_char.close()
    assert by_char.blocks == expected
    rng = random.Random(name)
    for _ in range(20):
        splitter = BlockSplitter()
        position = 0
        while position < len(text):
            size = rng.randint(1, 12)
            splitter.feed(text[position : position + size])
            position += size
        splitter.close()
        assert splitter.blocks == expected


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_a_copy_goes_on_apart_from_where_its_original_was(name: str) -> None:
    """At every split point (in an open fence, a list, a line), a copy fed the rest finishes the same blocks as
    the whole text, and its feeding leaves the original as it was."""
    text = DOCUMENTS[name]
    expected = split(text)
    for cut in range(len(text) + 1):
        original = BlockSplitter()
        original.feed(text[:cut])
        before = state(original)
        copy = original.copy()
        copy.feed(text[cut:])
        copy.close()
        assert copy.blocks == expected, f"split at {cut}"
        assert state(original) == before, f"split at {cut}"
        assert original.feed(text[cut:]) + original.close() == expected[len(before[0]):], f"split at {cut}"


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_finished_blocks_and_tail_cover_every_prefix(name: str) -> None:
    text = DOCUMENTS[name].replace("\r", "")
    splitter = BlockSplitter()
    for end in range(1, len(text) + 1):
        splitter.feed(text[end - 1])
        shown = "\n".join([block.text for block in splitter.blocks] + [splitter.tail_text()])
        assert shown.split() == text[:end].split()


def parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """From now on, how many lines each markdown-it parse of the splitter is given."""
    parsed: list[int] = []
    units = blocks._units

    def counting_units(lines: list[str]) -> list[blocks._Unit]:
        parsed.append(len(lines))
        return units(lines)

    monkeypatch.setattr(blocks, "_units", counting_units)
    return parsed


def test_feeding_parses_only_the_unfinished_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = parses(monkeypatch)
    text = corpus.text(3000)
    splitter = BlockSplitter()
    for token in corpus.tokens(3000):
        splitter.feed(token)
    longest = max(block.text.count("\n") + 1 for block in splitter.blocks)
    assert longest > 40  # a code fence, whose lines are parsed as they arrive, not again and again
    assert max(parsed) < longest // 4
    assert sum(parsed) < 3 * text.count("\n")


def test_corpus_pieces_join_to_the_reply() -> None:
    pieces = corpus.tokens(10_000)
    assert len(pieces) == 10_000
    assert "".join(pieces) == corpus.text(10_000)
    kinds = {block.kind for block in split(corpus.text(10_000))}
    assert kinds == {"heading", "paragraph", "list", "fence"}
    assert 3 <= sum(len(piece) for piece in pieces) / len(pieces) <= 5


HIDDEN = "<!--\n\nhidden note\n\n-->\nvisible"

EDGE_CASES = {
    "html comment": HIDDEN,
    "html blocks": (
        "<div>\n*not emphasis*\n</div>\n\n<details>\n<summary>More</summary>\n\ntext\n\n</details>\n"
        "para\n<!-- interrupts -->\n<span>inline html</span> text\n\n<?php echo 1; ?>\nafter\n"
    ),
    "unclosed html comment": "before\n\n<!-- never\n\nclosed\n\n# heading",
    "fences": (
        "~~~\n```\ncode\n```\n~~~\n````\n```\n````\n  ```py\n  indented\n    more\n ```\n"
        "para\n~~~ sh\nls\n~~~~~\n```\n\n```\n```py|\n|-|\n\n```\nnever closed\n\n- not a list"
    ),
    "fence in a list": "1. Run:\n   ```\n   make\n\n   ```\n2. Then\n```\nout of the list\n```\n",
    "nested lists": (
        "- a\n  - b\n    - c\n- d\n\n1. one\n   1. x\n   2. y\n2. two\n\n- loose\n\n- items\n\n"
        "  more of it\n-\n  foo\n- a\n* b\n+ c\n"
    ),
    "numbering": "1. a\n1. b\n\n\n1. c\n2) d\n3) e\n\n7. seven\n8. eight\n9. nine\n10. ten\n11. eleven\n",
    "block quotes": "> a\n> b\nlazy\n\n> c\n>\n> > deep\n\n> # h\n> - item\n>\n> ```\n> code\n> ```\nafter\n",
    "tables": (
        "| a | b |\n|---|:-:|\n| 1 | 2 |\n| 3 | 4 |\n\nafter\ntext\n| x | y |\n|---|---|\n| 5 | 6 |\n"
        "a | b\n--|--\n1 | 2\n\n| not | a table |\n"
    ),
    "setext and rules": "Title\n=====\n\nSub\n---\n\npara\nline\n---\n\na\n\n---\n- - -\n***\n___\n# h\n## h2 ##\n#not\n",
    "indented code": "    code\n\n    more\n\npara\n    not code\n\n\tcode with a tab\n\n  two spaces\n",
    "lazy continuation": "> quote\ncontinued\n- item\ncontinued\n  indented\n\npara\n    indented continuation\n",
}
"""Hand-written documents for the constructs a line-based splitter gets wrong. Reference
links are left out: a definition in one block and its use in another is an inline
matter the log does not resolve (each block renders on its own)."""


def _renderer() -> Renderer:
    styles = {name: Style() for name in ChatLog.COMPONENT_CLASSES}
    styles["chat-log--code-block"] = Style(bgcolor="grey11")
    console = Console(width=60, force_terminal=True, color_system="truecolor")
    return Renderer(console, (60,), styles, "monokai", RenderStats())


RENDERER = _renderer()


def _top_level(tokens: list[Token]) -> list[tuple[list[Token], str, int]]:
    """markdown-it's top-level blocks (each list item apart, in a list of its own that
    numbers it as in the whole list), their kinds and first lines."""
    units: list[tuple[list[Token], str, int]] = []
    kinds = {"heading_open": "heading", "hr": "rule", "blockquote_open": "quote", "fence": "fence"}
    opened: Token | None = None
    number = 1
    start = 0
    for index, token in enumerate(tokens):
        if token.level == 0 and token.type in ("bullet_list_open", "ordered_list_open"):
            opened, number = token, int(token.attrs.get("start", 1))
        elif token.level == 0 and token.type in ("bullet_list_close", "ordered_list_close"):
            opened = None
        elif token.level == 1 and token.type == "list_item_open":
            start = index
        elif token.level == 1 and token.type == "list_item_close":
            assert opened is not None and opened.map is not None and tokens[start].map is not None
            wrapper = opened.copy(attrs={"start": number} if opened.type == "ordered_list_open" else {})
            closer = Token(opened.type.replace("_open", "_close"), opened.tag, -1)
            units.append(([wrapper, *tokens[start : index + 1], closer], "list", tokens[start].map[0]))
            number += 1
        elif token.level == 0 and token.nesting >= 0 and opened is None:
            start = index
            if token.nesting == 0:
                assert token.map is not None
                units.append(([token], kinds.get(token.type, "paragraph"), token.map[0]))
        elif token.level == 0 and token.nesting < 0 and opened is None:
            opening = tokens[start]
            assert opening.map is not None
            units.append((tokens[start : index + 1], kinds.get(opening.type, "paragraph"), opening.map[0]))
    return units


def _whole_document(document: str) -> list[tuple[list[Strip], str, bool]]:
    """How the renderer draws markdown-it's top-level blocks of the whole document:
    their lines, kinds and whether a blank line comes before them."""
    code = RENDERER._code_block
    lines = document.replace("\r\n", "\n").split("\n")
    drawn = []
    for index, (tokens, kind, start) in enumerate(_top_level(ChatMarkdown(document, code).parsed)):
        markdown = ChatMarkdown("", code)
        markdown.parsed = tokens
        drawn.append((RENDERER._strips(markdown), kind, index > 0 and not lines[start - 1].strip()))
    return drawn


def _blocks_drawn(found: list[Block]) -> list[tuple[list[Strip], str, bool]]:
    return [(RENDERER.block(block), block.kind, block.gap) for block in found]


def _chunked(text: str, seed: str) -> list[Block]:
    rng = random.Random(seed)
    splitter = BlockSplitter()
    position = 0
    while position < len(text):
        size = rng.randint(1, 8)
        splitter.feed(text[position : position + size])
        position += size
    splitter.close()
    return splitter.blocks




def _shuffled(count: int) -> dict[str, str]:
    """Documents of lines drawn at random from the ones above, so that the constructs
    meet each other in every order."""
    lines = sorted({line for text in [*DOCUMENTS.values(), *EDGE_CASES.values()] for line in text.split("\n")})
    lines += ["", "", "   ", "```", "~~~", "<!--", "-->", "1.", "-", ">", "|---|", "===", "---", "\t- item", "10) ten"]
    rng = random.Random("shuffled")
    return {f"shuffled {n}": "\n".join(rng.choices(lines, k=rng.randint(3, 30))) for n in range(count)}


MARKDOWN = {**DOCUMENTS, **EDGE_CASES, **_shuffled(40), "corpus 3000": corpus.text(3000)}


def test_an_html_comment_is_one_block_as_in_a_whole_document_render() -> None:
    (comment, visible) = split(HIDDEN)
    assert comment.text == "<!--\n\nhidden note\n\n-->" and visible.text == "visible"
    assert RENDERER.block(comment) == []
    assert [strip.text for strip in RENDERER.block(visible)] == [strip.text for strip in RENDERER.markdown(HIDDEN)]


@pytest.mark.parametrize("name", sorted(MARKDOWN))
def test_blocks_render_as_markdown_its_top_level_blocks(name: str) -> None:
    text = MARKDOWN[name]
    expected = _whole_document(text)
    whole = split(text)
    assert _blocks_drawn(whole) == expected
    for seed in range(5):
        assert _chunked(text, f"{name} {seed}") == whole, f"chunks seeded {name!r} {seed}"


def test_the_shared_parser_gives_what_rich_s_own_markdown_gives() -> None:
    """ChatMarkdown sets Markdown's attributes itself to reuse one parser: the same attributes, and
    the same parse, as Rich's own constructor (a Rich that adds an attribute fails here, not on screen)."""
    text = "".join(corpus.tokens(3000)) + "\n\n| a | b |\n|---|---|\n| 1 | ~~2~~ |\n"
    ours, rich_own = ChatMarkdown(text, lambda code, info: code), Markdown(text)
    assert set(vars(rich_own)) <= set(vars(ours))
    assert {name: getattr(ours, name) for name in vars(rich_own) if name != "parsed"} == \
        {name: value for name, value in vars(rich_own).items() if name != "parsed"}
    assert [(t.type, t.tag, t.content) for t in ours.parsed] == [(t.type, t.tag, t.content) for t in rich_own.parsed]
    assert any(t.type == "table_open" for t in ours.parsed)
