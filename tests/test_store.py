"""The history store: real SQLite files in temporary folders, real replies from loopback servers.

Covers saving while streaming and at every end state, resuming a chat, search (including
CJK text), usage sums, a migration from the first schema, damaged files, two processes
writing at once, and a SIGKILL in the middle of a reply.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import dataclass, fields
from datetime import datetime
from pathlib import Path

import pytest

from fastchat_tui import store as store_module
from fastchat_tui.bench import Batch, BenchResult, Run
from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.dates import iso, month_range
from fastchat_tui.meter import Meter
from fastchat_tui.pricing import cost
from fastchat_tui.routing import Decision, LatencyStats, Request, Route, candidate
from fastchat_tui.session import DefaultRouter, Session
from fastchat_tui.store import SCHEMA_VERSION, Store, StoreError, StoreLedger
from fastchat_tui.turn import Turn
from tests.servers import OpenAIServer, Script

ROOT = Path(__file__).resolve().parents[1]


# -- helpers ---------------------------------------------------------------------------------


def _priced_source_type() -> type:
    """SourceConfig with prices: the real one once it has them, else the same fields plus two."""
    if "price_in" in {f.name for f in fields(SourceConfig)}:
        return SourceConfig

    @dataclass(slots=True)
    class PricedSource(SourceConfig):
        price_in: float | None = None
        price_out: float | None = None

    return PricedSource


PricedSource = _priced_source_type()


def config_for(*servers: OpenAIServer, prices: dict[str, tuple[float, float]] | None = None) -> Config:
    names = ["fast", "backup", "third"]
    sources = {}
    for name, server in zip(names, servers):
        price_in, price_out = (prices or {}).get(name, (None, None))
        sources[name] = PricedSource(name=name, kind="openai", base_url=server.url, model=f"{name}-model",
                                     price_in=price_in, price_out=price_out)
    return Config(default_source="fast", sources=sources)


def stored_turn(prompt: str, text: str, *, source: str = "fast", started_at: float | None = None,
                status: str = "complete", input_tokens: int | None = 10, exact: bool = True,
                ttft: float = 0.2, gap: float = 0.01) -> Turn:
    """A finished turn with real meter arithmetic over the given timings."""
    turn = Turn(prompt, route=Route(source, "test route"), source=source, model=f"{source}-model", status=status)
    if started_at is not None:
        turn.started_at = started_at
    pieces = text.split(" ")
    meter = Meter(100.0)
    t = 100.0 + ttft
    for piece in pieces:
        turn.parts.append(piece if not turn.parts else " " + piece)
        meter.text(t)
        t += gap
    if exact:
        meter.usage(len(pieces), input_tokens)
    meter.done(t)
    turn.meter = meter
    return turn


def record(recorder, turn: Turn) -> Turn:
    final = turn.status
    turn.status = "streaming"
    recorder.begin(turn)
    recorder.progress(turn)
    turn.status = final
    recorder.end(turn)
    return turn


def schema_version(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()


def empty_chat(store: Store, title: str) -> int:
    """A chat with no messages yet (fastchat itself starts a chat with its first turn)."""
    now = time.time()
    conn = sqlite3.connect(store.path)
    try:
        with conn:
            return conn.execute("INSERT INTO chats (title, created_at, updated_at) VALUES (?, ?, ?)",
                                (title, now, now)).lastrowid
    finally:
        conn.close()


@pytest.fixture
def server():
    with OpenAIServer() as running:
        yield running


# -- opening ---------------------------------------------------------------------------------


def test_new_file_is_wal_with_current_schema(tmp_path: Path) -> None:
    with Store.open(tmp_path / "deep" / "er" / "history.db") as store:
        assert store.warning is None
        assert schema_version(store.path) == SCHEMA_VERSION
    conn = sqlite3.connect(tmp_path / "deep" / "er" / "history.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_open_history_follows_fastchat_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FASTCHAT_DATA_DIR", str(tmp_path / "data"))
    with store_module.open_history() as store:
        assert store.path == tmp_path / "data" / "history.db"
    monkeypatch.delenv("FASTCHAT_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    with store_module.open_history() as store:
        assert store.path == tmp_path / "xdg" / "fastchat" / "history.db"


def test_default_recorder_reports_problems_instead_of_failing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    problems: list[str] = []
    monkeypatch.setenv("FASTCHAT_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "history.db").write_bytes(b"not sqlite" * 100)
    recorder = store_module.default_recorder(on_problem=problems.append)
    assert recorder is not None and len(problems) == 1 and "kept as" in problems[0]
    record(recorder, stored_turn("saved", "yes"))
    assert [c.title for c in recorder.store.chats()] == ["saved"]
    recorder.store.close()
    (tmp_path / "blocked").write_text("a file where the data folder should be")
    monkeypatch.setenv("FASTCHAT_DATA_DIR", str(tmp_path / "blocked" / "data"))
    assert store_module.default_recorder(on_problem=problems.append) is None
    assert problems[-1].startswith("history is not being saved: cannot create the history folder")


# -- saving replies from a real session -------------------------------------------------------


async def test_complete_reply_is_saved_with_its_figures(store: Store, server: OpenAIServer) -> None:
    server.push(Script(tokens=["Hel", "lo", " there", "!"], ttft_s=0.02, rate_tps=200, prompt_tokens=7))
    config = config_for(server, prices={"fast": (1.0, 2.0)})
    session = Session(config, recorder=store.recorder(config))
    turn = await session.send("Say hello")
    assert turn.status == "complete"

    chat_id = session.recorder.chat_id
    messages = store.messages(chat_id)
    assert [(m.role, m.content) for m in messages] == [("user", "Say hello"), ("assistant", "Hello there!")]
    reply = messages[1].reply
    assert reply is not None and messages[0].reply is None
    assert (reply.source, reply.model, reply.status, reply.route_reason) == ("fast", "fast-model", "complete", "chosen by hand")
    assert reply.task == "chat" and reply.finish_reason == "stop" and not reply.incomplete
    reading = turn.reading()
    assert reply.ttft_s == pytest.approx(reading.ttft_s)
    assert reply.decode_tps == pytest.approx(reading.decode_tps)
    assert reply.e2e_tps == pytest.approx(reading.e2e_tps)
    assert reply.total_s == pytest.approx(reading.total_s)
    assert (reply.output_tokens, reply.tokens_exact, reply.input_tokens) == (4, True, 7)
    assert reply.cost_usd == pytest.approx((7 * 1.0 + 4 * 2.0) / 1e6)
    assert reply.started_at == pytest.approx(turn.started_at) and reply.ended_at >= reply.started_at
    assert "TTFT" in reply.line() and "4 tokens" in reply.line()
    assert store.chat(chat_id).title == "Say hello"
    row = sqlite3.connect(store.path).execute("SELECT writer_pid FROM replies").fetchone()
    assert row == (None,)


async def test_reply_is_written_while_it_streams(store: Store, server: OpenAIServer) -> None:
    first, second = ["one", " two", " three"], [" four", " five", " six"]
    server.push(Script(tokens=first + second, stall_at=len(first), stall_s=2.0))
    config = config_for(server)
    session = Session(config, recorder=store.recorder(config))
    seen_while_streaming: list[str] = []
    reader = Store.open(store.path)  # another connection, as another process would read

    def on_text(text: str) -> None:
        if text == second[-1]:
            chat_id = session.recorder.chat_id
            seen_while_streaming.append(reader.messages(chat_id)[-1].content)
            seen_while_streaming.append(reader.messages(chat_id)[-1].reply.status)

    turn = await session.send("count", on_text=on_text)
    reader.close()
    assert turn.status == "complete"
    saved, status = seen_while_streaming
    # saved on a clock during the stall (RECORD_EVERY_S after it arrived), not when the next token came
    assert saved == "one two three"
    assert status == "streaming"
    assert store.messages(session.recorder.chat_id)[-1].content == turn.text


async def test_cut_reply_keeps_its_text_and_says_cut(store: Store, server: OpenAIServer) -> None:
    server.push(Script(tokens=["a", "b", "c", "d", "e"], cut_after=3))
    config = config_for(server)
    session = Session(config, recorder=store.recorder(config))
    turn = await session.send("cut me")
    assert turn.status == "cut"
    reply = store.messages(session.recorder.chat_id)[-1]
    assert reply.content == "abc"
    assert reply.reply.status == "cut" and reply.reply.incomplete
    assert reply.reply.error_kind == str(turn.error.kind) and reply.reply.error_message
    assert store.context(session.recorder.chat_id) == [
        {"role": "user", "content": "cut me"}, {"role": "assistant", "content": "abc"}]


async def test_failed_reply_keeps_the_prompt(store: Store, server: OpenAIServer) -> None:
    server.push(Script(status=401))
    config = config_for(server)
    session = Session(config, recorder=store.recorder(config))
    turn = await session.send("will fail")
    assert turn.status == "error"
    messages = store.messages(session.recorder.chat_id)
    assert [(m.role, m.content) for m in messages] == [("user", "will fail"), ("assistant", "")]
    assert messages[1].reply.status == "error" and messages[1].reply.error_kind == "auth"
    assert store.context(session.recorder.chat_id) == []  # nothing for the model to remember


async def test_unknown_source_is_recorded_as_an_error(store: Store, server: OpenAIServer) -> None:
    config = config_for(server)
    session = Session(config, recorder=store.recorder(config))
    turn = await session.send("where to?", source="nowhere")
    assert turn.status == "error"
    reply = store.messages(session.recorder.chat_id)[-1].reply
    assert reply.status == "error" and reply.error_kind == "not_found" and reply.source is None


async def test_cancelled_reply_keeps_partial_text(store: Store, server: OpenAIServer) -> None:
    server.push(Script(tokens=["x"] * 400, rate_tps=100))
    config = config_for(server)
    session = Session(config, recorder=store.recorder(config))
    received: list[str] = []
    task = asyncio.create_task(session.send("long", on_text=received.append))
    while len(received) < 5:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    reply = store.messages(session.recorder.chat_id)[-1]
    assert reply.reply.status == "cancelled" and reply.reply.incomplete
    assert reply.content and set(reply.content) == {"x"} and len(reply.content) >= 5


class FixedRoute(DefaultRouter):
    """Every request goes one given way."""

    def __init__(self, config: Config, route: Route) -> None:
        super().__init__(config)
        self.route = route

    def decide(self, request: Request, chosen: str | None = None) -> Decision:
        return Decision(self.route)


async def test_fallback_records_one_reply_from_the_second_source(store: Store) -> None:
    with OpenAIServer() as failing, OpenAIServer() as working:
        failing.default = Script(status=503)  # every retry fails too
        working.push(Script(tokens=["ok"]))
        config = config_for(failing, working)
        session = Session(config, recorder=store.recorder(config),
                          router=FixedRoute(config, Route("fast", "test", fallbacks=["backup"])))
        session.selected = "auto"
        turn = await session.send("try both")
    assert turn.status == "complete" and turn.source == "backup"
    messages = store.messages(session.recorder.chat_id)
    assert [m.role for m in messages] == ["user", "assistant"]
    reply = messages[1].reply
    assert (reply.source, reply.model, reply.fallback_from) == ("backup", "backup-model", "fast")
    assert reply.fallback_reason and reply.status == "complete"


async def test_resume_loads_context_and_continues_the_chat(tmp_path: Path, server: OpenAIServer) -> None:
    server.push(Script(tokens=["first answer"]), Script(tokens=["second answer"]), Script(tokens=["third"]))
    config = config_for(server)
    config.system_prompt = "be brief"
    with Store.open(tmp_path / "history.db") as store:
        session = Session(config, recorder=store.recorder(config))
        await session.send("first question")
        await session.send("second question")
        chat_id = session.recorder.chat_id
        await session.aclose()

    with Store.open(tmp_path / "history.db") as store:  # as after a restart
        session = Session(config, recorder=store.recorder(config))
        session.resume(chat_id)
        assert session.messages == [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "first question"}, {"role": "assistant", "content": "first answer"},
            {"role": "user", "content": "second question"}, {"role": "assistant", "content": "second answer"},
        ]
        await session.send("third question")
        await session.aclose()
        assert server.stream_requests()[-1].json["messages"][-1] == {"role": "user", "content": "third question"}
        assert len(server.stream_requests()[-1].json["messages"]) == 6
        assert [m.content for m in store.messages(chat_id)][-2:] == ["third question", "third"]
        assert len(store.chats()) == 1
        with pytest.raises(StoreError, match="no chat with id 999"):
            session.resume(999)


# -- chats, search, export --------------------------------------------------------------------


def test_chat_list_rename_delete_and_new(store: Store) -> None:
    recorder = store.recorder()
    record(recorder, stored_turn("first chat prompt", "reply one"))
    first = recorder.chat_id
    recorder.chat_id = None
    record(recorder, stored_turn("second chat " + "long " * 30, "reply two"))
    second = recorder.chat_id
    empty = empty_chat(store, "empty one")
    assert first != second
    assert [c.id for c in store.chats()] == [empty, second, first]
    assert store.chat(second).title.endswith("…") and len(store.chat(second).title) <= 60
    assert store.chat(first).message_count == 2
    assert store.rename_chat(first, "  renamed\n chat ")
    assert store.chat(first).title == "renamed chat"
    assert store.delete_chat(second) and not store.delete_chat(second)
    assert [c.id for c in store.chats()] == [empty, first]
    assert store.search("reply two") == []
    assert sqlite3.connect(store.path).execute("SELECT count(*) FROM messages").fetchone()[0] == 2
    assert [c.id for c in store.chats(limit=1)] == [empty]


def test_recording_into_a_deleted_chat_starts_a_new_one(store: Store) -> None:
    recorder = store.recorder()
    record(recorder, stored_turn("in chat", "a"))
    store.delete_chat(recorder.chat_id)
    record(recorder, stored_turn("after delete", "b"))
    assert [c.title for c in store.chats()] == ["after delete"]


def test_messages_can_be_loaded_from_the_end(store: Store) -> None:
    recorder = store.recorder()
    for n in range(10):
        record(recorder, stored_turn(f"question {n}", f"answer {n}"))
    chat_id = recorder.chat_id
    last = store.messages(chat_id, limit=4)
    assert [m.content for m in last] == ["question 8", "answer 8", "question 9", "answer 9"]
    earlier = store.messages(chat_id, limit=2, before_id=last[0].id)
    assert [m.content for m in earlier] == ["question 7", "answer 7"]
    assert [m.content for m in store.iter_messages(chat_id, batch=3)] == [m.content for m in store.messages(chat_id)]


def test_search_words_substrings_cjk_and_odd_characters(store: Store) -> None:
    recorder = store.recorder()
    record(recorder, stored_turn("How do I tune SQLite WAL checkpoints?", "Use PRAGMA wal_autocheckpoint."))
    sqlite_chat = recorder.chat_id
    recorder.chat_id = None
    record(recorder, stored_turn("東京の天気はどうですか", "今日は晴れです 100% sure_thing \"quoted\""))
    recorder.chat_id = None
    record(recorder, stored_turn("数据库 全文搜索", "使用 FTS5 trigram 分词器"))

    hits = store.search("sqlite")
    assert [(h.chat_id, h.role) for h in hits] == [(sqlite_chat, "user")]
    assert "**SQLite**" in hits[0].snippet and hits[0].chat_title.startswith("How do I tune")
    assert [h.role for h in store.search("autocheck")] == ["assistant"]       # inside a word
    assert [h.role for h in store.search("pragma TUNE")] == []                # words in different messages
    assert len(store.search("wal")) == 2                                      # newest first
    assert store.search("wal")[0].role == "assistant"
    assert [h.snippet for h in store.search("天気")] == ["東京の**天気**はどうですか"]  # two CJK characters
    assert len(store.search("晴れです")) == 1
    assert len(store.search("全文搜索")) == 1 and len(store.search("搜索")) == 1
    assert len(store.search("100%")) == 1 and store.search("10%0") == []
    assert len(store.search("sure_thing")) == 1 and store.search("sure_x") == []
    assert len(store.search('"quoted"')) == 1
    assert store.search('AND OR NOT ( " * ^') == []                            # FTS syntax is just text
    assert store.search("   ") == []
    assert len(store.search("e", limit=2)) == 2
    assert store.search("sqlite", mark=("<", ">"))[0].snippet.count("<SQLite>") == 1


def test_markdown_export_has_meter_lines(store: Store) -> None:
    recorder = store.recorder()
    record(recorder, stored_turn("Explain WAL", "WAL appends changes to a log."))
    record(recorder, stored_turn("And checkpoints?", "They copy the log back.", status="cut"))
    text = store.markdown(recorder.chat_id)
    assert text.startswith("# Explain WAL\n")
    assert "## You\n\nExplain WAL\n" in text and "## Assistant\n\nWAL appends changes to a log.\n" in text
    assert "> fast · fast-model · route: test route · TTFT 200 ms" in text
    assert text.count("\n> ") == 2 and "· cut" in text
    with pytest.raises(StoreError, match="no chat"):
        store.markdown(12345)


# -- usage, budgets, latency ------------------------------------------------------------------


def test_usage_sums_per_source_and_month(tmp_path: Path) -> None:
    config = Config(sources={
        "fast": PricedSource(name="fast", kind="openai", base_url="http://127.0.0.1:9/v1", model="m",
                             price_in=0.5, price_out=2.0),
        "local": PricedSource(name="local", kind="ollama", base_url="http://127.0.0.1:11434", model="m"),
    })
    may = datetime(2026, 5, 15, 12).timestamp()
    june = datetime(2026, 6, 1, 0, 30).timestamp()
    with Store.open(tmp_path / "history.db") as store:
        recorder = store.recorder(config)
        record(recorder, stored_turn("a", "one two three", started_at=may, input_tokens=100))
        record(recorder, stored_turn("b", "one two", started_at=may, input_tokens=50))
        record(recorder, stored_turn("c", "four words right here", source="local", started_at=may, exact=False))
        record(recorder, stored_turn("d", "x", started_at=june, input_tokens=1000))
        # Cut before its usage came: billed all the same, so priced on the meter's estimate (2 chunks, no input).
        record(recorder, stored_turn("e", "cut short", started_at=may, exact=False, status="cut"))
        rows = {row.source: row for row in store.usage("2026-05")}
        assert set(rows) == {"fast", "local"}
        fast, local = rows["fast"], rows["local"]
        assert (fast.replies, fast.input_tokens, fast.output_tokens, fast.estimated_output_tokens) == (3, 150, 7, 2)
        assert fast.cost_usd == pytest.approx((150 * 0.5 + 5 * 2.0 + 2 * 2.0) / 1e6) and fast.priced_replies == 3
        assert (local.replies, local.output_tokens, local.estimated_output_tokens, local.cost_usd) == (1, 4, 4, 0.0)
        assert store.spend("fast", "2026-05") == pytest.approx(fast.cost_usd)
        assert store.spend("fast", "2026-06") == pytest.approx((1000 * 0.5 + 1 * 2.0) / 1e6)
        assert store.spend("local", "2026-05") == 0.0 and store.spend("nobody") == 0.0
        assert store.usage("2026-07") == []


def test_cost_and_month_range() -> None:
    plain = SourceConfig(name="x", kind="openai", base_url="http://127.0.0.1:9/v1", model="m")
    assert cost(plain, 1000, 1000) is None
    assert cost(PricedSource(name="x", kind="openai", base_url="u", model="m", price_out=10.0), None, 500) == pytest.approx(0.005)
    assert cost(None, 1, 1) is None
    start, end = month_range("2026-12")
    assert datetime.fromtimestamp(start) == datetime(2026, 12, 1) and datetime.fromtimestamp(end) == datetime(2027, 1, 1)
    with pytest.raises(ValueError, match="not a month"):
        month_range("May 2026")


def test_latency_stats_are_medians_of_recent_complete_replies(store: Store) -> None:
    recorder = store.recorder()
    for ttft in (0.1, 0.3, 0.2, 5.0):
        record(recorder, stored_turn("q", "a b c d e", ttft=ttft, gap=0.01))
    record(recorder, stored_turn("q", "a b", ttft=9.0, status="error"))
    stats = store.latency_stats("fast")
    assert stats.samples == 4
    assert stats.ttft_s == pytest.approx(0.25)
    assert stats.decode_tps == pytest.approx(100.0)
    assert store.latency_stats("fast", limit=1).ttft_s == pytest.approx(5.0)
    assert store.latency_stats("other") == LatencyStats(None, None, 0)


# -- bench results ----------------------------------------------------------------------------


def bench_result(started_at: float, fast_ttft: float = 0.1) -> BenchResult:
    """A finished two-round bench of ``fast`` and ``local`` with fixed figures; one ``local`` run was cut."""
    result = BenchResult(["fast", "local"], "hi", 2, 256, 1, started_at=started_at)
    figures = {"fast": (fast_ttft, 1500.0, True), "local": (0.02, 60.0, False)}
    for round_ in range(2):
        for name, (ttft, rate, exact) in figures.items():
            cut = name == "local" and round_ == 1
            run = Run(name, round_, 0, "cut" if cut else "complete", model=f"{name}-model",
                      error_kind="cut" if cut else None, ttft_s=None if cut else ttft + round_ * 0.01,
                      decode_tps=None if cut else rate, e2e_tps=None if cut else rate / 2,
                      total_s=None if cut else 0.2 + round_, output_tokens=0 if cut else 256, tokens_exact=exact and not cut)
            result.runs.append(run)
            result.batches.append(Batch(name, round_, [run]))
    result.finished_at = started_at + 10
    result.summarise()
    return result


def test_the_ledger_learns_each_model_of_a_source_apart(store: Store) -> None:
    """A source's configured model and another one picked with ``-m`` are two candidates: the slow model's
    figures must not blend into the configured one's (before, the ledger read every reply of the source)."""
    recorder = store.recorder()
    record(recorder, stored_turn("q", "a b c", ttft=0.1))  # model "fast-model", the configured one
    other = stored_turn("q", "a b c", ttft=3.0)
    other.model = "big-model"
    record(recorder, other)
    ledger = StoreLedger(store, {"fast": "fast-model"})
    configured, picked = ledger.latency(candidate("fast", "fast-model", "fast-model")), ledger.latency("fast/big-model")
    assert configured is not None and (configured.samples, configured.ttft_s) == (1, pytest.approx(0.1))
    assert picked is not None and (picked.samples, picked.ttft_s) == (1, pytest.approx(3.0))
    assert ledger.latency("fast/unknown-model") is None
    assert StoreLedger(store).latency("fast").samples == 2  # without the map: every reply of the source


