"""``fastchat ask --race`` and ``--compare`` (issue 15, "From the shell"), run as the real command in a subprocess
against loopback servers that record when a client goes away (:mod:`tests.race_servers`)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from fastchat_tui.store import Store
from fastchat_tui.store.db import default_path
from tests.helpers import child_env, fastchat
from tests.race_servers import WatchfulOpenAIServer
from tests.servers import Script

BOUND_S = 60.0
SLOW_TTFT_S = 30.0
"""The loser of a race waits this long before its first token: a race that ends much sooner cancelled it."""


def configure(tmp_path: Path, servers: dict[str, tuple[WatchfulOpenAIServer, str]]) -> dict[str, str]:
    """A config with one openai source per server (``name: (server, tags)``), and the child's environment."""
    config = tmp_path / "config.toml"
    config.write_text("".join(
        f'[sources.{name}]\nkind = "openai"\nbase_url = "{server.url}"\nmodel = "{name}-model"\n'
        f'api_key_env = "FASTCHAT_TEST_KEY"\ntags = [{tags}]\n' for name, (server, tags) in servers.items()),
        encoding="utf-8")
    # FASTCHAT_DATA_DIR is the test's own (conftest), so the store opened here is the child's
    return child_env(config, FASTCHAT_TEST_KEY="test-key-0000")


@pytest.fixture
def fast(spawn_server) -> WatchfulOpenAIServer:
    server: WatchfulOpenAIServer = spawn_server(WatchfulOpenAIServer, models=["fast-model", "other-model"])
    server.default = Script(tokens=["fast ", "answer"], rate_tps=1000)
    return server


@pytest.fixture
def slow(spawn_server) -> WatchfulOpenAIServer:
    server: WatchfulOpenAIServer = spawn_server(WatchfulOpenAIServer, models=["slow-model"])
    server.default = Script(tokens=["slow ", "answer ", "here"], ttft_s=0.3, rate_tps=100)
    return server


@pytest.fixture
def env(tmp_path: Path, fast: WatchfulOpenAIServer, slow: WatchfulOpenAIServer) -> dict[str, str]:
    return configure(tmp_path, {"fast": (fast, '"hosted"'), "slow": (slow, '"local"')})


def test_race_prints_only_the_winners_text_and_the_loser_sees_the_disconnect(env, fast, slow):
    slow.default = Script(tokens=["slow ", "answer"], ttft_s=SLOW_TTFT_S)
    started = time.monotonic()
    done = fastchat(env, "ask", "--race", "fast,slow", "which is faster?")
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert done.stdout == "fast answer\n"
    assert took < SLOW_TTFT_S  # the command did not wait for the loser
    (request,) = slow.stream_requests()
    request.wait(BOUND_S)
    assert request.outcome == "client_gone" and request.send_times == []  # cancelled before its first token
    winner_done = fast.t_last_sent
    assert winner_done is not None
    assert slow.disconnects[request.n] < winner_done + SLOW_TTFT_S / 2  # closed at once, not at its end
    lines = done.stderr.splitlines()
    assert lines[0].startswith("fast · fast-model · TTFT ") and lines[1].startswith("slow · slow-model · ")
    assert lines[1].endswith("cancelled") and len(lines) == 2


def test_compare_prints_every_reply_under_its_heading_then_the_ranking(env, fast, slow):
    done = fastchat(env, "ask", "--compare", "slow,fast", "which is faster?")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    slow_at = out.index("---\n\n**slow · slow-model**\n\nslow answer here\n")
    fast_at = out.index("---\n\n**fast · fast-model (kept)**\n\nfast answer\n")  # the first to finish is kept
    ranking = out.index("---\n\n**Ranking**\n")
    assert slow_at < fast_at < ranking
    assert not any(line.startswith("#") for line in out.splitlines())  # issue 26.18: the replies' levels are theirs
    table = out[out.index("**Ranking**\n"):].splitlines()[2:]
    assert table[0].split() == ["1", "slow", "2", "fast"]
    assert [row.split()[0] for row in table[1:]] == ["first", "finish", "decode", "tokens", "cost"]
    first_token = [cell.strip() for cell in table[1].split("  ") if cell.strip()]
    assert first_token[0] == "first token" and first_token[2].endswith("★") and "★" not in first_token[1]
    assert len(slow.stream_requests()) == len(fast.stream_requests()) == 1
    metered = sorted(line.split(" · ")[0] for line in done.stderr.splitlines())
    assert metered == ["fast", "slow"]  # each column's meter line on stderr


def test_json_gives_one_object_per_source_and_the_ranking(env, fast, slow):
    done = fastchat(env, "ask", "--json", "--compare", "fast,slow", "which is faster?")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["mode"] == "compare" and result["kept"] == 0 and isinstance(result["chat_id"], int)
    replies = result["sources"]
    assert [(r["column"], r["source"], r["model"], r["text"], r["status"], r["kept"]) for r in replies] == [
        (0, "fast", "fast-model", "fast answer", "complete", True),
        (1, "slow", "slow-model", "slow answer here", "complete", False)]
    assert all(r["ttft_ms"] is not None and r["output_tokens"] > 0 for r in replies)
    ranking = result["ranking"]
    assert [c["source"] for c in ranking["columns"]] == ["fast", "slow"] and ranking["first_to_finish"] == 0
    assert ranking["winners"]["ttft"] == [0] and set(ranking["winners"]) == {"ttft", "finish", "decode", "tokens",
                                                                             "cost"}

    raced = json.loads(fastchat(env, "ask", "--json", "--race", "fast,slow", "again").stdout)
    assert raced["mode"] == "race" and raced["kept"] == 0
    assert [r["status"] for r in raced["sources"]] == ["complete", "cancelled"]


