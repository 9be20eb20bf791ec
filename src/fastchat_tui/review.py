"""Input handling for ``fastchat review``: inputs in, a review prompt out, nothing else.

Everything here is pure (no terminal, no network) so it can be tested directly:

* :func:`load_input` turns each file (or stdin), read, limited and decoded by
  :mod:`fastchat_tui.inputs` (which refuses binary input with :class:`InputError`) and named by
  :func:`fastchat_tui.project_files.expand`, into an :class:`Attachment`.
* :func:`detect_language` guesses the language from the file name, else from the content;
  :func:`~fastchat_tui.diff.looks_like_diff` recognises unified diffs (``git diff``, ``diff -u``).
* :func:`build_prompt` writes the review prompt: what the input is, what to report and
  how, and every input with line numbers (files) or old/new line numbers (diffs), so the
  model's ``file:line`` references are right.
The size check against the source's context is the session's (:mod:`fastchat_tui.context`):
input is never truncated silently (``--max-lines`` is the explicit way: reading stops after that many lines).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePath

from fastchat_tui.attachment import Attachment, plural
from fastchat_tui.diff import HUNK, diff_files, looks_like_diff
from fastchat_tui.inputs import InputError, InputText

SNIFF_BYTES = 8192
"""How much of the start of a text its language is guessed from."""

_LANG_BY_NAME = {
    "Dockerfile": "dockerfile", "Containerfile": "dockerfile", "Makefile": "makefile", "GNUmakefile": "makefile",
    "CMakeLists.txt": "cmake", "Jenkinsfile": "groovy", "Vagrantfile": "ruby", "Gemfile": "ruby", "Rakefile": "ruby",
    "BUILD": "starlark", "WORKSPACE": "starlark", ".bashrc": "bash", ".zshrc": "zsh", ".profile": "sh",
    "go.mod": "go.mod", "Cargo.lock": "toml", "poetry.lock": "toml",
}

_LANG_BY_SUFFIX = {
    ".py": "python", ".pyi": "python", ".pyw": "python", ".ipynb": "json",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "jsx",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp",
    ".hh": "cpp", ".hpp": "cpp", ".hxx": "cpp", ".m": "objective-c", ".mm": "objective-cpp",
    ".java": "java", ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala", ".groovy": "groovy", ".gradle": "groovy",
    ".cs": "csharp", ".fs": "fsharp", ".vb": "vbnet", ".swift": "swift", ".dart": "dart",
    ".rb": "ruby", ".php": "php", ".pl": "perl", ".pm": "perl", ".lua": "lua", ".r": "r", ".jl": "julia",
    ".ex": "elixir", ".exs": "elixir", ".erl": "erlang", ".hs": "haskell", ".ml": "ocaml", ".mli": "ocaml",
    ".clj": "clojure", ".zig": "zig", ".nim": "nim", ".v": "verilog", ".sv": "systemverilog", ".vhd": "vhdl",
    ".sh": "bash", ".bash": "bash", ".zsh": "zsh", ".fish": "fish", ".ps1": "powershell", ".bat": "batch",
    ".sql": "sql", ".graphql": "graphql", ".proto": "protobuf", ".tf": "hcl", ".hcl": "hcl", ".nix": "nix",
    ".html": "html", ".htm": "html", ".xml": "xml", ".svg": "xml", ".css": "css", ".scss": "scss", ".less": "less",
    ".vue": "vue", ".svelte": "svelte", ".json": "json", ".jsonc": "jsonc", ".yaml": "yaml", ".yml": "yaml",
    ".toml": "toml", ".ini": "ini", ".cfg": "ini", ".conf": "conf", ".env": "dotenv", ".properties": "properties",
    ".md": "markdown", ".rst": "rst", ".tex": "latex", ".txt": "text", ".csv": "csv",
    ".diff": "diff", ".patch": "diff", ".cmake": "cmake", ".mk": "makefile", ".asm": "asm", ".s": "asm",
}

_SHEBANG = (
    ("python", "python"), ("node", "javascript"), ("deno", "typescript"), ("bun", "javascript"),
    ("bash", "bash"), ("zsh", "zsh"), ("fish", "fish"), ("ruby", "ruby"), ("perl", "perl"),
    ("php", "php"), ("lua", "lua"), ("Rscript", "r"), ("sh", "sh"),
)

# Content rules, tried in order when the name says nothing: (pattern, language).
_CONTENT_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.MULTILINE), language)
    for pattern, language in (
        (r"\A<\?php", "php"),
        (r"\A\s*<!DOCTYPE html|\A\s*<html[\s>]", "html"),
        (r"\A\s*<\?xml ", "xml"),
        (r"^package [a-z_][a-z0-9_]*\s*$(?s:.*)^func ", "go"),
        (r"^\s*(pub )?fn \w+[<(]|^use (std|crate)::", "rust"),
        (r"^#include\s*<(iostream|vector|string|memory|map)>|^\s*(template\s*<|namespace \w+|std::)", "cpp"),
        (r"^#include\s*[<\"]", "c"),
        (r"^\s*(public |private )?(final )?class \w+.*\{\s*$(?s:.*)\b(public|private|protected) ", "java"),
        (r"^\s*(def \w+\(.*\)\s*(->.*)?:\s*$|from [\w.]+ import |import \w+(\.\w+)*\s*$|class \w+(\(.*\))?:\s*$)", "python"),
        (r"^\s*(import .* from ['\"]|export (default |const |function |interface |type )|interface \w+ \{)", "typescript"),
        (r"^\s*(const|let|var) \w+ = (require\(|\(|function|async)|^\s*function \w+\(|module\.exports", "javascript"),
        (r"^\s*(SELECT|INSERT INTO|UPDATE|DELETE FROM|CREATE (TABLE|INDEX|VIEW))\b", "sql"),
        (r"^\[[\w.\-\"]+\]\s*$(?s:.*)^[\w\-]+\s*=\s*", "toml"),
        (r"^\s*#{1,6} \S", "markdown"),
        (r"\A(---\s*$|[\w\-]+:(\s|$))", "yaml"),
    )
)



# --------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------


def load_input(read: InputText, name: str, path: str | None = None) -> Attachment:
    """One input, read and decoded by :mod:`fastchat_tui.inputs`, as an :class:`Attachment`."""
    text = read.text.replace("\r\n", "\n")
    diff = looks_like_diff(text) or (path is not None and PurePath(path).suffix in (".diff", ".patch"))
    language = "diff" if diff else detect_language(path or "", text)
    return Attachment(name=name, text=text, size=read.size, language=language, is_diff=diff, warning=read.warning,
                      path=path, cut=read.cut)


def require_content(attachments: Sequence[Attachment]) -> None:
    """Refuse input with nothing in it (an empty pipe, empty files)."""
    if not attachments:
        raise InputError("nothing to review: give files (fastchat review a.py) or pipe input (git diff | fastchat review)")
    if not any(a.text.strip() for a in attachments):
        names = ", ".join(a.name for a in attachments)
        raise InputError(f"nothing to review: {names} {'is' if len(attachments) == 1 else 'are'} empty")


# --------------------------------------------------------------------------------------
# Language and diffs
# --------------------------------------------------------------------------------------


def detect_language(name: str, text: str) -> str | None:
    """The language from the file name (extension or well-known name), else from the content."""
    if name:
        pure = PurePath(name)
        if pure.name in _LANG_BY_NAME:
            return _LANG_BY_NAME[pure.name]
        if pure.name.startswith("Dockerfile"):
            return "dockerfile"
        if pure.name.startswith(".env"):
            return "dotenv"
        if language := _LANG_BY_SUFFIX.get(pure.suffix.lower()):
            return language
    head = text[:SNIFF_BYTES]
    first = head.split("\n", 1)[0]
    if first.startswith("#!"):
        words = first[2:].replace("/", " ").split()
        for word in reversed(words):
            for needle, language in _SHEBANG:
                if word == needle or re.fullmatch(re.escape(needle) + r"[\d.]*", word):
                    return language
    if looks_like_diff(head):
        return "diff"
    stripped = head.lstrip()
    if stripped[:1] in "{[" and stripped:
        import json

        try:
            json.loads(text)
            return "json"
        except ValueError:
            pass
    for pattern, language in _CONTENT_RULES:
        if pattern.search(head):
            return language
    return None


# --------------------------------------------------------------------------------------
# Numbering
# --------------------------------------------------------------------------------------


def number_lines(text: str, start: int = 1) -> str:
    """Every line prefixed with its number, right-aligned: ``  9 | code``."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    width = len(str(start + max(len(lines) - 1, 0)))
    return "\n".join(f"{n:>{width}} | {line}" if line else f"{n:>{width}} |" for n, line in enumerate(lines, start))