def test_bench_results_go_in_and_out_through_the_public_api(store: Store) -> None:
    ledger = StoreLedger(store)
    assert store.bench_history() == [] and store.latest_bench("fast") is None and ledger.latency("fast") is None
    first = bench_result(1_790_000_000.0)
    assert store.save_bench(first) == 1_790_000_000_000
    rows = store.bench_history()
    assert [(r.bench_id, r.source, r.model, r.ok, r.requests, r.failures) for r in rows] == [
        (1_790_000_000_000, "fast", "fast-model", 2, 2, 0), (1_790_000_000_000, "local", "local-model", 1, 2, 1)]
    fast, local = rows
    summary = first.summaries["fast"]
    assert fast.ttft_s == pytest.approx(summary.stat("ttft_s").median) and fast.decode_tps == 1500.0
    assert (fast.repeat, fast.max_tokens, fast.concurrency, fast.tokens_exact, fast.aggregate_tps) == (2, 256, 1, True, None)
    assert local.failure_kinds == {"cut": 1} and local.tokens_exact is False and local.output_tokens == 256
    assert fast.as_dict()["date"] == iso(1_790_000_000.0) and fast.as_dict()["failure_kinds"] == {}

    second = store.save_bench(bench_result(1_790_000_600.0, fast_ttft=0.3))
    assert [(r.bench_id, r.source) for r in store.bench_history(["local"])] == [(1_790_000_000_000, "local"), (second, "local")]
    assert [(r.bench_id, r.source) for r in store.bench_history(limit=1)] == [(second, "local")]
    assert store.latest_bench("fast").bench_id == second and store.latest_bench("nobody") is None
    # before any chat reply, the router's speed figures are the newest bench's medians
    assert ledger.latency("fast") == LatencyStats(pytest.approx(0.305), 1500.0, 2)
    # once there are chat replies, they count instead
    record(store.recorder(), stored_turn("q", "a b c d e", ttft=0.5))
    latency = ledger.latency("fast")
    assert latency is not None and latency.samples == 1 and latency.ttft_s == pytest.approx(0.5)


