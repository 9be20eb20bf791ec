"""``fastchat history`` and ``fastchat usage`` against real history files."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from fastchat_tui.cli import main
from fastchat_tui.config import Config
from fastchat_tui.store import Store
from tests.helpers import child_env, fastchat
from tests.test_store import PricedSource, record, stored_turn

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data"
    monkeypatch.setenv("FASTCHAT_DATA_DIR", str(folder))
    return folder


@pytest.fixture
def chats(data_dir: Path) -> list[int]:
    config = Config(sources={"fast": PricedSource(name="fast", kind="openai", base_url="http://127.0.0.1:9/v1",
                                                  model="fast-model", price_in=1.0, price_out=4.0)})
    with Store.open(data_dir / "history.db") as store:
        recorder = store.recorder(config)
        record(recorder, stored_turn("How does SQLite WAL work?", "It appends changes to a log file."))
        record(recorder, stored_turn("And checkpoints?", "They copy the log back.", status="cut", exact=False))
        first = recorder.chat_id
        recorder.chat_id = None
        record(recorder, stored_turn("東京の天気は?", "晴れです", source="local"))
        return [first, recorder.chat_id]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_text_and_json(chats: list[int], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "history")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "UPDATED", "MSGS", "TITLE"]
    assert lines[1].split()[0] == str(chats[1]) and lines[1].endswith("東京の天気は?")
    assert lines[2].split()[0] == str(chats[0]) and "4" in lines[2].split()
    code, out, _ = run(capsys, "history", "--json")
    listed = json.loads(out)
    assert [c["id"] for c in listed] == [chats[1], chats[0]]
    assert listed[1] == {**listed[1], "title": "How does SQLite WAL work?", "messages": 4}
    datetime.fromisoformat(listed[0]["updated_at"])
    code, out, _ = run(capsys, "history", "--json", "-n", "1")
    assert len(json.loads(out)) == 1


def test_empty_history(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "history") == (0, "", "No saved chats yet.\n")
    assert run(capsys, "history", "--json")[1] == "[]\n"


def test_show_prints_markdown_with_meter_lines(chats: list[int], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "history", "show", str(chats[0]))
    assert code == 0
    assert out.startswith("# How does SQLite WAL work?\n")
    assert "## You\n\nAnd checkpoints?\n" in out and "## Assistant\n\nThey copy the log back.\n" in out
    assert "> fast · fast-model · route: test route · TTFT 200 ms" in out
    assert "5~ tokens" in out and "· cut" in out
    code, out, _ = run(capsys, "history", "show", str(chats[0]), "--json")
    shown = json.loads(out)
    assert [m["role"] for m in shown["messages"]] == ["user", "assistant", "user", "assistant"]
    reply = shown["messages"][1]["reply"]
    assert reply["status"] == "complete" and reply["ttft_s"] == pytest.approx(0.2) and reply["tokens_exact"] is True
    assert reply["cost_usd"] == pytest.approx((10 * 1.0 + 7 * 4.0) / 1e6)
    assert shown["messages"][3]["reply"]["incomplete"] is True


def test_show_folds_the_reasoning_and_says_how_a_reply_ended(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Store.open(data_dir / "history.db") as store:
        recorder = store.recorder()
        turn = stored_turn("Is 91 prime?", "No: 7 × 13.", status="truncated")
        turn.reasoning_parts = ["Try 7:", " 7 × 13 = 91."]
        turn.end_note = "cut at the token limit (4 tokens)"
        record(recorder, turn)
        chat = recorder.chat_id
    code, out, _ = run(capsys, "history", "show", str(chat))
    assert code == 0
    assert "## Assistant\n\n<details><summary>Reasoning</summary>\n\nTry 7: 7 × 13 = 91.\n\n</details>\n\nNo: 7 × 13.\n" in out
    assert out.rstrip("\n").endswith("· 4 tokens · 0.24 s · cut at the token limit (4 tokens)")
    code, out, _ = run(capsys, "history", "show", str(chat), "--json")
    answer = json.loads(out)["messages"][1]
    assert (answer["content"], answer["reasoning"]) == ("No: 7 × 13.", "Try 7: 7 × 13 = 91.")
    assert answer["reply"]["status"] == "truncated" and answer["reply"]["end_note"] == "cut at the token limit (4 tokens)"
    assert answer["reply"]["incomplete"] is True


def test_unknown_chat_is_an_error(chats: list[int], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "history", "show", "999")
    assert code == 1 and out == "" and "no chat with id 999" in err


def test_export_writes_markdown_or_json(chats: list[int], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out" / "chat.md"
    code, out, err = run(capsys, "history", "export", str(chats[0]), "-o", str(target))
    assert code == 0 and out == "" and str(target) in err
    code, shown, _ = run(capsys, "history", "show", str(chats[0]))
    assert target.read_text(encoding="utf-8") == shown
    code, _, _ = run(capsys, "history", "export", str(chats[1]), "-o", str(tmp_path / "chat.json"))
    assert json.loads((tmp_path / "chat.json").read_text(encoding="utf-8"))["messages"][1]["content"] == "晴れです"
    code, _, err = run(capsys, "history", "export", str(chats[0]), "-o", str(tmp_path))
    assert code == 1 and "is a folder" in err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["chat.md"]  # no temporary files left


def test_search_text_and_json(chats: list[int], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "history", "search", "wal")
    assert code == 0
    assert out.splitlines()[0].startswith(f"chat {chats[0]} · ") and "How does SQLite **WAL** work?" in out
    code, out, _ = run(capsys, "history", "search", "天気", "--json")
    (hit,) = json.loads(out)
    assert hit["chat_id"] == chats[1] and hit["role"] == "user" and hit["snippet"] == "東京の天気は?"
    code, out, err = run(capsys, "history", "search", "nothing", "matches")
    assert code == 0 and out == "" and "no messages contain" in err
    code, out, _ = run(capsys, "history", "search", "log", "--json", "-n", "1")
    assert len(json.loads(out)) == 1


def test_rename_and_delete(chats: list[int], capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "history", "rename", str(chats[1]), "Weather", "in", "Tokyo")[0] == 0
    assert json.loads(run(capsys, "history", "--json")[1])[0]["title"] == "Weather in Tokyo"
    code, _, err = run(capsys, "history", "delete", str(chats[1]))
    assert code == 0 and "deleted chat" in err
    assert [c["id"] for c in json.loads(run(capsys, "history", "--json")[1])] == [chats[0]]
    assert json.loads(run(capsys, "history", "search", "天気", "--json")[1]) == []


def test_usage_sums_this_month(chats: list[int], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "usage", "--json")
    assert code == 0
    usage = json.loads(out)
    assert usage["month"] == datetime.now().strftime("%Y-%m")
    by_source = {row["source"]: row for row in usage["sources"]}
    assert by_source["fast"]["replies"] == 2 and by_source["fast"]["output_tokens"] == 7 + 5
    assert by_source["fast"]["estimated_output_tokens"] == 5
    # the cut reply has no exact counts, but it was billed: priced on the meter's estimate (its 5 chunks)
    assert by_source["fast"]["cost_usd"] == pytest.approx((10 * 1.0 + 7 * 4.0 + 5 * 4.0) / 1e6)
    assert by_source["fast"]["priced_replies"] == 2 and by_source["local"]["priced_replies"] == 0
    assert usage["total"]["replies"] == 3
    code, out, _ = run(capsys, "usage")
    lines = out.splitlines()
    assert lines[0].startswith("Usage for ")
    assert lines[1].split() == ["SOURCE", "REPLIES", "INPUT", "TOKENS", "OUTPUT", "TOKENS", "COST"]
    assert lines[2].split()[:2] == ["fast", "2"] and lines[2].split()[3] == "12~" and lines[2].endswith("$0.000058")
    assert lines[3].split()[-1] == "-" and lines[4].startswith("total") and lines[-1].startswith("~")


def test_usage_for_another_month_and_a_bad_month(chats: list[int], capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "usage", "--month", "2001-01") == (0, "No replies saved in 2001-01.\n", "")
    assert json.loads(run(capsys, "usage", "--month", "2001-01", "--json")[1])["sources"] == []
    code, _, err = run(capsys, "usage", "--month", "01/2001")
    assert code == 2 and "not a month" in err


def test_a_damaged_file_is_reported_once_and_replaced(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data_dir.mkdir()
    (data_dir / "history.db").write_bytes(b"\x00garbage" * 512)
    code, _, err = run(capsys, "history")
    assert code == 0 and "could not be read" in err and "history.db.corrupt-" in err
    assert run(capsys, "history") == (0, "", "No saved chats yet.\n")
    assert len(list(data_dir.glob("history.db.corrupt-*"))) == 1


def test_commands_run_as_a_process(chats: list[int], data_dir: Path) -> None:
    result = fastchat(child_env(PYTHONPATH=str(ROOT / "src")), "history", "--json")
    assert result.returncode == 0, result.stderr
    assert [c["id"] for c in json.loads(result.stdout)] == [chats[1], chats[0]]


def test_usage_counts_only_requests_that_got_an_answer(tmp_path: Path, spawn_server) -> None:
    """An unreachable source, or one that refuses the request, gave no reply: ``usage`` counted each as one
    (issue 26, item 18). They are counted apart, as requests that got no answer."""
    from tests.keys_helpers import KeyedServer
    from tests.servers import OpenAIServer, Script, closed_port

    answering = spawn_server(OpenAIServer, default=Script(tokens=["an ", "answer"]))
    refusing = spawn_server(KeyedServer, key="never-this-one")
    config = tmp_path / "config.toml"
    config.write_text(
        f'[sources.fast]\nkind = "openai"\nbase_url = "{answering.url}"\nmodel = "m"\n'
        f'[sources.gone]\nkind = "openai"\nbase_url = "http://127.0.0.1:{closed_port()}/v1"\nmodel = "m"\n'
        f'[sources.shut]\nkind = "openai"\nbase_url = "{refusing.url}"\nmodel = "m"\n', encoding="utf-8")
    env = child_env(config, data=tmp_path / "data")
    for name, code in (("fast", 0), ("gone", 1), ("gone", 1), ("shut", 1)):
        assert fastchat(env, "ask", "-s", name, "hello").returncode == code

    done = fastchat(env, "usage", "--json")
    assert done.returncode == 0, done.stderr
    usage = json.loads(done.stdout)
    assert {row["source"]: (row["replies"], row["failed"]) for row in usage["sources"]} == {
        "fast": (1, 0), "gone": (0, 2), "shut": (0, 1)}
    assert (usage["total"]["replies"], usage["total"]["failed"]) == (1, 3)
    lines = fastchat(env, "usage").stdout.splitlines()
    assert [line.split()[:2] for line in lines[2:6]] == [["fast", "1"], ["gone", "0"], ["shut", "0"], ["total", "1"]]
    assert lines[-1] == "not counted: 3 requests that got no answer (gone 2, shut 1)"
