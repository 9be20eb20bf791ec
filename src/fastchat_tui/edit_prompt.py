"""What an edit turn asks the model for: the edit format, chosen by file size and model, and the prompt that
spells that format out (a precise spec and one example), so the reply is one :func:`fastchat_tui.edits.find_changes`
reads.

The three formats, and when each is asked for (:func:`choose_form`):

* ``whole``: every changed file written out in full. The most reliable for any model, and at 1,500 tokens/s a
  300-line file streams in about 2 s; asked for while every file has at most :data:`WHOLE_MAX_LINES` lines, they
  hold :data:`WHOLE_MAX_BYTES` at most together, and rewriting them fits the reply cap (``max_tokens``).
* ``search_replace``: aider-style SEARCH/REPLACE blocks, for larger files: only the changed lines travel, and a
  block is matched by its text, not by line numbers that models get wrong. What most models write reliably.
* ``diff``: a unified diff, for larger files and models known to write unified diffs well
  (:data:`DIFF_MODELS`, the ones aider asks for unified diffs), which are the most compact.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from fastchat_tui.attachment import Attachment, plural
from fastchat_tui.context import BYTES_PER_TOKEN
from fastchat_tui.review import fence_for, language_name

Form = Literal["whole", "search_replace", "diff"]
FORMS: tuple[Form, ...] = ("whole", "search_replace", "diff")

WHOLE_MAX_LINES = 400
"""The longest file (in lines) asked for whole: about 4,000 tokens to write out, under 3 s at 1,500 tokens/s."""
WHOLE_MAX_BYTES = 24_000
"""The most bytes of files, together, asked for whole (about 8,000 tokens: a common cap on one reply)."""
WHOLE_REPLY_SHARE = 1.25
"""A whole-file reply is about the files' size plus this share for what changes and the fences around it."""
DIFF_MODELS = re.compile(r"gpt-4-turbo|gpt-4\.1|gpt-5|codex", re.IGNORECASE)
"""Models asked for unified diffs when their files are too large to write whole; others get SEARCH/REPLACE."""
COMMIT_LINE = re.compile(r"^[ \t]*(?:\*\*)?Commit message:(?:\*\*)?[ \t]*`?(.+?)`?[ \t]*$", re.MULTILINE)
"""The line that gives the commit message, when one was asked for (:func:`commit_message`)."""


def choose_form(files: Sequence[Attachment], model: str | None, max_tokens: int | None) -> Form:
    """The edit format for ``files`` sent to ``model`` with a reply cap of ``max_tokens`` (``None``: none known);
    see the module docstring."""
    size = sum(len(a.text.encode("utf-8", "surrogatepass")) for a in files)
    fits_reply = max_tokens is None or size / BYTES_PER_TOKEN * WHOLE_REPLY_SHARE <= max_tokens
    if all(a.lines <= WHOLE_MAX_LINES for a in files) and size <= WHOLE_MAX_BYTES and fits_reply:
        return "whole"
    return "diff" if model and DIFF_MODELS.search(model) else "search_replace"


_SPECS: dict[Form, str] = {
    "whole": """\
Reply with the complete new text of every file you change, each in one fenced code block whose info string is the
language and then `path=` with the file's path as listed above. Write the whole file, from its first line to its
last: leave no line out and elide nothing (no "...", no "rest unchanged"). Leave out the files you do not change.
Example, for a file `src/greet.py`:

```python path=src/greet.py
def greet(name: str) -> str:
    return f"Hello, {name}!"
```""",
    "search_replace": """\
Reply with SEARCH/REPLACE blocks. For each file you change, write its path as listed above on a line of its own,
then a fenced code block holding one or more blocks, each made of: a line `<<<<<<< SEARCH`, the lines to find, a
line `=======`, the lines to put in their place, and a line `>>>>>>> REPLACE`. The SEARCH lines must match lines
of the file exactly, character for character (indentation, comments and blank lines too), and be just long enough
to match in one place only. Prefer several small blocks to one large one; blocks apply in order. To create a new
file, leave SEARCH empty. Example, for a file `src/greet.py`:

src/greet.py
```python
<<<<<<< SEARCH
def greet(name):
    return "Hello " + name
=======
def greet(name: str) -> str:
    return f"Hello, {name}!"
>>>>>>> REPLACE
```""",
    "diff": """\
Reply with one unified diff in a ```diff fenced block, as `git diff` writes it: for each file you change a line
`--- a/PATH` and a line `+++ b/PATH` (PATH as listed above), then its hunks. A hunk starts with
`@@ -START,COUNT +START,COUNT @@` (the first line and the number of lines of the hunk in the file before and after
the change); every line in it starts with one character: a space for a line kept, `-` for a line removed, `+` for
a line added. Give three lines of unchanged context around each change, copied exactly from the file. Example, for
a file `src/greet.py`:

```diff
--- a/src/greet.py
+++ b/src/greet.py
@@ -1,2 +1,2 @@
-def greet(name):
-    return "Hello " + name
+def greet(name: str) -> str:
+    return f"Hello, {name}!"
```""",
}

FORM_NAMES: dict[Form, str] = {
    "whole": "whole files", "search_replace": "SEARCH/REPLACE blocks", "diff": "a unified diff",
}


def build_prompt(files: Sequence[Attachment], instruction: str, form: Form, *, commit: bool = False) -> str:
    """The edit prompt: the instruction, the files by name, how to write the change (``form``), the rules, then
    every file's text. ``commit``: ask for a commit message too (:func:`commit_message` reads it)."""
    parts = ["Change the files below as the instruction says.", "", f"Instruction: {instruction.strip()}", "",
             "Files (paths relative to the project root):"]
    parts += [f"- {a.name}: {_described(a)}" for a in files]
    after = ("after it, write one line `Commit message: ` and a git commit subject for the change (imperative, at "
             "most 72 characters)." if commit else "write nothing after it.")
    parts += ["", "How to write the change:", _SPECS[form], "",
              "Rules: change only what the instruction asks for and keep everything else exactly as it is (formatting, "
              f"comments, blank lines). Before the change, say in one or two sentences what you change; {after}"]
    for attachment in files:
        fence = fence_for(attachment.text)
        body = attachment.text if attachment.text.endswith("\n") or not attachment.text else attachment.text + "\n"
        parts += ["", f"### {attachment.name}", f"{fence}{attachment.language or ''}", body.removesuffix("\n"), fence]
    return "\n".join(parts) + "\n"


def retry_prompt(message: str, form: Form) -> str:
    """The follow-up turn after a reply whose change could not be planned: the error as it is, and the ask again."""
    return (f"Your change could not be applied: {message}\n\nNothing was changed: the files are still as I first sent "
            f"them. Write the whole change again as {FORM_NAMES[form]}, in the format I described, matching the files "
            "exactly as they are.\n")


def commit_message(reply: str) -> str | None:
    """The commit message the reply gave on its ``Commit message:`` line (the last one), if any."""
    found = COMMIT_LINE.findall(reply)
    return found[-1].strip() or None if found else None


def _described(attachment: Attachment) -> str:
    if not attachment.text:
        return "a new file (it does not exist yet)"
    return f"{language_name(attachment.language)}, {plural(attachment.lines, 'line')}"
