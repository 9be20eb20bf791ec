"""``fastchat review`` input handling: decoding, refusals, languages, diffs, numbering, the prompt, the size check."""

from __future__ import annotations

import asyncio
import io

import pytest

from fastchat_tui import review
from fastchat_tui.attachment import Attachment
from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.context import InputTooLarge, check_fits, context_limit, estimate_tokens
from fastchat_tui.diff import diff_files, looks_like_diff
from fastchat_tui.inputs import read
from fastchat_tui.review import (
    InputError,
    build_prompt,
    detect_language,
    number_diff,
    number_lines,
    require_content,
)
from fastchat_tui.routing import Decision, Request, Route
from fastchat_tui.session import DefaultRouter, Session

PY = b"import os\n\n\ndef run(cmd):\n    return os.system(cmd)\n"


def load_input(data: bytes, name: str, path: str | None = None) -> Attachment:
    """The bytes as ``fastchat review`` takes them: through the one bounded reader, then as an attachment."""
    return review.load_input(read(io.BytesIO(data).read, name, len(data) + 1), name, path)


GIT_DIFF = b"""\
diff --git a/src/app.py b/src/app.py
index 3b18e51..a9c4f2d 100644
--- a/src/app.py
+++ b/src/app.py
@@ -10,5 +10,6 @@ def load(path):
     with open(path) as f:
-        data = f.read()
+        data = f.read(1024)
+        check(data)
 
     return data
diff --git a/README.md b/README.md
new file mode 100644
--- /dev/null
+++ b/README.md
@@ -0,0 +1,2 @@
+# app
+Reads files.
"""

PLAIN_DIFF = b"""\
--- old/util.c\t2024-01-01 10:00:00
+++ new/util.c\t2024-01-02 10:00:00
@@ -1,3 +1,3 @@
 int f(void) {
-  return 1;
+  return 2;
 }
"""


def source(name: str = "s", kind: str = "openai", context: int | None = 8192) -> SourceConfig:
    return SourceConfig(name=name, kind=kind, base_url="http://127.0.0.1:9/v1", model="m", context_tokens=context)


# -- reading and decoding ------------------------------------------------------------------


def test_python_file_is_text_with_language_size_and_lines():
    a = load_input(PY, "app.py", "app.py")
    assert (a.language, a.is_diff, a.size, a.lines, a.warning) == ("python", False, len(PY), 5, None)
    assert a.label == f"app.py · python · {len(PY)} B · 5 lines"


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "PNG image"),
        (b"\x1f\x8b\x08\x00\x00\x00\x00\x00", "gzip archive"),
        (b"PK\x03\x04\x14\x00", "ZIP archive"),
        (b"GIF89a\x01\x00", "GIF image"),  # no NUL byte in the first bytes: found by its signature
        (b"%PDF-1.7\n%\xe2\xe3", "PDF"),
        (b"text at first\n" + b"\x00" * 4 + b"then binary", "NUL bytes"),
    ],
)
def test_binary_input_is_refused_with_what_it_is(data, what):
    with pytest.raises(InputError) as info:
        load_input(data, "blob.bin", "blob.bin")
    message = str(info.value)
    assert message.startswith("blob.bin is ") and what in message and "not text" in message


def test_non_utf8_is_decoded_with_replacement_and_a_warning():
    a = load_input("x = 1\nname = 'Jos\xe9'\n".encode("latin-1"), "legacy.py", "legacy.py")
    assert a.text == "x = 1\nname = 'Jos\ufffd'\n"
    assert a.warning is not None
    assert "legacy.py is not valid UTF-8" in a.warning and "line 2" in a.warning and "1 undecodable" in a.warning


def test_utf16_with_bom_and_utf8_bom_and_crlf_are_text():
    assert load_input("print('hi')\n".encode("utf-16"), "a.py", "a.py").text == "print('hi')\n"
    a = load_input(b"\xef\xbb\xbfx = 1\r\ny = 2\r\n", "b.py", "b.py")
    assert (a.text, a.warning, a.lines) == ("x = 1\ny = 2\n", None, 2)


def test_empty_input_is_refused():
    with pytest.raises(InputError, match="stdin is empty"):
        require_content([load_input(b"", "stdin")])
    with pytest.raises(InputError, match=r"a\.py, b\.py are empty"):
        require_content([load_input(b"\n", "a.py", "a.py"), load_input(b"  \n", "b.py", "b.py")])
    require_content([load_input(b"", "a.py", "a.py"), load_input(PY, "b.py", "b.py")])