def test_nothing_outside_the_store_reaches_into_its_file() -> None:
    """Others use ``fastchat_tui.store``'s public names: no SQL, no ``_read`` / ``_write``, no submodules."""
    package = ROOT / "src" / "fastchat_tui"
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.is_relative_to(package / "store"):
            continue
        where = path.relative_to(ROOT)
        source = path.read_text(encoding="utf-8")
        if "bench_runs" in source:
            found.append(f"{where}: names the bench_runs table")
        for node in ast.walk(ast.parse(source)):
            if (isinstance(node, ast.Attribute) and node.attr in ("_read", "_write", "_conn", "_tokenizer")
                    and not (isinstance(node.value, ast.Name) and node.value.id == "self")):
                found.append(f"{where}:{node.lineno}: uses .{node.attr} of another object")
            elif isinstance(node, ast.Import | ast.ImportFrom):
                modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                for module in modules:
                    if module == "sqlite3" or module.startswith("fastchat_tui.store."):
                        found.append(f"{where}:{node.lineno}: imports {module}")
    assert found == []


def test_keys_are_redacted_when_the_keyring_module_offers_redaction(store: Store) -> None:
    keys = pytest.importorskip("fastchat_tui.keys")
    if not callable(getattr(keys, "redact", None)):
        pytest.skip("fastchat_tui.keys.redact does not exist yet")
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2
    recorder = store.recorder()
    record(recorder, stored_turn(f"my key is {secret} ok", f"do not echo {secret}"))
    store.close()
    assert secret.encode() not in store.path.read_bytes()
    wal = store.path.with_name(store.path.name + "-wal")
    assert not wal.exists() or secret.encode() not in wal.read_bytes()


