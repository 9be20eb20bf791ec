"""Recorded replies whose changes are slightly off (``tests/edit_replies/CASE/``): each is applied to a copy of
``before/`` and must leave exactly ``after/``, byte for byte, and undo back to ``before/``; or it is refused with
the kind and the words its ``case.toml`` names, with nothing written.

A case: ``reply.md`` (the reply as the model wrote it), ``before/`` and ``after/`` (the files), ``case.toml``:
``about``, ``crlf`` (files written with CRLF line endings on both sides) and ``[refused]`` ``kind``, ``says``."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from fastchat_tui.edits import EditError, UndoLog, apply_plan, find_changes, plan_changes

CASES = Path(__file__).resolve().parent / "edit_replies"


def tree(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def copy(source: Path, target: Path, crlf: list[str]) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for name, data in tree(source).items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_bytes(data.replace(b"\n", b"\r\n") if name in crlf else data)


@pytest.mark.parametrize("case", sorted(path.name for path in CASES.iterdir() if path.is_dir()))
def test_a_recorded_reply_is_applied_or_refused_cleanly(case: str, tmp_path: Path) -> None:
    folder = CASES / case
    spec = tomllib.loads((folder / "case.toml").read_text())
    crlf = spec.get("crlf", [])
    root = tmp_path / "project"
    copy(folder / "before", root, crlf)
    before = tree(root)
    reply = (folder / "reply.md").read_text()
    log = UndoLog(tmp_path / "undo")
    if "refused" in spec:
        with pytest.raises(EditError) as caught:
            apply_plan(plan_changes(find_changes(reply), root), undo=log)
        assert caught.value.kind == spec["refused"]["kind"], caught.value.message
        for words in spec["refused"]["says"]:
            assert words in caught.value.message, caught.value.message
        assert tree(root) == before
        assert log.entries() == []
        return
    expected = tmp_path / "expected"
    copy(folder / "after", expected, crlf)
    applied = apply_plan(plan_changes(find_changes(reply), root), undo=log)
    assert tree(root) == tree(expected), spec["about"]
    assert log.undo(applied.entry_id)
    assert tree(root) == before


def test_every_case_says_what_it_is() -> None:
    for folder in CASES.iterdir():
        spec = tomllib.loads((folder / "case.toml").read_text())
        assert spec["about"] and ("refused" in spec) != (folder / "after").is_dir(), folder.name
