"""Race and compare (``fastchat_tui.race``) over real loopback HTTP: one prompt, several sources at once.

The servers' scripts differ by wide margins (tens of times in TTFT and rate), so which column wins
does not depend on how fast this machine is; the meter is checked against the servers' own records
of when they sent each token (the same ``perf_counter`` clock: the servers run in this process).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable
from contextlib import aclosing
from typing import Any

import pytest

from fastchat_tui.config import Config
from fastchat_tui.events import Attempt, Finished, Routed
from fastchat_tui.meter import Meter
from fastchat_tui.race import METRICS, ColumnEvent, Contender, Race, race, rank
from fastchat_tui.routing import Route
from fastchat_tui.sources.base import ErrorKind, TextDelta
from fastchat_tui.turn import SendOptions, Turn
from tests.helpers import session_for, source
from tests.race_servers import WatchfulOpenAIServer
from tests.servers import OpenAIServer, RecordedRequest, Script, ServerProcess, synthetic_tokens

RUNS = 3
AWS_ID = "AKIA" + "Z7FAKE" + "TESTKEY0" + "01"


async def run(the_race: Race, until: Callable[[ColumnEvent], bool] | None = None) -> dict[int, list[Any]]:
    """Every column's events, in order; stop (closing the race) once ``until`` holds for an event."""
    events: dict[int, list[Any]] = defaultdict(list)
    async with aclosing(the_race):
        async for item in the_race:
            events[item.column].append(item.event)
            if until is not None and until(item):
                break
    return events


def text_of(events: list[Any]) -> str:
    return "".join(e.text for e in events if type(e) is TextDelta)


def chat(server: OpenAIServer) -> RecordedRequest:
    (request,) = server.stream_requests()
    return request.wait()


# -- compare ----------------------------------------------------------------------------------

async def test_two_columns_stream_at_once_each_with_its_text_its_meter_and_a_ranking(spawn_server) -> None:
    fast, slow = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    fast_tokens, slow_tokens = synthetic_tokens(100), synthetic_tokens(40)
    fast.push(Script(tokens=fast_tokens, rate_tps=2000))
    slow.push(Script(tokens=slow_tokens, ttft_s=0.6, rate_tps=100))
    session = session_for(source("fast", fast.url, price_out=1.0), source("slow", slow.url, price_out=0.5))
    the_race = race(session, "hello", ["fast", ("slow", "slow-big")])
    assert the_race.labels == ["fast · fast-model", "slow · slow-big"]
    events = await run(the_race)

    for column, tokens in ((0, fast_tokens), (1, slow_tokens)):
        kinds = [type(e) for e in events[column]]
        assert kinds[:2] == [Routed, Attempt] and kinds[-1] is Finished and kinds.count(Finished) == 1
        assert text_of(events[column]) == "".join(tokens)
        turn = events[column][-1].turn
        assert turn is the_race.turns[column] and turn.status == "complete" and turn.text == "".join(tokens)
        assert turn.options.remember is False
    assert [t.source for t in the_race.turns if t] == ["fast", "slow"]
    assert chat(slow).model == "slow-big" and chat(fast).model == "fast-model"
    assert session.messages == []  # nothing is remembered until a reply is kept

    # Sent at once: the slow source had the request before the fast one had finished its reply.
    assert chat(slow).t_received < chat(fast).t_end
    # Each column's meter read its own server (timed against it in the test below).
    for column, server in ((0, fast), (1, slow)):
        meter, request = the_race.turns[column].meter, chat(server)  # type: ignore[union-attr]
        assert meter is not None and meter.t_send <= request.t_received
        reading = the_race.turns[column].reading()  # type: ignore[union-attr]
        assert reading is not None and reading.tokens_exact
        assert reading.output_tokens == len(request.send_times)
    assert the_race.turns[1].reading().ttft_s >= 0.6  # type: ignore[union-attr, operator]

    ranking = the_race.ranking()
    assert dict(ranking.winners) == {"ttft": (0,), "finish": (0,), "decode": (0,), "tokens": (1,), "cost": (1,)}
    assert ranking.first_to_finish == 0 and ranking.wins(1) == ("tokens", "cost")
    assert ranking.cell("cost", 0) == "$0.0001" and ranking.cell("tokens", 1) == "40 tokens"
    head, *rows = ranking.lines()
    assert head.split() == ["1", "fast", "2", "slow"]
    assert [row.split("  ")[0] for row in rows] == ["first token", "finish", "decode rate", "tokens", "cost"]
    assert rows[0].count("★") == 1 and rows[3].rstrip().endswith("★")
    assert ranking.as_dict()["winners"] == {"ttft": [0], "finish": [0], "decode": [0], "tokens": [1], "cost": [1]}
    await session.aclose()