# -- schema migrations ------------------------------------------------------------------------

# The first schema exactly as fastchat 0.1 wrote it (frozen here on purpose: never update it).
SCHEMA_V1 = """
CREATE TABLE chats (
    id INTEGER PRIMARY KEY, title TEXT NOT NULL DEFAULT '', created_at REAL NOT NULL, updated_at REAL NOT NULL);
CREATE INDEX chats_updated ON chats (updated_at);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY, chat_id INTEGER NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    role TEXT NOT NULL, content TEXT NOT NULL DEFAULT '', created_at REAL NOT NULL);
CREATE INDEX messages_chat ON messages (chat_id, id);
CREATE TABLE replies (
    message_id INTEGER PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
    prompt_id INTEGER REFERENCES messages (id) ON DELETE SET NULL,
    source TEXT, model TEXT, task TEXT, route_reason TEXT, fallback_from TEXT, fallback_reason TEXT,
    status TEXT NOT NULL, error_kind TEXT, error_message TEXT, finish_reason TEXT,
    ttft_s REAL, decode_tps REAL, e2e_tps REAL, server_tps REAL, total_s REAL,
    output_tokens INTEGER, tokens_exact INTEGER NOT NULL DEFAULT 0, input_tokens INTEGER, cost_usd REAL,
    started_at REAL NOT NULL, updated_at REAL NOT NULL, ended_at REAL, writer_pid INTEGER);
CREATE INDEX replies_source_time ON replies (source, started_at);
CREATE INDEX replies_prompt ON replies (prompt_id);
PRAGMA user_version = 1;
"""