@pytest.mark.parametrize("mode", ["--race", "--compare"])
def test_a_429_in_one_column_does_not_stop_the_other(env, fast, slow, mode):
    fast.default = Script(status=429, headers={"Retry-After": "30"})
    done = fastchat(env, "ask", mode, "fast,slow", "which is faster?")
    assert done.returncode == 0, done.stderr  # the kept reply (the only one) is complete
    assert "slow answer here" in done.stdout and "429" in done.stderr
    if mode == "--compare":
        assert "**fast · fast-model**\n\n*(no answer: " in done.stdout and "**slow · slow-model (kept)**" in done.stdout
    else:
        assert done.stdout == "slow answer here\n"


def test_no_column_answering_is_exit_code_1(env, fast, slow):
    fast.default = slow.default = Script(status=500)
    done = fastchat(env, "ask", "--race", "fast,slow", "hello")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("fastchat: ") == 2  # each column says why


def test_history_holds_the_alternatives_and_ask_c_continues_from_the_kept_reply(env, fast, slow):
    done = fastchat(env, "ask", "--json", "--compare", "fast,slow", "which is faster?")
    chat = json.loads(done.stdout)["chat_id"]
    with Store.open(default_path()) as store:
        kept = store.messages(chat)
        everything = store.messages(chat, alternatives=True)
    assert [(m.role, m.content) for m in kept] == [("user", "which is faster?"), ("assistant", "fast answer")]
    replies = [m for m in everything if m.reply is not None]
    assert [(m.content, m.reply.source, m.reply.alternative) for m in replies] == [  # type: ignore[union-attr]
        ("fast answer", "fast", False), ("slow answer here", "slow", True)]
    assert all(m.reply.ttft_s is not None for m in replies)  # type: ignore[union-attr]

    follow = fastchat(env, "ask", "-c", "-s", "slow", "and then?")
    assert follow.returncode == 0, follow.stderr
    sent = [m["content"] for m in slow.stream_requests()[-1].json["messages"]]
    assert sent == ["which is faster?", "fast answer", "and then?"]  # the kept reply alone is the context
    with Store.open(default_path()) as store:
        assert [m.content for m in store.messages(chat)][-2:] == ["and then?", "slow answer here"]


def test_the_race_winner_is_the_reply_kept(env, fast, slow):
    fastchat(env, "ask", "--race", "slow,fast", "which is faster?")
    with Store.open(default_path()) as store:
        (chat,) = store.chats(limit=1)
        assert [m.content for m in store.messages(chat.id)] == ["which is faster?", "fast answer"]
        alternatives = [m for m in store.messages(chat.id, alternatives=True) if m.reply and m.reply.alternative]
        assert [(m.reply.source, m.reply.status) for m in alternatives] == [("slow", "cancelled")]  # type: ignore[union-attr]


def test_a_sensitive_prompt_is_refused_for_the_hosted_column_only(env, fast, slow):
    done = fastchat(env, "ask", "--compare", "fast,slow", "why does this fail? DB_PASSWORD=hunter2isgreat")
    assert done.returncode == 0, done.stderr  # the private column answered, and its reply is kept
    assert fast.stream_requests() == [] and len(slow.stream_requests()) == 1
    assert "**fast · fast-model**\n\n*(no answer: " in done.stdout and "not sent" in done.stdout
    assert "**slow · slow-model (kept)**\n\nslow answer here\n" in done.stdout
    assert "hunter2isgreat" not in done.stderr


def test_entries_may_name_a_model_resolved_as_dash_m_resolves_it(env, fast, slow):
    done = fastchat(env, "ask", "--json", "--compare", "fast/other-model,slow-model", "hi")
    assert done.returncode == 0, done.stderr
    assert [(r["source"], r["model"]) for r in json.loads(done.stdout)["sources"]] == [
        ("fast", "other-model"), ("slow", "slow-model")]
    assert fast.stream_requests()[-1].json["model"] == "other-model"


@pytest.mark.parametrize(("args", "says"), [
    (("--race", "fast"), "name at least two sources"),
    (("--race", "fast,fast/fast-model"), "fast · fast-model is named twice"),
    (("--compare", "fast,nosuch-model"), "no source serves 'nosuch-model'"),
    (("--race", "fast,slow", "-s", "fast"), "--race names its sources itself"),
    (("--compare", "fast,slow", "-m", "fast-model"), "--compare names its sources itself"),
    (("--race", "fast,slow", "--compare", "fast,slow"), "not allowed with argument"),
])
def test_a_wrong_list_is_a_usage_error(env, fast, slow, args: tuple[str, ...], says: str):
    done = fastchat(env, "ask", *args, "hi")
    assert done.returncode == 2 and says in done.stderr, done.stderr
    assert fast.stream_requests() == [] and slow.stream_requests() == []