@pytest.mark.timing
async def test_each_columns_meter_matches_its_servers_send_times_while_they_stream_together(no_proxy_env) -> None:
    """METRICS' accuracy (5 ms on TTFT, 3 % on decode rate) holds per column with two streams at once; the
    servers run in their own processes, the median of three races decides."""
    scripts = {"a": (1500, 0.05, 1500), "b": (500, 0.2, 500)}  # tokens, TTFT, rate
    servers = {name: ServerProcess("openai", tokens=synthetic_tokens(n), ttft_s=ttft, rate_tps=rate,
                                   models=[f"{name}-model"]).start() for name, (n, ttft, rate) in scripts.items()}
    try:
        session = session_for(*(source(name, server.url) for name, server in servers.items()))
        for name in servers:
            await session.source(name).probe()  # warm the connections, as the app does at start
        races = [race(session, "go", list(servers)) for _ in range(RUNS)]
        for each in races:
            await run(each)
        await session.aclose()
        records = {name: [r for r in server.wait_records(RUNS + 1) if r["method"] == "POST"]
                   for name, server in servers.items()}
    finally:
        for server in servers.values():
            server.stop()
    for column, name in enumerate(servers):
        turns = [each.turns[column] for each in races]
        assert all(turn is not None and turn.status == "complete" for turn in turns)
        readings = [turn.reading() for turn in turns if turn]
        true_ttft = [rec["t_first_sent"] - turn.meter.t_send for rec, turn in zip(records[name], turns)]  # type: ignore[union-attr]
        true_decode = [(len(rec["send_times"]) - 1) / (rec["t_last_sent"] - rec["t_first_sent"]) for rec in records[name]]
        ttft = statistics.median(r.ttft_s for r in readings if r and r.ttft_s is not None)
        decode = statistics.median(r.decode_tps for r in readings if r and r.decode_tps is not None)
        assert abs(ttft - statistics.median(true_ttft)) <= 0.005, (name, ttft, true_ttft)
        assert decode == pytest.approx(statistics.median(true_decode), rel=0.03), (name, decode, true_decode)


async def test_a_cut_and_a_rate_limit_fail_their_own_columns_only(spawn_server) -> None:
    servers = [spawn_server(OpenAIServer) for _ in range(4)]
    tokens = synthetic_tokens(100)
    servers[0].push(Script(tokens=tokens, rate_tps=2000))
    servers[1].push(Script(tokens=tokens, ttft_s=0.3, rate_tps=500))
    servers[2].push(Script(tokens=tokens, ttft_s=0.15, rate_tps=500, cut_after=20))
    servers[3].push(Script(status=429, headers={"Retry-After": "30"}))  # longer than the source waits by itself
    names = ["a", "b", "cut", "limited"]
    session = session_for(*(source(name, server.url) for name, server in zip(names, servers)))
    events = await run(race(session, "hello", names))

    turns = [events[column][-1].turn for column in range(4)]
    assert [turn.status for turn in turns] == ["complete", "complete", "cut", "error"]
    assert [sum(type(e) is Finished for e in events[column]) for column in range(4)] == [1, 1, 1, 1]
    assert turns[0].text == turns[1].text == "".join(tokens)
    assert text_of(events[2]) == turns[2].text == "".join(tokens[:20])
    assert turns[2].error.kind == ErrorKind.CUT and turns[3].error.kind == ErrorKind.RATE_LIMITED  # type: ignore[union-attr]
    assert turns[3].text == "" and len(servers[3].stream_requests()) == 1

    ranking = rank(turns, session.config)
    assert ranking.standings[2].ttft_s is not None and ranking.standings[3].ttft_s is None
    assert {s.column for s in ranking.standings if s.finish_s is not None} == {0, 1}
    assert (ranking.cell("finish", 2), ranking.cell("finish", 3), ranking.cell("ttft", 3)) == ("cut", "error", "–")
    assert ranking.winners["ttft"] == (0,) and ranking.winners["finish"] == (0,)
    assert ranking.winners["tokens"] == () and ranking.first_to_finish == 0  # equal token counts: no winner
    await session.aclose()


# -- race and hedge: the losers are cancelled and their servers see it ----------------------