def test_migrates_a_first_schema_file_keeping_everything(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA_V1)
    conn.execute("INSERT INTO chats VALUES (7, 'old chat', 1000.0, 2000.0)")
    conn.execute("INSERT INTO messages VALUES (1, 7, 'user', 'what is a write-ahead log', 1000.0)")
    conn.execute("INSERT INTO messages VALUES (2, 7, 'assistant', 'a journal of changes 日志', 1001.0)")
    conn.execute("INSERT INTO replies (message_id, prompt_id, source, model, status, ttft_s, output_tokens, tokens_exact,"
                 " started_at, updated_at, ended_at) VALUES (2, 1, 'fast', 'm', 'complete', 0.25, 5, 1, 1000, 1001, 1001)")
    conn.commit()
    conn.close()

    with Store.open(path) as store:
        assert store.warning is None and schema_version(path) == SCHEMA_VERSION
        assert [(c.id, c.title, c.message_count) for c in store.chats()] == [(7, "old chat", 2)]
        assert [h.message_id for h in store.search("write-ahead")] == [1]
        assert [h.message_id for h in store.search("日志")] == [2]
        assert store.messages(7)[1].reply.ttft_s == 0.25
        recorder = store.recorder(chat_id=7)
        record(recorder, stored_turn("new question", "new answer"))
        assert [h.chat_id for h in store.search("new answer")] == [7]
    with Store.open(path) as again:  # opening a current file changes nothing
        assert schema_version(path) == SCHEMA_VERSION and len(again.messages(7)) == 4


