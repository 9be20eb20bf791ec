"""The data boundary holds on every path: a prompt that looks sensitive goes only to a private source.

Before, only auto mode kept such prompts local: ``default_source = "hosted"``, ``ask -s hosted`` and
``review -s hosted .env`` sent them to the hosted server with no warning. The servers are loopback;
a source tagged ``hosted`` stands for a hosted one.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from fastchat_tui.config import Config, SourceConfig, load
from fastchat_tui.routing import Route
from fastchat_tui.session import SensitiveRefusal, Session
from fastchat_tui.sources.base import ErrorKind
from tests.helpers import child_env, fastchat, session_events
from tests.servers import OllamaServer, OpenAIServer, Script, closed_port

AWS_ID = "AKIA" + "Z7FAKE" + "TESTKEY0" + "01"
SECRET_PROMPT = f"why does boto3 reject my key {AWS_ID}?"


def sources(hosted_url: str, local_url: str) -> dict[str, SourceConfig]:
    return {
        "hosted": SourceConfig("hosted", "openai", hosted_url, "big-model", tags=["hosted"], timeout_s=5),
        "local": SourceConfig("local", "ollama", local_url, "test-model:latest", tags=["local"], timeout_s=5),
    }


async def test_a_default_hosted_source_is_refused_a_sensitive_prompt(spawn_server) -> None:
    hosted, local = spawn_server(OpenAIServer), spawn_server(OllamaServer)
    session = Session(Config(sources=sources(hosted.url, local.url), default_source="hosted"),
                      key_lookup=lambda spec: "k")
    turn = await session.send(SECRET_PROMPT)
    assert turn.status == "error" and turn.error is not None and turn.error.kind == ErrorKind.SENSITIVE
    assert "AWS access key" in turn.error.message and AWS_ID not in turn.error.message
    assert "--allow-sensitive" in turn.error.message
    assert hosted.stream_requests() == []
    # chosen by hand (ask -s hosted, F2): the same
    turn = await session.send(SECRET_PROMPT, source="hosted")
    assert turn.error is not None and turn.error.kind == ErrorKind.SENSITIVE and hosted.stream_requests() == []
    # a private source takes it
    assert (await session.send(SECRET_PROMPT, source="local")).status == "complete"
    await session.aclose()


async def test_the_override_is_for_one_request(spawn_server) -> None:
    hosted, local = spawn_server(OpenAIServer), spawn_server(OllamaServer)
    session = Session(Config(sources=sources(hosted.url, local.url), default_source="hosted"),
                      key_lookup=lambda spec: "k")
    from fastchat_tui.turn import SendOptions

    events = await session_events(session, SECRET_PROMPT, SendOptions(allow_sensitive=True, remember=False))
    assert events[-1].turn.status == "complete" and len(hosted.stream_requests()) == 1
    assert (await session.send(SECRET_PROMPT)).error is not None  # the next request is refused again
    assert len(hosted.stream_requests()) == 1
    await session.aclose()


async def test_an_earlier_message_makes_the_conversation_sensitive(spawn_server) -> None:
    hosted, local = spawn_server(OpenAIServer), spawn_server(OllamaServer)
    session = Session(Config(sources=sources(hosted.url, local.url), default_source="local"),
                      key_lookup=lambda spec: "k")
    assert (await session.send(SECRET_PROMPT)).source == "local"
    turn = await session.send("and now a plain question", source="hosted")
    assert turn.error is not None and "earlier message" in turn.error.message and hosted.stream_requests() == []
    await session.aclose()


async def test_a_retry_or_fallback_never_reaches_a_source_that_is_not_private(spawn_server) -> None:
    hosted = spawn_server(OpenAIServer)
    session = Session(Config(sources=sources(hosted.url, f"http://127.0.0.1:{closed_port()}")),
                      key_lookup=lambda spec: "k")
    # a route decided elsewhere (a retry after the local source failed) still may not fall back to hosted
    turn = await session.send(SECRET_PROMPT, route=Route("local", "retry", "chat", ["hosted"]))
    assert turn.status == "error" and turn.error is not None and turn.error.kind == ErrorKind.UNREACHABLE
    assert [e.source for e in turn.errors] == ["local"] and hosted.stream_requests() == []
    await session.aclose()


def test_private_is_decided_by_address_not_by_a_tag(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[sources.remote]\nkind = "ollama"\nbase_url = "https://ollama.example.com"\nmodel = "m"\n'
        '[sources.lan]\nkind = "ollama"\nbase_url = "http://192.168.1.20:11434"\nmodel = "m"\nprivate = true\n'
        '[sources.here]\nkind = "ollama"\nbase_url = "http://127.0.0.1:11434"\nmodel = "m"\n'
        '[sources.tagged]\nkind = "openai"\nbase_url = "https://api.example.com/v1"\nmodel = "m"\ntags = ["local"]\n',
        encoding="utf-8",
    )
    config = load(path)
    private = {name: spec.is_private for name, spec in config.sources.items()}
    assert private == {"remote": False, "lan": True, "here": True, "tagged": False}
    assert "private" not in config.sources["remote"].tags


def test_ask_refuses_then_sends_with_allow_sensitive(tmp_path: Path, spawn_server) -> None:
    hosted = spawn_server(OpenAIServer)
    hosted.push(Script(tokens=["ok"]))
    config = tmp_path / "config.toml"
    config.write_text(f'default_source = "hosted"\n[sources.hosted]\nkind = "openai"\nbase_url = "{hosted.url}"\n'
                      'model = "m"\napi_key_env = "BOUNDARY_KEY"\n', encoding="utf-8")
    env = child_env(config, data=tmp_path / "data", BOUNDARY_KEY="sk-test")

    def ask(*argv: str) -> subprocess.CompletedProcess[str]:
        return fastchat(env, "ask", "--json", *argv, SECRET_PROMPT)

    refused = ask()
    assert refused.returncode == 1 and hosted.stream_requests() == []
    data = json.loads(refused.stdout)
    assert data["error"]["kind"] == "sensitive" and AWS_ID not in refused.stdout + refused.stderr
    sent = ask("--allow-sensitive")
    assert sent.returncode == 0, sent.stderr
    assert json.loads(sent.stdout)["text"] == "ok" and len(hosted.stream_requests()) == 1


async def test_a_redirect_is_never_followed_so_a_local_source_cannot_hand_a_secret_on(spawn_server) -> None:
    """A local source that answered 307 to a hosted host used to send the prompt (and any key) there."""
    hosted = spawn_server(OpenAIServer)
    for cls, path in ((OllamaServer, "/api/chat"), (OpenAIServer, "/v1/chat/completions")):
        local = spawn_server(cls)
        local.push(Script(status=307, headers={"Location": hosted.url.rstrip("/") + path}, error_body=""))
        kind = "ollama" if cls is OllamaServer else "openai"
        spec = SourceConfig("local", kind, local.url, "test-model:latest", tags=["local"], timeout_s=5)
        session = Session(Config(sources={"local": spec}), key_lookup=lambda spec: "sk-local-only-key")
        turn = await session.send(SECRET_PROMPT)
        assert turn.status == "error" and turn.error is not None and turn.error.kind == ErrorKind.PROTOCOL
        assert "307" in turn.error.message and "does not follow redirects" in turn.error.message
        assert hosted.requests == []  # nothing at all reached the other host
        await session.aclose()


async def test_ollama_gets_no_key_from_the_environment(ollama_server: OllamaServer, monkeypatch) -> None:
    """The ``ollama`` package sends ``OLLAMA_API_KEY`` to any host; the README promises Ollama gets no key."""
    monkeypatch.setenv("OLLAMA_API_KEY", "sk-meant-for-something-else")
    spec = SourceConfig("local", "ollama", ollama_server.url, "test-model:latest", tags=["local"], timeout_s=5)
    session = Session(Config(sources={"local": spec}))
    assert (await session.send("hi")).status == "complete"
    headers = {k.lower() for k in ollama_server.stream_requests()[0].headers}
    assert "authorization" not in headers
    await session.aclose()


async def test_history_is_the_users_alone(openai_server: OpenAIServer, tmp_path: Path) -> None:
    """history.db was created 0644 in a 0755 folder."""
    import stat

    from fastchat_tui.store import Store

    folder = tmp_path / "data" / "fastchat"
    config = Config(sources={"s": SourceConfig("s", "openai", openai_server.url, "m", tags=["hosted"], timeout_s=5)})
    with Store.open(folder / "history.db") as store:
        session = Session(config, key_lookup=lambda spec: "k", recorder=store.recorder(config))
        assert (await session.send("hello")).status == "complete"
        await session.aclose()
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert modes and all(mode == 0o600 for mode in modes.values()), modes


async def test_a_refused_prompt_is_kept_in_history_with_its_secrets_masked(spawn_server, tmp_path: Path) -> None:
    """History kept, in clear, the secrets of prompts that were refused and never sent."""
    from fastchat_tui.store import Store

    hosted, local = spawn_server(OpenAIServer), spawn_server(OllamaServer)
    config = Config(sources=sources(hosted.url, local.url), default_source="hosted")
    password = "Tr0ub4dor-" + "fake-3x"
    with Store.open(tmp_path / "history.db") as store:
        session = Session(config, key_lookup=lambda spec: "k", recorder=store.recorder(config))
        turn = await session.send(f"my app fails with DB_PASSWORD={password} set, and {AWS_ID} too, why?")
        assert turn.error is not None and turn.error.kind == ErrorKind.SENSITIVE
        (prompt, _reply) = store.messages(store.chats()[0].id)
        assert password not in prompt.content and AWS_ID not in prompt.content
        assert "[sensitive: " in prompt.content and prompt.content.startswith("my app fails with DB_PASSWORD=")
        assert password not in store.chats()[0].title
        await session.aclose()
    assert turn.prompt.endswith("why?") and password in turn.prompt  # kept in memory for a confirmed retry


# -- issue 25, item 1: a prompt with several findings reports all of them ------------------------------------

TWO_SECRETS = f"deploy fails:\nexport AWS_KEY_ID={AWS_ID}\nmysqldump -u root -p{'Hunter2' + 'isgreat'} shop > dump.sql\n"


async def test_a_refusal_carries_every_finding_of_the_request(spawn_server) -> None:
    hosted, local = spawn_server(OpenAIServer), spawn_server(OllamaServer)
    session = Session(Config(sources=sources(hosted.url, local.url), default_source="hosted"),
                      key_lookup=lambda spec: "k")
    turn = await session.send(TWO_SECRETS)
    assert isinstance(turn.error, SensitiveRefusal)
    assert [str(finding) for finding in turn.error.findings] == [
        "AWS access key in the prompt, line 2", "password on a command line (mysqldump) in the prompt, line 3"]
    assert all(str(finding) in turn.error.message for finding in turn.error.findings)
    assert hosted.stream_requests() == []
    await session.aclose()


def test_ask_names_every_finding_when_it_refuses(tmp_path: Path, spawn_server) -> None:
    hosted = spawn_server(OpenAIServer)
    config = tmp_path / "config.toml"
    config.write_text(f'[sources.hosted]\nkind = "openai"\nbase_url = "{hosted.url}"\nmodel = "m"\n'
                      'api_key_env = "BOUNDARY_KEY"\n', encoding="utf-8")
    env = child_env(config, data=tmp_path / "data", BOUNDARY_KEY="sk-test")
    refused = fastchat(env, "ask", "-s", "hosted", TWO_SECRETS)
    assert refused.returncode == 1 and hosted.stream_requests() == []
    assert "AWS access key in the prompt, line 2" in refused.stderr
    assert "password on a command line (mysqldump) in the prompt, line 3" in refused.stderr
    assert AWS_ID not in refused.stderr and "Hunter2isgreat" not in refused.stderr
