"""The router's decisions: rules from TOML, budgets on a fake clock, cool-down, measured speed, and `fastchat route`."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from fastchat_tui import cli
from fastchat_tui.attachment import Attachment
from fastchat_tui.classify import find_sensitive
from fastchat_tui.config import ConfigError, SourceConfig, load
from fastchat_tui.meter import Reading
from fastchat_tui.router import Router, fallback_text, status_text
from fastchat_tui.routing import LatencyStats, MemoryLedger, Request, Route, RouterSettings, Rule
from fastchat_tui.session import Session
from fastchat_tui.sources.base import ErrorKind, SourceError
from tests.clock import FakeClock
from tests.helpers import child_env, fastchat

AWS_ID = "AKIA" + "Z7FAKE" + "TESTKEY0" + "01"

CONFIG = """\
default_source = "auto"

[sources.local]
kind = "ollama"
base_url = "http://127.0.0.1:11434"
model = "qwen2.5-coder:7b"

[sources.fast]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "fast-model"
tags = ["hosted", "fast"]
price_in = 0.6
price_out = 1.2
monthly_budget = 10

[sources.regular]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "regular-model"
tags = ["hosted"]
"""


def mid_month(year: int = 2026, month: int = 5, day: int = 15) -> float:
    """Epoch seconds at local noon on the given day (well away from any month boundary)."""
    return dt.datetime(year, month, day, 12, 0, 0).timestamp()


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def make_router(tmp_path: Path, extra: str = "", clock: FakeClock | None = None, ledger: MemoryLedger | None = None) -> Router:
    config = load(write(tmp_path, CONFIG + extra), env={})
    return Router.from_config(config, ledger=ledger or MemoryLedger(), clock=clock or FakeClock(mid_month()))


def route(router: Router, prompt: str, **kwargs) -> Route:
    return router.route(Request(prompt, **kwargs))


# -- default rules ---------------------------------------------------------------------------


def test_default_rules_send_each_kind_where_the_issue_says(tmp_path: Path) -> None:
    router = make_router(tmp_path)
    r = route(router, "complete this function:\ndef add(a, b):")
    assert (r.task, r.source) == ("completion", "local")
    assert r.fallbacks == ["fast", "regular"]
    r = route(router, "Write a detailed article about B-trees")
    assert (r.task, r.source, r.fallbacks) == ("long", "fast", ["regular", "local"])
    r = route(router, "what is a monad?")
    assert (r.task, r.source) == ("chat", "fast")  # both hosted are allowed; fast is predicted quicker
    assert "predicted" in r.reason and "regular" in r.reason
    r = route(router, "Is this right?", hint="review")
    assert r.task == "review" and r.source in ("fast", "regular")


def test_sensitive_routes_have_no_hosted_source_and_say_why(tmp_path: Path) -> None:
    router = make_router(tmp_path)
    decision = router.decide(Request(f"why does boto3 reject {AWS_ID}?"))
    r = decision.route
    assert (r.task, r.source, r.fallbacks) == ("sensitive", "local", [])
    assert "AWS access key" in r.reason and "never sent to a hosted source" in r.reason
    assert AWS_ID not in r.reason
    assert decision.skipped == {}  # the default rule only ever names local sources


def test_sensitive_without_any_local_source_fails_clearly() -> None:
    hosted = {"fast": SourceConfig("fast", "openai", "http://127.0.0.1:9/v1", "m", tags=["hosted", "fast"])}
    router = Router(hosted)
    with pytest.raises(SourceError) as info:
        router.route(Request("DB_PASSWORD=" + "Tr0ub4dor" + "-fake-3x"))
    assert "sensitive" in info.value.message and "local" in info.value.message
    assert "Tr0ub4dor" not in info.value.message


def test_a_secret_earlier_in_the_conversation_keeps_the_chat_local(tmp_path: Path) -> None:
    config = load(write(tmp_path, CONFIG), env={})
    session = Session(config, router=Router.from_config(config, ledger=MemoryLedger(), clock=FakeClock(mid_month())))
    session.messages = [{"role": "user", "content": f"my key is {AWS_ID}"}, {"role": "assistant", "content": "Noted."}]
    r = session.route("and what region should I use?")  # the session hands the router the earlier messages
    assert (r.task, r.source, r.fallbacks) == ("sensitive", "local", [])
    assert "earlier message" in r.reason


def test_attachments_and_hints_from_the_session(tmp_path: Path) -> None:
    router = make_router(tmp_path)
    stdin = SimpleNamespace(name="stdin", text="x" * 40_000)
    r = route(router, "summarize", attachments=(stdin,))
    assert r.task == "long" and "large attachment stdin" in r.reason
    r = route(router, "what changed?", attachments=(Attachment("deploy/.env.production", "A=1\n"),))
    assert r.task == "sensitive"
    r = route(router, "what changed?", attachments=(Attachment(".env.example", "API_KEY=\n"),))
    assert r.task == "chat"


# -- rules from TOML -------------------------------------------------------------------------


def test_rules_from_toml_come_first_and_defaults_fill_the_rest(tmp_path: Path) -> None:
    router = make_router(tmp_path, """