# The second schema's additions exactly as fastchat wrote them, and the bench table as `fastchat bench`
# created it on first use before it moved into the migrations (frozen here on purpose: never update them).
SCHEMA_V2 = """
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    content, content = 'messages', content_rowid = 'id', tokenize = 'trigram'
);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
CREATE INDEX replies_streaming ON replies (status) WHERE status = 'streaming';
PRAGMA user_version = 2;
"""
BENCH_TABLE_BEFORE_V3 = """
CREATE TABLE IF NOT EXISTS bench_runs (
    id              INTEGER PRIMARY KEY,
    bench_id        INTEGER NOT NULL,
    started_at      REAL NOT NULL,
    source          TEXT NOT NULL,
    model           TEXT,
    repeat          INTEGER NOT NULL,
    max_tokens      INTEGER,
    concurrency     INTEGER NOT NULL,
    requests        INTEGER NOT NULL,
    ok              INTEGER NOT NULL,
    failures        INTEGER NOT NULL,
    failure_kinds   TEXT NOT NULL DEFAULT '{}',
    tokens_exact    INTEGER NOT NULL DEFAULT 0,
    ttft_s          REAL,
    decode_tps      REAL,
    e2e_tps         REAL,
    total_s         REAL,
    output_tokens   REAL,
    aggregate_tps   REAL,
    summary         TEXT NOT NULL
)"""
BENCH_INDEX_BEFORE_V3 = "CREATE INDEX IF NOT EXISTS bench_runs_source_time ON bench_runs (source, started_at)"


def test_migrates_a_second_schema_file_keeping_its_bench_rows(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA_V1 + SCHEMA_V2)
    conn.execute(BENCH_TABLE_BEFORE_V3)
    conn.execute(BENCH_INDEX_BEFORE_V3)
    conn.execute("INSERT INTO chats VALUES (3, 'kept', 1000.0, 1000.0)")
    conn.execute("INSERT INTO messages VALUES (1, 3, 'user', 'still searchable', 1000.0)")
    insert = ("INSERT INTO bench_runs (bench_id, started_at, source, model, repeat, max_tokens, concurrency, requests, ok,"
              " failures, failure_kinds, tokens_exact, ttft_s, decode_tps, e2e_tps, total_s, output_tokens, aggregate_tps,"
              " summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    conn.execute(insert, (1_000_000, 1000.0, "fast", "fast-model", 5, 512, 1, 5, 5, 0, "{}", 1,
                          0.1, 1500.0, 1200.0, 0.45, 512.0, None, "{}"))
    conn.execute(insert, (1_000_000, 1000.0, "local", "llama", 5, 512, 1, 5, 4, 1, '{"cut": 1}', 0,
                          0.02, 60.0, 55.0, 8.5, 512.0, None, "{}"))
    conn.execute(insert, (2_000_000, 2000.0, "fast", "fast-model", 5, 512, 2, 10, 10, 0, "{}", 1,
                          0.12, 1400.0, 1100.0, 0.5, 512.0, 2600.0, "{}"))
    conn.commit()
    conn.close()

    with Store.open(path) as store:
        assert store.warning is None and schema_version(path) == SCHEMA_VERSION
        assert [c.title for c in store.chats()] == ["kept"] and [h.message_id for h in store.search("searchable")] == [1]
        rows = store.bench_history()
        assert [(r.bench_id, r.source, r.ok) for r in rows] == [
            (1_000_000, "fast", 5), (1_000_000, "local", 4), (2_000_000, "fast", 10)]
        assert rows[1].failure_kinds == {"cut": 1} and rows[1].tokens_exact is False and rows[0].tokens_exact is True
        assert store.latest_bench("fast").aggregate_tps == 2600.0
        assert StoreLedger(store).latency("local") == LatencyStats(0.02, 60.0, 4)
        new = store.save_bench(bench_result(3000.0))
        assert [r.bench_id for r in store.bench_history(["fast"])] == [1_000_000, 2_000_000, new]
    conn = sqlite3.connect(path)
    objects = conn.execute("SELECT type, name FROM sqlite_master WHERE tbl_name = 'bench_runs' ORDER BY name").fetchall()
    conn.close()
    assert objects == [("table", "bench_runs"), ("index", "bench_runs_source_time")]
    with Store.open(path) as again:  # opening a current file changes nothing
        assert schema_version(path) == SCHEMA_VERSION and len(again.bench_history()) == 5


SCHEMA_V3 = BENCH_TABLE_BEFORE_V3 + ";\n" + BENCH_INDEX_BEFORE_V3 + ";\nPRAGMA user_version = 3;\n"
"""The third schema's addition exactly as fastchat wrote it (the same statements as the bench's own, frozen)."""


def test_migrates_a_third_schema_file_keeping_everything_and_saying_how_replies_ended(tmp_path: Path) -> None:
    """Schema 4 keeps reasoning apart; replies that version 3 called complete although they were cut at the
    token limit, or had no text at all, get their honest status."""
    path = tmp_path / "history.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA_V1 + SCHEMA_V2 + SCHEMA_V3)
    conn.execute("INSERT INTO chats VALUES (5, 'before reasoning', 1000.0, 2000.0)")
    reply = ("INSERT INTO replies (message_id, prompt_id, source, model, status, finish_reason, ttft_s, decode_tps,"
             " output_tokens, tokens_exact, started_at, updated_at, ended_at) VALUES (?, ?, 'fast', 'm', ?, ?, 0.2,"
             " 900.0, ?, 1, 1000, 1001, 1001)")
    for n, (answer, status, finish, tokens) in enumerate([("a full answer", "complete", "stop", 40),
                                                          ("an answer cut", "complete", "length", 512),
                                                          ("\n\n", "complete", "stop", 300),
                                                          ("partial", "cut", None, 3)]):
        conn.execute("INSERT INTO messages VALUES (?, 5, 'user', ?, 1000.0)", (2 * n + 1, f"question {n}"))
        conn.execute("INSERT INTO messages VALUES (?, 5, 'assistant', ?, 1001.0)", (2 * n + 2, answer))
        conn.execute(reply, (2 * n + 2, 2 * n + 1, status, finish, tokens))
    conn.execute("INSERT INTO bench_runs (bench_id, started_at, source, repeat, concurrency, requests, ok, failures,"
                 " summary) VALUES (1, 1000.0, 'fast', 1, 1, 1, 1, 0, '{}')")
    conn.commit()
    conn.close()

    with Store.open(path) as store:
        assert store.warning is None and schema_version(path) == SCHEMA_VERSION
        messages = store.messages(5)
        assert [m.content for m in messages] == ["question 0", "a full answer", "question 1", "an answer cut",
                                                 "question 2", "\n\n", "question 3", "partial"]
        replies = [m.reply for m in messages if m.reply]
        assert [r.status for r in replies] == ["complete", "truncated", "empty", "cut"]
        assert [r.end_note for r in replies] == [None, "cut at the token limit", "no answer", None]
        assert all(m.reasoning == "" for m in messages)
        assert [(r.reasoning_tokens, r.time_to_answer_s, r.output_tokens) for r in replies][:2] == [
            (None, None, 40), (None, None, 512)]
        assert replies[1].line().endswith("· 512 tokens · cut at the token limit")
        assert [h.message_id for h in store.search("answer cut")] == [4]
        assert len(store.bench_history()) == 1
        assert store.latency_stats("fast").samples == 3  # every reply that ended normally was measured
        record(store.recorder(chat_id=5), stored_turn("new question", "new answer"))
        assert [m.content for m in store.messages(5)][-2:] == ["new question", "new answer"]
    with Store.open(path) as again:  # opening a current file changes nothing
        assert schema_version(path) == SCHEMA_VERSION and len(again.messages(5)) == 10


