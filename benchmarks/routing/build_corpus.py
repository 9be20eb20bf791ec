"""Build ``corpus.jsonl``, the labelled routing corpus, from the hand-written pieces in :mod:`pieces` and :mod:`snippets`.

Each row: ``text``, ``task`` (chat, completion, long or review), ``language`` (the words' language, or ``code``
for a prompt with no words), ``reason`` (one line), ``group`` (the template it came from) and ``split``.
The split is by group, and the snippets, topics, apps and functions are split the same way, so no test
prompt shares its template or its pasted code with a training prompt. The misses quoted in issues 29 and 25
are test rows, verbatim. The coverage phrasings (:data:`pieces.COVERAGE`) are training rows only, filled
last from their own generator, so adding them leaves every other row, and so the held-out split, as it was.

Usage: ``python benchmarks/routing/build_corpus.py`` (deterministic: the same pieces give the same file).
"""

from __future__ import annotations

import difflib
import json
import random
import re
import zlib
from pathlib import Path

from pieces import APPS, COVERAGE, DATA, DOCS, FUNCS, QUOTED, TEMPLATES, TOPICS, TRACES
from snippets import SNIPPETS, cut

HERE = Path(__file__).parent
FILLS = 8  # rows per template (fewer when its slots allow fewer distinct prompts); twice as many for pasted code
TEST_SHARE = 5  # one template group in five is held out


def is_test(key: str) -> bool:
    return zlib.crc32(key.encode()) % TEST_SHARE == 0


def halves(items: list, key: str) -> tuple[list, list]:
    """(train, test) parts of a list of pieces: every fourth piece is for testing."""
    return [x for i, x in enumerate(items) if i % 4 != 1], [x for i, x in enumerate(items) if i % 4 == 1]


COMMENT = {"Python": "#", "Ruby": "#", "Bash": "#", "YAML": "#", "R": "#", "Elixir": "#", "Dockerfile": "#",
           "Lua": "--", "Haskell": "--", "SQL": "--"}


def todo(language: str, code: str) -> str:
    """``code`` with its middle lines replaced by a TODO comment, as users paste a stub."""
    lines = code.rstrip("\n").split("\n")
    start, end = len(lines) // 3, max(len(lines) // 3 + 1, 2 * len(lines) // 3)
    indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())] or "    "
    mark = COMMENT.get(language, "//")
    return "\n".join([*lines[:start], f"{indent}{mark} TODO: handle this part", *lines[end:]]) + "\n"


def changed(code: str, rng: random.Random) -> str:
    lines = code.rstrip("\n").split("\n")
    index = rng.randrange(1, max(2, len(lines) - 1))
    line = lines[index]
    for old, new in (("==", "!="), ("0", "1"), ("+", "-"), ("<", "<="), ("return", "return"), ("(", "( ")):
        if old in line and old != new:
            lines[index] = line.replace(old, new, 1)
            break
    else:
        lines[index] = line + "  "
    indent = line[: len(line) - len(line.lstrip())]
    lines.insert(index, indent + rng.choice(["log(\"here\")", "count += 1", "cache.clear()", "retries = 0", "print(value)"]))
    return "\n".join(lines) + "\n"


def diff(name: str, language: str, code: str, rng: random.Random, *, headers: bool) -> str:
    path = f"src/{name.lower()}.{language.lower()[:3]}"
    lines = list(difflib.unified_diff(code.splitlines(True), changed(code, rng).splitlines(True), f"a/{path}", f"b/{path}"))
    text = "".join(lines)
    if headers:
        git = f"diff --git a/{path} b/{path}\nindex 3b18e51..a9c4f2d 100644\n"
        return git + text if rng.random() < 0.6 else f"```diff\n{text}```"
    hunks = "".join(lines[2:])
    return hunks if rng.random() < 0.5 else f"```diff\n{hunks}```"


def fill(template: str, rng: random.Random, pieces: dict, lang: str) -> str:
    language, name, code = rng.choice(pieces["snippets"])
    if "{cut}" in template and "{plang}" not in template and rng.random() < 0.3:
        language, name, code = rng.choice([s for s in pieces["snippets"] if s[0] in ("Python", "JavaScript", "TypeScript", "Go")])
    values = {
        "plang": language, "plang_lower": language.lower(),
        "topic": rng.choice(pieces["topics"]), "app": rng.choice(pieces["apps"].get(lang) or pieces["apps"]["en"]),
        "func": rng.choice(pieces["funcs"].get(lang) or pieces["funcs"]["en"]),
    }
    if "{code}" in template:
        values["code"] = code
    if "{cut}" in template or "{cut_tail}" in template:
        values["cut"] = cut(code, rng.choice([0.35, 0.5, 0.65, 0.8]))
        values["cut_tail"] = "\n".join(values["cut"].split("\n")[-2:]).strip()
    if "{todo}" in template:
        values["todo"] = todo(language, code)
    if "{diff}" in template:
        values["diff"] = diff(name, language, code, rng, headers=True)
    if "{hunks}" in template:
        values["hunks"] = diff(name, language, code, rng, headers=False)
    if "{trace}" in template:
        values["trace"] = rng.choice(pieces["traces"])
    if "{doc}" in template:
        values["doc"] = rng.choice(list(DOCS.values()))
    if "{data}" in template:
        values["data"] = rng.choice(DATA)
    return template.format(**values)