async def test_race_mode_keeps_the_first_to_finish_and_closes_the_losers_connection(spawn_server) -> None:
    fast, slow = spawn_server(OpenAIServer), spawn_server(WatchfulOpenAIServer)
    fast.push(Script(tokens=synthetic_tokens(30), ttft_s=0.2, rate_tps=1000))
    slow.push(Script(tokens=synthetic_tokens(5000), rate_tps=100))  # 50 s if nobody stopped it
    session = session_for(source("fast", fast.url), source("slow", slow.url))
    the_race = race(session, "hello", ["fast", "slow"], mode="race")
    events = await run(the_race)

    assert the_race.winner == 0
    winner, loser = (events[column][-1].turn for column in (0, 1))
    assert winner.status == "complete" and loser.status == "cancelled"
    assert loser.text and text_of(events[1]) == loser.text  # what streamed before the cancel is kept
    request = chat(slow)
    assert request.outcome == "client_gone" and request.n in slow.disconnects
    assert len(request.send_times) < 5000
    await session.aclose()


async def test_a_hedge_keeps_the_first_to_start_and_drops_the_other_before_its_first_token(spawn_server) -> None:
    quick, late = spawn_server(OpenAIServer), spawn_server(WatchfulOpenAIServer)
    tokens = synthetic_tokens(200)
    quick.push(Script(tokens=tokens, rate_tps=1000))
    late.push(Script(tokens=tokens, ttft_s=30))
    session = session_for(source("quick", quick.url), source("late", late.url))
    the_race = race(session, "def f(", ["late", "quick"], mode="race", first="token")
    events = await run(the_race)

    assert the_race.winner == 1
    assert events[1][-1].turn.status == "complete" and text_of(events[1]) == "".join(tokens)  # the winner runs on
    dropped = events[0][-1].turn
    assert dropped.status == "cancelled" and dropped.text == "" and not any(type(e) is TextDelta for e in events[0])
    request = chat(late)
    assert request.outcome == "client_gone" and request.send_times == []
    assert request.n in late.disconnects  # seen while it still waited to send its first token
    await session.aclose()


async def test_cancelling_one_column_leaves_the_others_streaming(spawn_server) -> None:
    keeps, stopped = spawn_server(OpenAIServer), spawn_server(WatchfulOpenAIServer)
    tokens = synthetic_tokens(300)
    keeps.push(Script(tokens=tokens, ttft_s=0.3, rate_tps=1000))
    stopped.push(Script(tokens=synthetic_tokens(5000), rate_tps=100))
    session = session_for(source("keeps", keeps.url), source("stopped", stopped.url))
    the_race = race(session, "hello", ["keeps", "stopped"])
    events: dict[int, list[Any]] = defaultdict(list)
    async with aclosing(the_race):
        async for column, event in the_race:
            events[column].append(event)
            if column == 1 and type(event) is TextDelta and len(events[1]) == 3:
                the_race.cancel(1)
    assert events[0][-1].turn.status == "complete" and text_of(events[0]) == "".join(tokens)
    assert events[1][-1].turn.status == "cancelled"
    assert chat(stopped).outcome == "client_gone" and chat(stopped).n in stopped.disconnects
    await session.aclose()


async def test_leaving_the_race_cancels_every_column_and_closes_every_connection(spawn_server) -> None:
    servers = [spawn_server(WatchfulOpenAIServer) for _ in range(2)]
    for server in servers:
        server.push(Script(tokens=synthetic_tokens(5000), rate_tps=200))
    session = session_for(source("a", servers[0].url), source("b", servers[1].url))
    the_race = race(session, "hello", ["a", "b"])
    started: set[int] = set()

    def both_streaming(item: ColumnEvent) -> bool:
        if type(item.event) is TextDelta:
            started.add(item.column)
        return started == {0, 1}

    await run(the_race, until=both_streaming)
    assert [turn.status for turn in the_race.turns if turn] == ["cancelled", "cancelled"]
    for server in servers:
        assert chat(server).outcome == "client_gone" and chat(server).n in server.disconnects
    await session.aclose()


async def test_a_race_cancelled_before_it_began_ends_every_column_without_sending(spawn_server) -> None:
    server = spawn_server(OpenAIServer)
    session = session_for(source("a", server.url), source("b", server.url))
    the_race = race(session, "hello", ["a", "b"])
    the_race.cancel()
    events = await run(the_race)
    assert [[type(e) for e in events[column]] for column in (0, 1)] == [[Finished], [Finished]]
    assert [turn.status for turn in the_race.turns if turn] == ["cancelled", "cancelled"]
    assert server.stream_requests() == [] and the_race.ranking().first_to_finish is None
    await session.aclose()


# -- the data boundary ------------------------------------------------------------------------