def test_a_newer_schema_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.close()
    with pytest.raises(StoreError, match="newer fastchat"):
        Store.open(path)
    assert path.exists() and not list(tmp_path.glob("*.corrupt-*"))


# -- damaged files ----------------------------------------------------------------------------


def test_a_file_that_is_not_a_database_is_kept_and_replaced(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    junk = b"this is not an SQLite file at all\n" * 200
    path.write_bytes(junk)
    with Store.open(path) as store:
        assert store.warning and "could not be read" in store.warning and "new, empty history" in store.warning
        kept = list(tmp_path.glob("history.db.corrupt-*"))
        assert len(kept) == 1 and kept[0].read_bytes() == junk and str(kept[0]) in store.warning
        record(store.recorder(), stored_turn("fresh start", "works"))
        assert store.take_warning() and store.take_warning() is None
    with Store.open(path) as again:  # no loop: the new file is fine
        assert again.warning is None and len(again.chats()) == 1
    assert len(list(tmp_path.glob("history.db.corrupt-*"))) == 1


def test_an_unopenable_path_is_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    path.mkdir()  # cannot be opened as a file, even by root
    (path / "inside").write_text("kept")
    with Store.open(path) as store:
        assert store.warning and store.chats() == []
    kept = list(tmp_path.glob("history.db.corrupt-*"))
    assert len(kept) == 1 and (kept[0] / "inside").read_text() == "kept"


def _wrecked_history(path: Path) -> int:
    """A history of 300 turns whose second half of pages is overwritten; returns its chat id."""
    with Store.open(path) as store:
        recorder = store.recorder()
        for n in range(300):
            record(recorder, stored_turn(f"question {n} " + "padding " * 40, f"answer {n} " + "words " * 40))
        chat_id = recorder.chat_id
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(path.read_bytes())
    pages = len(data) // page_size
    for page in range(pages // 2, pages):  # the header and the schema survive, the messages do not
        data[page * page_size:(page + 1) * page_size] = bytes([0xA5]) * page_size
    path.write_bytes(bytes(data))
    return chat_id


def test_damage_found_later_is_recovered_once(tmp_path: Path) -> None:
    """Issue 12: the readable half of the file is kept (it used to be replaced by an empty history)."""
    path = tmp_path / "history.db"
    chat_id = _wrecked_history(path)
    with Store.open(path) as store:
        assert store.warning is None  # the damage is not where opening looks
        kept = store.messages(chat_id)  # answered from the repaired file
        warning = store.take_warning()
        (corrupt,) = [p for p in tmp_path.glob("history.db.corrupt-*") if not p.name.endswith(("-wal", "-shm"))]
        assert warning == (f"{path} was damaged: 1 of 1 chats kept, at least 132 messages lost, some replies lost their "
                           f"meter line; the damaged file is kept as {corrupt}.")
        assert store.take_warning() is None
        assert len(kept) == 396 and [m.content for m in kept[:2]] == ["question 0 " + "padding " * 40,
                                                                      "answer 0 " + "words " * 40]
        assert [c.message_count for c in store.chats()] == [396]
        record(store.recorder(), stored_turn("after the damage", "saved fine"))
        assert store.chats()[0].title == "after the damage"
    with Store.open(path) as again:  # no loop
        assert again.warning is None and len(again.chats()) == 2
    assert len([p for p in tmp_path.glob("history.db.corrupt-*") if not p.name.endswith(("-wal", "-shm"))]) == 1


def test_a_recorder_survives_damage_mid_chat(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    chat_id = _wrecked_history(path)
    problems: list[str] = []
    with Store.open(path) as store:
        recorder = store.recorder(chat_id=chat_id, on_problem=problems.append)
        turn = record(recorder, stored_turn("continue the old chat", "still saved"))  # must not raise
        assert len(problems) == 1 and "kept as" in problems[0]
        (chat,) = store.chats()  # the old chat was kept, and the turn went on in it
        assert chat.id == chat_id == recorder.chat_id
        assert [m.content for m in store.messages(chat.id)][-2:] == ["continue the old chat", "still saved"]
        assert store.messages(chat.id)[-1].reply.status == turn.status == "complete"


# -- processes --------------------------------------------------------------------------------

WRITER = textwrap.dedent("""
    import asyncio, json, sys
    from fastchat_tui.config import Config, SourceConfig
    from fastchat_tui.session import Session
    from fastchat_tui.store import Store

    db, url, name, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    config = Config(default_source="fast", sources={"fast": SourceConfig("fast", "openai", url, "test-model")})
    problems = []
    store = Store.open(db)
    recorder = store.recorder(config, on_problem=problems.append)
    session = Session(config, recorder=recorder)

    def show(text):
        sys.stdout.write(text)
        sys.stdout.flush()

    async def main():
        for n in range(count):
            recorder.chat_id = None
            await session.send(f"{name} prompt {n}", on_text=show)
        await session.aclose()

    asyncio.run(main())
    print(json.dumps({"problems": problems}), file=sys.stderr)
""")


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, FASTCHAT_DATA_DIR=str(tmp_path / "data"), PYTHONPATH=str(ROOT / "src"))
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        env.pop(name, None)
    return env


def test_two_processes_write_at_once(tmp_path: Path, server: OpenAIServer) -> None:
    server.default = lambda request: Script(tokens=["tok"] * 30, rate_tps=3000)
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    db = tmp_path / "history.db"
    count = 25
    writers = [subprocess.Popen([sys.executable, str(script), str(db), server.url, name, str(count)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env(tmp_path), text=True)
               for name in ("alpha", "beta")]
    with Store.open(db) as reader:  # a third party reading while they write
        while any(w.poll() is None for w in writers):
            reader.chats(limit=20)
            reader.search("prompt")
            time.sleep(0.01)
    for writer in writers:
        _, err = writer.communicate(timeout=60)
        assert writer.returncode == 0, err
        assert json.loads(err.strip().splitlines()[-1]) == {"problems": []}
    with Store.open(db) as store:
        chats = store.chats()
        assert len(chats) == 2 * count
        assert {c.title for c in chats} == {f"{name} prompt {n}" for name in ("alpha", "beta") for n in range(count)}
        for chat in chats:
            messages = store.messages(chat.id)
            assert [m.content for m in messages] == [chat.title, "tok" * 30]
            assert messages[1].reply.status == "complete"
        assert len(store.search("alpha prompt")) == count


SLOW_START = ["Alpha ", "bravo ", "charlie "]


def _kill_mid_reply(tmp_path: Path, server: OpenAIServer, command: list[str], env: dict[str, str]) -> tuple[str, str]:
    """Run ``command``, SIGKILL it two seconds after the reply's fourth token; returns (printed, saved)."""
    later = [f"token{n} " for n in range(200)]
    server.push(Script(tokens=SLOW_START + later, stall_at=len(SLOW_START), stall_s=1.2, rate_tps=4))
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    printed = bytearray()
    seen = threading.Event()

    def read() -> None:
        while chunk := os.read(process.stdout.fileno(), 4096):
            printed.extend(chunk)
            if b"token0" in printed:
                seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert seen.wait(30), process.stderr.read1().decode() if process.poll() is not None else "no reply"
        time.sleep(2.0)  # token0 is now two seconds old: it must be on disk
        with Store.open(tmp_path / "data" / "history.db") as other:  # opening meanwhile leaves a live reply alone
            (live,) = [m for m in other.messages(other.chats()[0].id) if m.reply]
            assert live.reply.status == "streaming" and live.content.startswith("".join(SLOW_START))
        assert process.poll() is None, "the reply ended before the kill"
        os.kill(process.pid, signal.SIGKILL)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)
        reader.join(10)
    assert process.returncode == -signal.SIGKILL
    raw = sqlite3.connect(tmp_path / "data" / "history.db")
    rows = raw.execute("SELECT m.content, r.status, m.id FROM messages m JOIN replies r ON r.message_id = m.id").fetchall()
    parts = raw.execute("SELECT text FROM reply_parts WHERE kind = 'answer' ORDER BY id").fetchall()  # as streamed
    raw.close()
    assert len(rows) == 1
    content, status, _ = rows[0]
    saved = content + "".join(part for (part,) in parts)
    assert status == "streaming"  # as the killed process left it: not complete
    return printed.decode(), saved


def _check_after_kill(tmp_path: Path, printed: str, saved: str, prompt: str) -> None:
    assert saved.startswith("".join(SLOW_START) + "token0 ")
    assert printed.startswith(saved)
    with Store.open(tmp_path / "data" / "history.db") as store:  # the next start marks it
        assert store.warning is None
        chat = store.chats()[0]
        user, reply = store.messages(chat.id)
        assert user.content == prompt and reply.content == saved
        assert reply.reply.status == "cut" and reply.reply.incomplete
        assert reply.reply.error_kind == "interrupted" and reply.reply.ended_at is not None
        assert reply.reply.source == "fast" and reply.reply.ttft_s is not None


@pytest.mark.timing
def test_sigkill_mid_reply_loses_at_most_the_last_second(tmp_path: Path, server: OpenAIServer) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    db = tmp_path / "data" / "history.db"
    db.parent.mkdir()
    printed, saved = _kill_mid_reply(tmp_path, server, [sys.executable, str(script), str(db), server.url, "killed", "1"],
                                    _env(tmp_path))
    _check_after_kill(tmp_path, printed, saved, "killed prompt 0")


@pytest.mark.timing
def test_sigkill_during_fastchat_ask(tmp_path: Path, server: OpenAIServer) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'default_source = "fast"\n[sources.fast]\nkind = "openai"\nbase_url = "{server.url}"\n'
                      'model = "test-model"\n', encoding="utf-8")
    env = _env(tmp_path) | {"FASTCHAT_CONFIG": str(config)}
    ask = [sys.executable, "-m", "fastchat_tui", "ask", "--source", "fast"]
    probe = subprocess.run([*ask, "warm up"], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=60)
    assert probe.returncode == 0, probe.stderr
    db = tmp_path / "data" / "history.db"
    if not db.exists() or not sqlite3.connect(db).execute("SELECT count(*) FROM chats").fetchone()[0]:
        pytest.skip("fastchat ask does not record history yet (Session.open has no store)")
    db.unlink()
    for extra in ("-wal", "-shm"):
        db.with_name(db.name + extra).unlink(missing_ok=True)
    printed, saved = _kill_mid_reply(tmp_path, server, [*ask, "tell me a long story"], env)
    _check_after_kill(tmp_path, printed, saved, "tell me a long story")