[router]
default = "regular"
long_max_tokens = 1000

[[router.rules]]
task = "chat"
match = '(?i)\\bsql\\b'
source = "local"
fallbacks = ["regular"]

[[router.rules]]
task = ["long", "review"]
max_chars = 200
source = ["regular", "fast"]
""")
    r = route(router, "how do I write this SQL join?")
    assert (r.source, r.fallbacks) == ("local", ["regular"]) and "rule 1" in r.reason
    r = route(router, "hello there")
    assert r.source == "regular" and r.fallbacks == ["fast", "local"]  # [router] default for chat
    r = route(router, "Summarize the design", max_tokens=1500)
    assert r.task == "long" and "rule 2" in r.reason and set([r.source, *r.fallbacks]) == {"regular", "fast"}
    r = route(router, "Write a detailed article about B-trees. " + "Context: " + "words " * 60)
    assert r.task == "long" and r.source == "fast" and "rule" not in r.reason  # over max_chars: the default rule


def test_a_star_rule_never_captures_sensitive_prompts(tmp_path: Path) -> None:
    router = make_router(tmp_path, """
[[router.rules]]
task = "*"
source = "fast"
""")
    assert route(router, "hello").source == "fast"
    r = route(router, f"key {AWS_ID}")
    assert (r.source, r.fallbacks) == ("local", [])


def test_user_sensitive_patterns_and_paths(tmp_path: Path) -> None:
    router = make_router(tmp_path, """