# -- languages and diffs ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "language"),
    [
        ("src/main.rs", "", "rust"),
        ("Dockerfile", "", "dockerfile"),
        ("Dockerfile.prod", "", "dockerfile"),
        ("web/App.TSX", "", "tsx"),
        (".env.local", "", "dotenv"),
        ("", "#!/usr/bin/env python3\nprint(1)\n", "python"),
        ("", "#!/bin/bash\necho hi\n", "bash"),
        ("", "package main\n\nimport \"fmt\"\n\nfunc main() {}\n", "go"),
        ("", "#include <stdio.h>\nint main(void) { return 0; }\n", "c"),
        ("", "from typing import Any\n\nx: Any = 1\n", "python"),
        ("", "const fs = require('fs');\n", "javascript"),
        ("", '{"a": [1, 2]}', "json"),
        ("", "<?php echo 1;", "php"),
        ("", "just some words\n", None),
        ("notes", "just some words\n", None),
    ],
)
def test_language_from_the_name_else_the_content(name, text, language):
    assert detect_language(name, text) == language


def test_diffs_are_detected_as_diffs_with_the_files_they_change():
    git = load_input(GIT_DIFF, "stdin")
    assert git.is_diff and git.language == "diff" and git.kind == "diff"
    assert diff_files(git.text) == ["src/app.py", "README.md"]
    plain = load_input(PLAIN_DIFF, "stdin")
    assert plain.is_diff and diff_files(plain.text) == ["new/util.c"]
    assert not looks_like_diff("--- a heading\n+++ not a diff\n")
    assert load_input(b"anything\n", "fix.patch", "fix.patch").is_diff


# -- numbering ----------------------------------------------------------------------------------


def test_number_lines_aligns_numbers_and_keeps_blank_lines():
    text = "".join(f"line {i}\n" for i in range(1, 11)).replace("line 5", "")
    numbered = number_lines(text).split("\n")
    assert numbered[0] == " 1 | line 1" and numbered[4] == " 5 |" and numbered[9] == "10 | line 10"
    assert len(numbered) == 10


def test_number_diff_gives_old_and_new_line_numbers():
    numbered = number_diff(GIT_DIFF.decode()).split("\n")
    assert "diff --git a/src/app.py b/src/app.py" in numbered and "@@ -10,5 +10,6 @@ def load(path):" in numbered
    assert "10 10 |      with open(path) as f:" in numbered
    assert "11    | -        data = f.read()" in numbered
    assert "   11 | +        data = f.read(1024)" in numbered
    assert "   12 | +        check(data)" in numbered
    assert "12 13 |  " in numbered
    assert "13 14 |      return data" in numbered
    assert "    1 | +# app" in numbered and "    2 | +Reads files." in numbered


# -- the prompt ------------------------------------------------------------------------------------


def test_prompt_for_one_file_says_what_it_is_numbers_it_and_asks_for_findings():
    prompt = build_prompt([load_input(PY, "app.py", "app.py")], "focus on security")
    assert "- app.py: Python, 5 lines" in prompt
    assert "focus on: focus on security" in prompt
    assert "```python\n1 | import os\n2 |\n3 |\n4 | def run(cmd):\n5 |     return os.system(cmd)\n```" in prompt
    for wanted in ("severity", "critical", "`path:line`", "```diff", "Summary", "Findings"):
        assert wanted in prompt


def test_prompt_for_a_diff_and_for_two_files():
    diff_prompt = build_prompt([load_input(GIT_DIFF, "stdin")])
    assert "unified diff (18 lines) changing 2 files: src/app.py, README.md" in diff_prompt
    assert "old file" in diff_prompt and "new-file number" in diff_prompt
    assert "   11 | +        data = f.read(1024)" in diff_prompt
    two = build_prompt([load_input(PY, "a.py", "a.py"), load_input(b"let x = 1;\n", "b.js", "b.js")])
    assert "Review the 2 inputs" in two and "- a.py: Python, 5 lines" in two and "- b.js: JavaScript, 1 line" in two
    assert "```javascript\n1 | let x = 1;\n```" in two


def test_fence_is_longer_than_backticks_in_the_input():
    prompt = build_prompt([load_input(b"doc = '''\n```py\nx\n```\n'''\n", "a.md", "a.md")])
    assert "\n````markdown\n" in prompt and prompt.rstrip().endswith("````")


def test_max_lines_is_explicit_in_label_and_prompt():
    data = b"".join(b"x%d = 1\n" % i for i in range(100))
    a = review.load_input(read(io.BytesIO(data).read, "big.py", len(data), max_lines=10), "big.py", "big.py")
    assert (a.lines, a.cut) == (10, True) and "first 10 lines" in a.label
    prompt = build_prompt([a])
    assert "first 10 lines (--max-lines)" in prompt and "--max-lines" in prompt and "10 | x9 = 1" in prompt
    assert "x10 = 1" not in prompt


# -- size against the context -------------------------------------------------------------------


def test_estimate_is_conservative_bytes_per_token():
    assert estimate_tokens("a" * 300) == 100
    assert estimate_tokens("é" * 3) == 2  # 6 UTF-8 bytes