def number_diff(text: str) -> str:
    """A unified diff with each hunk line prefixed by its old and new line numbers.

    ``  12   14 |  unchanged``, ``  13      | -removed``, ``       15 | +added``; header
    lines (``diff --git``, ``---``, ``+++``, ``@@``) are kept as they are, unnumbered.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    biggest = 1
    for line in lines:
        if match := HUNK.match(line):
            old_start, old_len, new_start, new_len = (int(g) if g else 1 for g in match.groups())
            biggest = max(biggest, old_start + old_len, new_start + new_len)
    width = len(str(biggest))
    blank = " " * width
    out: list[str] = []
    old = new = 0
    in_hunk = False
    for line in lines:
        if match := HUNK.match(line):
            old, new = int(match.group(1)), int(match.group(3))
            in_hunk = True
            out.append(line)
            continue
        if in_hunk and line.startswith("+") and not line.startswith("+++ "):
            out.append(f"{blank} {new:>{width}} | {line}")
            new += 1
        elif in_hunk and line.startswith("-") and not line.startswith("--- "):
            out.append(f"{old:>{width}} {blank} | {line}")
            old += 1
        elif in_hunk and (line.startswith(" ") or line == ""):
            out.append(f"{old:>{width}} {new:>{width}} | {line}")
            old += 1
            new += 1
        else:
            if not line.startswith("\\"):
                in_hunk = False
            out.append(line)
    return "\n".join(out)


# --------------------------------------------------------------------------------------
# The prompt
# --------------------------------------------------------------------------------------

LANGUAGE_NAMES = {
    "python": "Python", "javascript": "JavaScript", "typescript": "TypeScript", "tsx": "TypeScript (TSX)",
    "jsx": "JavaScript (JSX)", "go": "Go", "rust": "Rust", "c": "C", "cpp": "C++", "csharp": "C#",
    "java": "Java", "kotlin": "Kotlin", "ruby": "Ruby", "php": "PHP", "bash": "Bash", "sh": "shell",
    "sql": "SQL", "html": "HTML", "css": "CSS", "json": "JSON", "yaml": "YAML", "toml": "TOML",
    "markdown": "Markdown", "dockerfile": "Dockerfile", "makefile": "Makefile", "swift": "Swift",
    "dotenv": "dotenv", "text": "plain text",
}


def language_name(language: str | None) -> str:
    if not language:
        return "unknown language"
    return LANGUAGE_NAMES.get(language, language)


def _fence(body: str) -> str:
    """A backtick fence longer than any run of backticks in ``body``."""
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    return "`" * max(3, longest + 1)


def _describe(attachment: Attachment) -> str:
    if attachment.is_diff:
        files = diff_files(attachment.text)
        what = f"a unified diff ({plural(attachment.lines, 'line')})"
        if files:
            shown = ", ".join(files[:20]) + (f" and {len(files) - 20} more" if len(files) > 20 else "")
            what += f" changing {plural(len(files), 'file')}: {shown}"
        return f"{attachment.name}: {what}"
    lines = (
        f"first {plural(attachment.lines, 'line')} (--max-lines)" if attachment.cut
        else plural(attachment.lines, "line")
    )
    return f"{attachment.name}: {language_name(attachment.language)}, {lines}"


def build_prompt(attachments: Sequence[Attachment], focus: str | None = None) -> str:
    """The review prompt: what the input is, what to report and how, then every input, numbered."""
    has_diff = any(a.is_diff for a in attachments)
    has_file = any(not a.is_diff for a in attachments)
    if has_diff and not has_file:
        intro = "Review the change in the unified diff below as a senior engineer would review a pull request."
    elif len(attachments) == 1:
        intro = "Review the file below as a senior engineer would in a careful code review."
    else:
        intro = f"Review the {len(attachments)} inputs below as a senior engineer would in a careful code review."
    parts = [intro, "", "Input:"]
    parts += [f"- {_describe(a)}" for a in attachments]
    if any(a.cut for a in attachments):
        parts.append("Some files were cut to their first lines (--max-lines); do not guess about the lines not shown.")
    if focus and focus.strip():
        parts += ["", f"The user asks you to focus on: {focus.strip()}"]
    parts += ["", "How the input is numbered:"]
    if has_file:
        parts.append(
            '- Each line of a file starts with its line number and " | " (e.g. "  42 | return x"); '
            "the prefix is not part of the code."
        )
    if has_diff:
        parts.append(
            "- Each line of a diff hunk starts with its line number in the old file, its line number in the new "
            'file, and " | ", then the diff marker: "+" added, "-" removed, " " unchanged '
            '(e.g. "  41   43 |  x = 1", "       44 | +y = 2"). Cite the new-file number for added and unchanged '
            "lines and the old-file number for removed lines. Review what the change does; comment on unchanged "
            "lines only when the change breaks them."
        )
    parts.append("- Cite lines as `path:line` or `path:start-end`, using these numbers exactly.")
    parts += [
        "",
        "Write the review in Markdown:",
        "1. **Summary**: two or three sentences on what the code does and your overall verdict.",
        "2. **Findings**, most severe first. For each one:",
        "   - a heading line: **severity** · `path:line` · a one-line title. Severity is one of: "
        "critical (security hole, data loss, crash on normal input), high (wrong result or broken behaviour), "
        "medium (a bug in edge cases, a race, a resource leak, missing error handling), "
        "low (clarity, naming, small performance or style points);",
        "   - what is wrong and why it matters, concretely: the input or sequence of events that triggers it "
        "and what happens then;",
        "   - the fix, as a fenced code block in the file's language or as a ```diff block against the lines shown.",
        "3. **Tests**: the tests that would catch the critical and high findings, briefly.",
        "",
        "Report real problems you can point to in the lines shown. Do not invent issues, do not pad the review "
        "with generic advice, and say so when something depends on code that is not shown. If the code is "
        "sound, say that in the summary and keep the findings short.",
    ]
    for attachment in attachments:
        body = number_diff(attachment.text) if attachment.is_diff else number_lines(attachment.text)
        if not attachment.text.strip():
            body = "(empty)"
        fence = _fence(body)
        tag = "diff" if attachment.is_diff else (attachment.language or "")
        parts += ["", f"### {_describe(attachment)}", f"{fence}{tag}", body, fence]
    return "\n".join(parts) + "\n"


def _display_name(attachment: Attachment) -> str:
    """A piped diff is named by the files it changes; anything else by its name."""
    if attachment.is_diff and attachment.path is None:
        files = diff_files(attachment.text)
        if files:
            return "the diff of " + ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        return "the diff"
    return attachment.name


def shown_request(attachments: Sequence[Attachment], focus: str | None = None) -> str:
    """The short user message the transcript shows instead of the whole prompt."""
    names = [_display_name(a) for a in attachments]
    what = names[0] if len(names) == 1 else f"{len(names)} inputs ({', '.join(names[:5])}{', …' if len(names) > 5 else ''})"
    text = f"Review {what}"
    if focus and focus.strip():
        text += f": {focus.strip()}"
    return text