async def test_a_sensitive_prompt_never_reaches_a_hosted_column(spawn_server) -> None:
    local, hosted = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    local.push(Script(tokens=["kept ", "here"]))
    session = session_for(source("local", local.url, "local"), source("hosted", hosted.url, "hosted"))
    prompt = f"why does boto3 reject {AWS_ID}?"
    for mode in ("compare", "race"):
        local.push(Script(tokens=["kept ", "here"]))
        the_race = race(session, prompt, ["hosted", "local"], mode=mode, first="token")  # type: ignore[arg-type]
        events = await run(the_race)
        assert [s.source for s in the_race.ranking().standings] == ["hosted", "local"]  # the refused column is named
        refused = events[0]
        assert [type(e) for e in refused] == [Finished]  # refused before anything was sent
        assert refused[0].turn.status == "error" and refused[0].turn.error.kind == ErrorKind.SENSITIVE
        assert AWS_ID not in (refused[0].turn.masked_prompt or "")
        assert events[1][-1].turn.status == "complete" and text_of(events[1]) == "kept here"
    assert hosted.stream_requests() == []
    await session.aclose()


# -- keeping one reply --------------------------------------------------------------------------

async def test_the_kept_reply_becomes_the_conversations_answer_and_another_can_replace_it(spawn_server) -> None:
    one, two = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    one.push(Script(tokens=["first ", "answer"]), Script(tokens=["next"]))
    two.push(Script(tokens=["second ", "answer"]))
    session = session_for(source("one", one.url), source("two", two.url), source("dead", "http://127.0.0.1:9"))
    session.messages = [{"role": "system", "content": "be brief"}]
    the_race = race(session, "question", ["one", "two", "dead"])
    await run(the_race)
    assert the_race.turns[2].status == "error"  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="column 3"):
        the_race.keep(2)

    the_race.keep(1)
    assert session.messages[1:] == [{"role": "user", "content": "question"},
                                    {"role": "assistant", "content": "second answer"}]
    the_race.keep(0)
    the_race.keep(0)
    assert session.messages[1:] == [{"role": "user", "content": "question"},
                                    {"role": "assistant", "content": "first answer"}]
    assert the_race.kept == 0
    await session.send("and then?", source="one")
    sent = [m["content"] for m in one.stream_requests()[-1].json["messages"]]
    assert sent == ["be brief", "question", "first answer", "and then?"]

    with pytest.raises(ValueError):
        session.keep(Turn("q", status="cancelled"))
    await session.aclose()


# -- the ranking, pure --------------------------------------------------------------------------

def finished_turn(name: str, ttft: float, seconds: float, tokens: int, status: str = "complete") -> Turn:
    meter = Meter(100.0)
    for index in range(tokens):
        meter.text(100.0 + ttft + (seconds - ttft) * index / max(tokens - 1, 1))
    meter.usage(tokens, 10)
    meter.done(100.0 + seconds)
    return Turn("q", SendOptions(source=name), source=name, model=f"{name}-model", parts=["x"] * tokens,
                status=status, meter=meter)


def test_ties_as_shown_all_win_and_a_lone_figure_wins_nothing() -> None:
    config = Config(sources={n: source(n, "http://127.0.0.1:1", price_out=1.0) for n in "abc"})
    turns = [finished_turn("a", 0.1201, 1.0, 50), finished_turn("b", 0.1203, 2.0, 50), finished_turn("c", 0.3, 1.5, 80)]
    ranking = rank(turns, config)
    assert ranking.winners["ttft"] == (0, 1) and ranking.winners["tokens"] == (0, 1)
    assert ranking.winners["finish"] == (0,) and ranking.first_to_finish == 0
    assert set(ranking.winners) == set(METRICS)

    alone = rank([finished_turn("a", 0.1, 1.0, 50), Turn("q", source="b", status="cancelled")], config)
    assert all(winners == () for winners in alone.winners.values())
    assert alone.first_to_finish == 0 and alone.cell("finish", 1) == "cancelled" and alone.cell("ttft", 1) == "–"

    truncated = rank([finished_turn("a", 0.1, 1.0, 50, "truncated"), finished_turn("b", 0.2, 0.5, 50, "cut")], config)
    assert truncated.standings[1].finish_s is None and truncated.first_to_finish == 0


def test_contenders_and_options() -> None:
    session = session_for(source("a", "http://127.0.0.1:1"))
    the_race = race(session, "q", ["a", ("a", "big"), Contender("a", route=Route("a", "r", "completion"))],
                    SendOptions(max_tokens=9, remember=True, model="ignored"))
    assert [(o.source, o.model, o.max_tokens, o.remember) for o in map(the_race.options_for, range(3))] == [
        ("a", None, 9, False), ("a", "big", 9, False), ("a", None, 9, False)]
    assert the_race.options_for(2).route == Route("a", "r", "completion")
    with pytest.raises(ValueError):
        race(session, "q", [])
    with pytest.raises(ValueError):
        race(session, "q", ["a"], mode="fastest")  # type: ignore[arg-type]