def test_check_fits_keeps_room_for_the_reply_and_names_bigger_sources():
    small, big = source("small", context=4096), source("big", context=131072)
    check_fits(3072, small)  # 4096 - 1024 kept for the reply
    with pytest.raises(InputTooLarge) as info:
        check_fits(3073, small, [small, big])
    message = str(info.value)
    assert (info.value.tokens, info.value.limit) == (3073, 4096)
    assert "about 3,073 tokens" in message and "4,096 tokens" in message and "1,024 kept for the reply" in message
    assert "--max-lines" in message and "fewer files" in message and "-s big (131,072)" in message
    with pytest.raises(InputTooLarge):
        check_fits(3000, small, max_tokens=2000)  # max_tokens reserves more


def test_context_defaults_by_kind():
    from fastchat_tui.context import AUTO_CTX_MAX

    assert context_limit(source(kind="ollama", context=None)) == AUTO_CTX_MAX
    assert context_limit(source(kind="openai", context=None)) is None
    check_fits(10**7, source(kind="openai", context=None))  # unknown limit: the server decides, loudly


# -- routing hints ------------------------------------------------------------------------------------


def test_session_passes_the_review_task_and_attachments_to_the_router():
    seen: list[dict] = []
    config = Config(sources={"a": source("a"), "b": source("b")}, default_source="auto")

    class Router(DefaultRouter):
        def decide(self, request: Request, chosen: str | None = None) -> Decision:
            seen.append({"attachments": request.attachments, "hint": request.hint, **({"chosen": chosen} if chosen else {})})
            return Decision(Route(chosen or "a", "test router", request.hint or "chat"))

    session = Session(config, router=Router(config))
    attachments = [Attachment("x.py", "x = 1\n", 6)]
    assert session.route("p", task="review", attachments=attachments).task == "review"
    assert seen[-1]["hint"] == "review" and seen[-1]["attachments"][0].name == "x.py"
    session.route("p")
    assert seen[-1] == {"attachments": (), "hint": None}
    assert session.route("p", "b", task="review") == Route("b", "test router", "review")
    assert seen[-1]["chosen"] == "b"
    asyncio.run(session.aclose())


def test_the_transcript_shows_a_short_request_not_the_prompt():
    assert review.shown_request([load_input(PY, "app.py", "app.py")], " focus on security ") == "Review app.py: focus on security"
    assert review.shown_request([load_input(GIT_DIFF, "stdin")]) == "Review the diff of src/app.py, README.md"
    two = [load_input(PY, "a.py", "a.py"), load_input(PY, "b.py", "b.py")]
    assert review.shown_request(two) == "Review 2 inputs (a.py, b.py)"


async def test_attachments_view_is_collapsed_with_labels_and_expands_to_the_text():
    from textual.app import App
    from textual.widgets import Collapsible

    from fastchat_tui.ui.widgets.attachments import AttachmentsView

    legacy = load_input("x = 'Jos\xe9'\n".encode("latin-1"), "legacy.py", "legacy.py")
    view = AttachmentsView([load_input(PY, "app.py", "app.py"), legacy])

    class Host(App[None]):
        def compose(self):
            yield view

    async with Host().run_test(size=(100, 20)) as pilot:
        titles = [c.title for c in view.query(Collapsible)]
        assert titles == [f"📎 app.py · python · {len(PY)} B · 5 lines", "📎 legacy.py · python · 11 B · 1 line"]
        assert all(c.collapsed for c in view.query(Collapsible))
        assert str(view.query_one(".attachments--summary").render()) == f"2 files attached · {len(PY) + 11} B · 6 lines"
        first = view.query(Collapsible).first()
        first.collapsed = False
        await pilot.pause()
        assert "return os.system(cmd)" in str(first.query_one(".attachments--text").render())
        warning = view.query(Collapsible).last().query_one(".attachments--warning")
        assert "not valid UTF-8" in str(warning.render())


def test_attachments_view_snapshot(snap_compare) -> None:
    """``fastchat review app.py legacy.py`` as the chat opens: the summary, one file expanded, the other's warning."""
    from textual.widgets import Collapsible

    from fastchat_tui.ui.app import FastchatApp

    legacy = load_input("x = 'Jos\xe9'\n".encode("latin-1"), "legacy.py", "legacy.py")
    local = SourceConfig("local", "ollama", "http://127.0.0.1:9", "test-model:latest", tags=["local"])
    app = FastchatApp(Config(sources={"local": local}), probe_on_start=False,
                      attachments=[load_input(PY, "app.py", "app.py"), legacy])

    async def expand(pilot) -> None:
        app.query(Collapsible).first().collapsed = False
        app.query(Collapsible).last().collapsed = False
        app.prompt_input.cursor_blink = False  # no phase of a blink in the picture
        await pilot.pause()

    assert snap_compare(app, run_before=expand, terminal_size=(100, 30))


def test_a_source_with_no_known_context_is_named_as_an_option():
    """``check_fits`` raised TypeError when another source had no known context size."""
    small, unknown = source("small", context=4096), source("open", kind="openai", context=None)
    with pytest.raises(InputTooLarge) as info:
        check_fits(5000, small, [small, unknown])
    assert "-s open (no known limit)" in str(info.value)