[router]
sensitive_patterns = ['\\bPROJ-[0-9]{5}\\b']
sensitive_paths = ["*.secret.yaml", "**/private/**"]
""")
    assert route(router, "summarize ticket PROJ-12345 for me").task == "sensitive"
    assert route(router, "ok", attachments=(Attachment("conf/db.secret.yaml", "a: 1"),)).task == "sensitive"
    assert route(router, "ok", attachments=(Attachment("docs/private/notes.md", "hello"),)).task == "sensitive"
    assert route(router, "ok", attachments=(Attachment("docs/public/notes.md", "hello"),)).task == "chat"


def test_find_sensitive_returns_every_finding_of_the_request_and_file_names_match_in_any_case() -> None:
    """Issue 25: before, the first finding was all a request reported, and ``ID_RSA`` or ``.ENV`` were sent."""
    password = "hunter2" + "isgreat"
    findings = find_sensitive(f"boto3 rejects {AWS_ID}", (Attachment("deploy/ID_RSA", "ssh key"),
                                                          Attachment("KEY.PEM", f"DB_PASSWORD={password}")),
                              (f"curl -u deploy:{password} https://ci.example.com",))
    assert [str(finding) for finding in findings] == [
        "AWS access key in the prompt, line 1",
        "file name matches sensitive path 'id_rsa*' in attachment deploy/ID_RSA",
        "file name matches sensitive path '*.pem' in attachment KEY.PEM",
        "secret assignment (DB_PASSWORD=…) in attachment KEY.PEM, line 1",
        "password on a command line (curl) in an earlier message of this conversation, line 1",
    ]
    assert find_sensitive("a plain question") == ()


@pytest.mark.parametrize(
    ("extra", "line", "key", "words"),
    [
        ('\n[router]\ncooldown_s = "long"\n', 24, "router.cooldown_s", "number"),
        ('\n[router]\nfallback = ["fast"]\n', 24, "router.fallback", "unknown key"),
        ('\n[[router.rules]]\ntask = "chat"\nsource = "nowhere"\n', 25, "router.rules[1].source", "no source named 'nowhere'"),
        ('\n[[router.rules]]\ntask = "chat"\nsource = "local"\n\n[[router.rules]]\ntask = "poetry"\nsource = "local"\n',
         28, "router.rules[2].task", "unknown task kind 'poetry'"),
        ('\n[[router.rules]]\ntask = "sensitive"\nsource = "local"\nfallbacks = ["fast"]\n', 26,
         "router.rules[1].fallbacks", "not tagged 'local'"),
        ('\n[[router.rules]]\ntask = "chat"\nmatch = "(unclosed"\nsource = "local"\n', 25, "router.rules[1].match",
         "not a valid regular expression"),
        ('\n[[router.rules]]\nsource = "local"\n', 23, "router.rules[1]", "missing 'task'"),
        ('\n[router]\nsensitive_patterns = ["[a-"]\n', 24, "router.sensitive_patterns", "not a valid regular expression"),
        ("\n[router]\nsensitive_patterns = ['(a+)+$']\n", 24, "router.sensitive_patterns", "exponential time"),
        ("\n[router]\nsensitive_patterns = ['ACME-[0-9]{6}',\n  '(\\w+\\s?)*$']\n", 24, "router.sensitive_patterns",
         "nested quantifiers"),
        ('\n[[router.rules]]\ntask = "chat"\nmatch = "(a|aa)+$"\nsource = "local"\n', 25, "router.rules[1].match",
         "overlapping alternation"),
    ],
)
def test_router_config_errors_name_file_line_and_key(tmp_path: Path, extra: str, line: int, key: str, words: str) -> None:
    with pytest.raises(ConfigError) as info:  # load checks [router] with the rest of the file
        load(write(tmp_path, CONFIG + extra), env={})
    error = info.value
    assert error.path == tmp_path / "config.toml"
    assert (error.line, error.key) == (line, key)
    assert words in error.message


def test_source_prices_are_validated(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(write(tmp_path, CONFIG.replace("price_in = 0.6", "price_in = -1")), env={})
    assert info.value.key == "sources.fast.price_in" and info.value.line == 13
    config = load(write(tmp_path, CONFIG), env={})
    fast = config.sources["fast"]
    assert (fast.price_in, fast.price_out, fast.monthly_budget) == (0.6, 1.2, 10.0)
    assert config.sources["regular"].monthly_budget is None


# -- budgets on a fake clock -----------------------------------------------------------------


def test_budget_warns_past_80_percent_and_skips_past_100(tmp_path: Path) -> None:
    clock, ledger = FakeClock(mid_month(2026, 5)), MemoryLedger()
    router = make_router(tmp_path, clock=clock, ledger=ledger)
    ledger.add_spend("fast", 7.0, mid_month(2026, 5, 2))
    r = route(router, "hello")
    assert r.source == "fast" and r.warnings == []
    ledger.add_spend("fast", 1.5, mid_month(2026, 5, 10))
    r = route(router, "hello")
    assert r.source == "fast" and r.warnings == ["fast has used 85% of its $10.00 monthly budget"]
    ledger.add_spend("fast", 2.0, mid_month(2026, 5, 14))
    r = route(router, "hello")
    assert r.source == "regular" and "fast" not in r.fallbacks
    assert "skipped fast: over its monthly budget ($10.50 of $10.00)" in r.reason
    long = route(router, "Write a detailed article about B-trees")
    assert long.source == "regular" and "fast over its monthly budget" in long.reason
    hand = router.manual(Request("hello"), "fast")
    assert hand.source == "fast" and hand.warnings == ["fast is over its monthly budget: $10.50 of $10.00"]
    clock.t = mid_month(2026, 6, 3)  # a new month: the budget starts again
    r = route(router, "hello")
    assert r.source == "fast" and r.warnings == []


def test_spend_is_learned_from_exact_token_counts(tmp_path: Path) -> None:
    clock, ledger = FakeClock(mid_month()), MemoryLedger()
    router = make_router(tmp_path, clock=clock, ledger=ledger)
    exact = Reading(0.2, None, 900.0, 800.0, 1_000_000, True, 1.5, None, 2_000_000)
    router.observe("fast", exact)
    assert ledger.spend_this_month("fast", clock.t) == pytest.approx(2 * 0.6 + 1 * 1.2)
    estimated = Reading(0.2, None, 900.0, 800.0, 5_000_000, False, 1.5, None, None)
    router.observe("fast", estimated)  # estimated counts are not billed
    assert ledger.spend_this_month("fast", clock.t) == pytest.approx(2.4)
    router.observe("regular", exact)  # no price: no spend
    assert ledger.spend_this_month("regular", clock.t) == 0.0


def test_every_source_over_budget_fails_in_auto_but_not_by_hand() -> None:
    sources = {"fast": SourceConfig("fast", "openai", "http://127.0.0.1:9/v1", "m", tags=["hosted", "fast"], monthly_budget=1.0)}
    ledger = MemoryLedger()
    router = Router(sources, ledger=ledger, clock=FakeClock(mid_month()))
    ledger.add_spend("fast", 3.0, mid_month())
    with pytest.raises(SourceError, match="over its monthly budget"):
        router.route(Request("hello"))
    assert router.manual(Request("hello"), "fast").source == "fast"


# -- cool-down -------------------------------------------------------------------------------


def test_a_source_that_keeps_failing_cools_down_and_comes_back(tmp_path: Path) -> None:
    clock = FakeClock(mid_month())
    router = make_router(tmp_path, clock=clock)
    router.record("fast", False, ErrorKind.UNREACHABLE)
    assert route(router, "hello").source == "fast"  # one failure is not a pattern
    router.record("fast", False, ErrorKind.UNREACHABLE)
    r = route(router, "hello")
    assert r.source == "regular" and r.fallbacks == ["local", "fast"]  # cooled: last resort only
    assert router.cooling("fast") == pytest.approx(30)
    clock.t += 29
    assert route(router, "hello").source == "regular"
    clock.t += 2
    assert route(router, "hello").source == "fast"  # cool-down over: tried again
    router.record("fast", False, ErrorKind.SERVER)
    assert router.cooling("fast") == pytest.approx(60)  # still failing: twice as long
    router.record("fast", True)
    assert router.cooling("fast") == 0 and route(router, "hello").source == "fast"


def test_auth_cools_at_once_and_a_long_retry_after_is_honoured(tmp_path: Path) -> None:
    router = make_router(tmp_path)
    router.record("fast", False, "auth")
    assert router.cooling("fast") == pytest.approx(30)
    router.record("regular", False, ErrorKind.RATE_LIMITED, retry_after=120)
    assert router.cooling("regular") == pytest.approx(120)
    r = route(router, "hello")
    assert r.source == "local" and r.fallbacks == ["fast", "regular"]
    assert "cooling down" in r.reason
    router.record("local", False, ErrorKind.NOT_FOUND)  # a missing model is a config problem, not an outage
    assert router.cooling("local") == 0


def test_sensitive_prompt_with_its_local_source_cooling_still_stays_local(tmp_path: Path) -> None:
    router = make_router(tmp_path)
    router.record("local", False, ErrorKind.UNREACHABLE)
    router.record("local", False, ErrorKind.UNREACHABLE)
    r = route(router, f"key {AWS_ID}")
    assert (r.source, r.fallbacks) == ("local", [])
    assert "cooling down" in r.reason


# -- learning from measurements --------------------------------------------------------------


def test_the_fastest_predicted_source_wins_and_the_reason_says_so(tmp_path: Path) -> None:
    ledger = MemoryLedger()
    router = make_router(tmp_path, ledger=ledger)
    ledger.stats["fast"] = LatencyStats(ttft_s=2.0, decode_tps=100.0, samples=5)
    ledger.stats["regular"] = LatencyStats(ttft_s=0.3, decode_tps=900.0, samples=5)
    decision = router.decide(Request("what is a monad?"))
    assert decision.route.source == "regular"
    assert decision.predictions["regular"] == pytest.approx(0.3 + 400 / 900)
    assert decision.predictions["fast"] == pytest.approx(2.0 + 400 / 100)
    assert "predicted 0.74 s vs fast 6.00 s" in decision.route.reason
    assert decision.route.fallbacks[0] == "fast"


def test_running_statistics_follow_real_replies(tmp_path: Path) -> None:
    ledger = MemoryLedger()
    router = make_router(tmp_path, ledger=ledger)
    for _ in range(12):  # regular turns out much faster than its prior
        router.observe("regular", Reading(0.1, None, 3000.0, 2000.0, 100, True, 0.2, None, 10))
    assert ledger.latency("regular").samples == 12
    assert ledger.latency("regular").decode_tps == pytest.approx(3000.0, rel=0.01)
    assert route(router, "what is a monad?").source == "regular"


def test_expected_tokens_follow_max_tokens_for_long_replies(tmp_path: Path) -> None:
    ledger = MemoryLedger()
    router = make_router(tmp_path, """
