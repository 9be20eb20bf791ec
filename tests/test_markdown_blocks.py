"""Tests for the incremental Markdown block splitter."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from fastchat_tui.ui.markdown_blocks import Block, BlockSplitter

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import corpus  # noqa: E402


def split(text: str) -> list[Block]:
    splitter = BlockSplitter()
    return splitter.feed(text) + splitter.close()


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
def test_finished_blocks_and_tail_cover_every_prefix(name: str) -> None:
    text = DOCUMENTS[name].replace("\r", "")
    splitter = BlockSplitter()
    for end in range(1, len(text) + 1):
        splitter.feed(text[end - 1])
        shown = "\n".join([block.text for block in splitter.blocks] + [splitter.tail_text()])
        assert shown.split() == text[:end].split()


def test_each_line_is_processed_once_however_text_is_chunked() -> None:
    class CountingSplitter(BlockSplitter):
        lines = 0

        def _line(self, line: str, finished: list[Block]) -> None:
            self.lines += 1
            super()._line(line, finished)

    text = corpus.text(3000)
    splitter = CountingSplitter()
    for token in corpus.tokens(3000):
        splitter.feed(token)
    assert splitter.lines == text.count("\n")


def test_corpus_pieces_join_to_the_reply() -> None:
    pieces = corpus.tokens(10_000)
    assert len(pieces) == 10_000
    assert "".join(pieces) == corpus.text(10_000)
    kinds = {block.kind for block in split(corpus.text(10_000))}
    assert kinds == {"heading", "paragraph", "list", "fence"}
    assert 3 <= sum(len(piece) for piece in pieces) / len(pieces) <= 5
