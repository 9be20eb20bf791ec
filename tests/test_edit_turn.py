"""The edit turn core (:mod:`fastchat_tui.edit_turn`, :mod:`fastchat_tui.edit_prompt`): the format chosen by size
and model, the events in order, the one retry with the error, and nothing written to disk; over a real session
streaming from a loopback server."""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest

from fastchat_tui.attachment import Attachment
from fastchat_tui.conversation import Conversation
from fastchat_tui.edit_prompt import WHOLE_MAX_BYTES, WHOLE_MAX_LINES, build_prompt, choose_form, commit_message
from fastchat_tui.edit_turn import EditFailed, EditPlanned, EditRetrying, EditStarted, edit, project_root, read_files
from fastchat_tui.events import Finished
from fastchat_tui.inputs import InputError
from tests.helpers import session_for, source
from tests.servers import OpenAIServer
from tests.test_edit_command import APP, BAD_DIFF, DIFF, TYPED, WHOLE, reply


def lines(n: int) -> Attachment:
    return Attachment("big.py", "x = 1\n" * n, language="python")


def test_small_files_are_asked_for_whole_and_large_ones_by_model():
    assert choose_form([lines(300)], "llama3.2", None) == "whole"
    assert choose_form([lines(WHOLE_MAX_LINES)], None, None) == "whole"
    assert choose_form([lines(WHOLE_MAX_LINES + 1)], "llama3.2", None) == "search_replace"
    assert choose_form([lines(WHOLE_MAX_LINES + 1)], "gpt-4.1-mini", None) == "diff"
    wide = Attachment("wide.py", ("y" * 99 + "\n") * (WHOLE_MAX_BYTES // 100 + 1))
    assert choose_form([wide], "qwen2.5-coder", None) == "search_replace"  # under the lines, over the bytes
    assert choose_form([lines(300)], "llama3.2", max_tokens=256) == "search_replace"  # the reply cap cannot hold it


def test_the_prompt_names_the_format_and_asks_for_a_commit_message_only_when_committing():
    files = [Attachment("app.py", APP, language="python")]
    whole = build_prompt(files, "add type hints", "whole")
    assert "```python path=src/greet.py" in whole and "Commit message" not in whole
    assert "- app.py: Python, 6 lines" in whole and f"```python\n{APP}```" in whole
    assert "<<<<<<< SEARCH" in build_prompt(files, "x", "search_replace", commit=True)
    assert "Commit message: " in build_prompt(files, "x", "diff", commit=True)
    assert commit_message("done\n\nCommit message: Add type hints\n") == "Add type hints"
    assert commit_message("no such line") is None


def test_files_are_read_relative_to_the_git_root_and_outside_ones_refused(tmp_path: Path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_bytes(APP.replace("\n", "\r\n").encode())
    monkeypatch.chdir(tmp_path / "src")
    root = project_root(Path.cwd())
    assert root == tmp_path.resolve()
    [file] = read_files(["app.py"], root, 1 << 20)
    assert file.attachment.name == "src/app.py" and file.attachment.text == APP  # the model sees LF
    assert file.base == APP.replace("\n", "\r\n")  # the base is the text on disk
    [new] = read_files(["new.py"], root, 1 << 20)
    assert new.base is None and new.attachment.text == ""
    with pytest.raises(InputError, match="outside"):
        read_files([str(tmp_path.parent / "elsewhere.py")], root, 1 << 20)


def run_edit(server: OpenAIServer, root: Path, **kwargs: Any) -> list[Any]:
    async def main() -> list[Any]:
        session = session_for(source("hosted", server.url))
        files = read_files([str(root / "app.py")], root, 1 << 20)
        try:
            async with aclosing(edit(Conversation(session), root, files, "add type hints", **kwargs)) as events:
                return [event async for event in events]
        finally:
            await session.aclose()

    return asyncio.run(main())


def test_a_change_that_cannot_be_planned_is_sent_back_once_then_planned(tmp_path: Path, spawn_server):
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    server = spawn_server(OpenAIServer)
    server.push(reply(BAD_DIFF), reply(DIFF))
    events = run_edit(server, tmp_path, form="diff")
    ours = [type(e).__name__ for e in events if isinstance(e, (EditStarted, EditRetrying, EditPlanned, Finished))]
    assert ours == ["EditStarted", "Finished", "EditRetrying", "Finished", "EditPlanned"]
    planned = events[-1]
    assert isinstance(planned, EditPlanned) and planned.attempts == 2
    assert planned.plan.changes[0].after == TYPED
    retrying = next(e for e in events if isinstance(e, EditRetrying))
    assert retrying.error.message in server.stream_requests()[1].wait().json["messages"][-1]["content"]
    assert (tmp_path / "app.py").read_text(encoding="utf-8") == APP  # nothing written: applying is the caller's


def test_a_whole_file_reply_is_planned_at_once(tmp_path: Path, spawn_server):
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    server = spawn_server(OpenAIServer, default=reply(WHOLE))
    events = run_edit(server, tmp_path)
    assert isinstance(events[0], EditStarted) and events[0].form == "whole"
    assert isinstance(events[-1], EditPlanned) and events[-1].attempts == 1
    assert len(server.stream_requests()) == 1


def test_a_reply_cut_at_the_token_limit_is_not_planned(tmp_path: Path, spawn_server):
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    server = spawn_server(OpenAIServer, default=reply(WHOLE))
    server.default.finish_reason = "length"
    events = run_edit(server, tmp_path)
    failed = events[-1]
    assert isinstance(failed, EditFailed) and failed.error is None
    assert "cut at the token limit" in failed.message and "nothing was changed" in failed.message
    assert len(server.stream_requests()) == 1  # an incomplete change is not sent back


def test_a_file_changed_since_it_was_read_fails_at_once(tmp_path: Path, spawn_server):
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    server = spawn_server(OpenAIServer, default=reply(WHOLE))

    async def main() -> list[Any]:
        session = session_for(source("hosted", server.url))
        files = read_files([str(tmp_path / "app.py")], tmp_path, 1 << 20)
        (tmp_path / "app.py").write_text(APP + "# edited meanwhile\n", encoding="utf-8")
        try:
            async with aclosing(edit(Conversation(session), tmp_path, files, "add type hints")) as events:
                return [event async for event in events]
        finally:
            await session.aclose()

    failed = asyncio.run(main())[-1]
    assert isinstance(failed, EditFailed) and failed.error is not None and failed.error.kind == "conflict"
    assert "changed since it was read" in failed.message
    assert len(server.stream_requests()) == 1  # no second reply can mend that: not sent back
    assert (tmp_path / "app.py").read_text(encoding="utf-8") == APP + "# edited meanwhile\n"