[[router.rules]]
task = "long"
source = ["local", "fast"]
""", ledger=ledger)
    ledger.stats["local"] = LatencyStats(ttft_s=0.1, decode_tps=50.0)
    ledger.stats["fast"] = LatencyStats(ttft_s=1.5, decode_tps=2000.0)
    decision = router.decide(Request("Summarize", max_tokens=8000))
    assert decision.route.source == "fast"
    assert decision.predictions["local"] == pytest.approx(0.1 + 8000 / 50)


# -- texts -----------------------------------------------------------------------------------


def test_status_and_fallback_texts(tmp_path: Path) -> None:
    router = make_router(tmp_path)
    r = route(router, "def fib(n):\n    return fib(n - 1) + fib(")
    # The reason ends with the task model's probability (issue 29: "long (asks for a full program; model 0.93)").
    assert re.fullmatch(r"auto → local · completion: code ends mid-statement; model (0\.\d\d|1\.00)", status_text(r))
    assert status_text(r, "fast") == "local · chosen by hand"
    error = SourceError(ErrorKind.RATE_LIMITED, "fast: rate limited (HTTP 429)", status=429, retry_after=30)
    assert fallback_text("fast", "regular", error) == "fast → regular: 429 rate limited"
    unreachable = SourceError(ErrorKind.UNREACHABLE, "refused")
    assert fallback_text("local", "fast", unreachable) == "local → fast: unreachable"


def test_retry_route_after_a_cut_offers_the_next_source(tmp_path: Path) -> None:
    router = make_router(tmp_path)
    r = route(router, "Write a detailed article about B-trees")
    retry = router.retry_route(r, "fast")
    assert retry is not None and (retry.source, retry.fallbacks, retry.task) == ("regular", ["local"], "long")
    assert "retry after fast cut the reply" in retry.reason
    assert router.retry_route(Route("local", "x", "sensitive", []), "local") is None


def test_hand_chosen_hosted_source_for_a_sensitive_prompt_warns(tmp_path: Path) -> None:
    router = make_router(tmp_path)
    hand = router.manual(Request(f"key {AWS_ID}"), "regular")
    assert hand.source == "regular"
    assert any("looks sensitive" in w for w in hand.warnings)
    with pytest.raises(SourceError):
        router.manual(Request("hi"), "nowhere")


def test_settings_without_config_use_the_defaults() -> None:
    settings = RouterSettings()
    tasks = [rule.tasks for rule in settings.all_rules()]
    assert ("sensitive",) in tasks and ("completion",) in tasks and ("long",) in tasks
    assert Rule(("chat",), ("local",)).applies("chat", "x", 1)
    assert not Rule(("*",), ("fast",)).applies("sensitive", "x", 1)


# -- fastchat route --------------------------------------------------------------------------


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = write(tmp_path, CONFIG)
    monkeypatch.setenv("FASTCHAT_CONFIG", str(path))
    monkeypatch.setenv("FASTCHAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    return path


class _TTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def run_cli(monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], argv: list[str], stdin: io.StringIO | None = None) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", stdin if stdin is not None else _TTY(""))
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_route_json_is_a_dry_run(cli_env: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(monkeypatch, capsys, ["route", "--json", "complete this function:", "def add(a, b):"])
    assert code == 0
    data = json.loads(out)
    assert {"task", "source", "reason", "fallbacks"} <= set(data)
    assert (data["task"], data["source"], data["fallbacks"]) == ("completion", "local", ["fast", "regular"])
    from fastchat_tui.paths import data_dir

    assert not (data_dir() / "history.db").exists()  # a dry run records nothing, not even an empty history file


def test_route_text_output_and_piped_stdin(cli_env: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    diff = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
    code, out, _ = run_cli(monkeypatch, capsys, ["route", "what do you think?"], io.StringIO(diff))
    assert code == 0
    assert out.splitlines()[0].split() == ["task", "review"]
    assert "reason     review: unified diff in the prompt" in out


def test_route_reads_files_like_review(cli_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    secret_file = tmp_path / "prod.env"
    secret_file.write_text("DEBUG=0\n", encoding="utf-8")
    code, out, _ = run_cli(monkeypatch, capsys, ["route", "--json", "-f", str(secret_file), "what does this configure?"])
    data = json.loads(out)
    assert code == 0 and (data["task"], data["source"], data["fallbacks"]) == ("sensitive", "local", [])
    code, _, err = run_cli(monkeypatch, capsys, ["route", "-f", str(tmp_path / "missing.py"), "x"])
    assert code == 1 and "no such file" in err  # an input error, as in review (issue 12)


def test_route_with_a_broken_router_config_exits_2(cli_env: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    cli_env.write_text(CONFIG + '\n[router]\ncooldown_after = 0\n', encoding="utf-8")
    code, _, err = run_cli(monkeypatch, capsys, ["route", "hello"])
    assert code == 2 and "line 24" in err and "router.cooldown_after" in err


def test_route_by_hand_shows_warnings(cli_env: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(monkeypatch, capsys, ["-s", "fast", "route", "--json", f"my key {AWS_ID}"])
    refused = json.loads(out)  # by hand, a sensitive prompt is refused for a source that is not private
    assert code == 1 and refused["error"]["kind"] == "sensitive" and "AWS access key" in refused["reason"]
    assert AWS_ID not in out + err and "--allow-sensitive" in err
    code, out, _ = run_cli(monkeypatch, capsys, ["-s", "fast", "route", "--json", "--allow-sensitive", f"my key {AWS_ID}"])
    data = json.loads(out)
    assert code == 0 and data["source"] == "fast" and data["reason"] == "chosen by hand"
    assert data["warnings"] and AWS_ID not in json.dumps(data)


def test_route_as_a_real_process_with_a_pipe(cli_env: Path, tmp_path: Path) -> None:
    result = fastchat(child_env(cli_env, data=tmp_path / "data"), "route", "--json", "translate this to German:",
                      stdin="The committee met on Tuesday. " * 100)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["task"] == "long" and data["source"] == "fast" and "translate" in data["reason"]