def words_of(template: str) -> str:
    return re.sub(r"\{\w+\}|```\w*|[\s\n^:]+", "", template)


def rows() -> list[dict]:
    rng = random.Random(29)
    train_pieces: dict = {}
    test_pieces: dict = {}
    for key, items in (("snippets", SNIPPETS), ("topics", TOPICS), ("traces", TRACES)):
        train_pieces[key], test_pieces[key] = halves(items, key)
    for key, table in (("apps", APPS), ("funcs", FUNCS)):
        train_pieces[key], test_pieces[key] = {}, {}
        for lang, items in table.items():
            train_pieces[key][lang], test_pieces[key][lang] = halves(items, key)
    out: list[dict] = []
    seen: set[str] = set()
    for lang, templates in TEMPLATES.items():
        for index, (task, reason, template) in enumerate(templates):
            group = f"{lang}:{index}"
            split = "test" if is_test(group) else "train"
            pieces = test_pieces if split == "test" else train_pieces
            language = lang if words_of(template) else "code"
            for _ in range(FILLS * 2 if re.search(r"\{(?:code|cut|todo|diff|hunks)\}", template) else FILLS):
                text = fill(template, rng, pieces, lang)
                if text in seen:
                    continue
                seen.add(text)
                out.append({"text": text, "task": task, "language": language, "reason": reason, "group": group,
                            "split": split})
    for index, (task, text, slot) in enumerate(QUOTED):
        kind, _, which = slot.partition(":")
        snippets = [s for s in SNIPPETS if which in (s[0], s[1])] if which else test_pieces["snippets"]
        language, name, code = rng.choice(snippets)
        body = {"": "", "code": code, "cut": cut(code), "todo": todo(language, code),
                "hunks": diff(name, language, code, rng, headers=False), "doc": DOCS["en"]}[kind]
        prompt = "\n".join(part for part in (text, body) if part)
        lang = "zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "ja" if "続" in text else \
            "de" if text == "mach das fertig" else "pt" if text == "termina esse código" else "en" if text else "code"
        out = [row for row in out if row["text"] != prompt]  # verbatim in the test split, so never trained on
        out.append({"text": prompt, "task": task, "language": lang, "reason": "quoted in issue 29 or 25",
                    "group": f"quoted:{index}", "split": "test"})
    # Fill-in-the-middle prompts, as editors send them (the rule routes them; the corpus keeps their shape).
    for index, (_, _, code) in enumerate(SNIPPETS[::3]):
        lines = code.split("\n")
        half = len(lines) // 2
        marks = [("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"), ("<PRE> ", " <SUF>", " <MID>"),
                 ("<|fim▁begin|>", "<|fim▁hole|>", "<|fim▁end|>")][index % 3]
        text = f"{marks[0]}{chr(10).join(lines[:half])}\n{marks[1]}\n{chr(10).join(lines[half + 1:])}{marks[2]}"
        out.append({"text": text, "task": "completion", "language": "code", "reason": "fill-in-the-middle markers",
                    "group": f"fim:{index}", "split": "test" if is_test(f"fim:{index}") else "train"})
    # Coverage phrasings: trained on, filled from the training pieces by their own generator, so the rows
    # above (and the held-out split among them) are the same with or without them.
    cover = random.Random(2929)
    held = {row["text"] for row in out if row["split"] == "test"}
    for lang, templates in COVERAGE.items():
        for index, (task, reason, template) in enumerate(templates):
            for _ in range(FILLS):
                text = fill(template, cover, train_pieces, lang)
                if text in seen or text in held:
                    continue
                seen.add(text)
                out.append({"text": text, "task": task, "language": lang, "reason": reason, "group": f"{lang}+:{index}",
                            "split": "train"})
    return out


def main() -> None:
    data = rows()
    with (HERE / "corpus.jsonl").open("w", encoding="utf-8") as file:
        for row in data:
            file.write(json.dumps(row, ensure_ascii=False) + "\n")
    from collections import Counter

    print(len(data), "rows;", dict(Counter(r["split"] for r in data)), dict(Counter(r["task"] for r in data)))
    print(dict(Counter(r["language"] for r in data)))
    print("test:", dict(Counter(r["task"] for r in data if r["split"] == "test")))


if __name__ == "__main__":
    main()
