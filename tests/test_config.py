"""Config: discovery, presets, URL rules, and errors that name file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from fastchat_tui.config import ConfigError, load, normalize_ollama_url, normalize_openai_url
from fastchat_tui.starter import write_starter
from tests.helpers import child_env, fastchat

MINIMAL = """\
default_source = "auto"
theme = "fastchat-dark"

[sources.local]
kind = "ollama"
base_url = "http://127.0.0.1:11434"
model = "qwen2.5-coder:7b"

[sources.fast]
kind = "openai"
base_url = "https://api.cerebras.ai/v1"
model = "qwen-3-32b"
api_key_env = "CEREBRAS_API_KEY"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_minimal_shape_from_the_docs_loads(tmp_path):
    config = load(write(tmp_path, MINIMAL), env={})
    assert config.default_source == "auto"
    assert list(config.sources) == ["local", "fast"]
    assert config.sources["local"].tags == ["local", "private"]
    assert config.sources["fast"].base_url == "https://api.cerebras.ai/v1"
    assert config.sources["fast"].api_key_env == "CEREBRAS_API_KEY"


def test_example_config_loads():
    example = Path(__file__).resolve().parent.parent / "config.example.toml"
    config = load(example, env={})
    assert {"local", "fast", "groq"} <= set(config.sources)
    assert config.sources["groq"].base_url == "https://api.groq.com/openai/v1"
    assert config.sources["fast"].monthly_budget == 10
    settings = config.router
    assert settings.rules[0].tasks == ("chat",) and settings.rules[0].source == ("local", "fast")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("https://api.cerebras.ai/v1", "https://api.cerebras.ai/v1"),
        ("https://api.cerebras.ai/v1/", "https://api.cerebras.ai/v1"),
        ("https://gateway.example/api", "https://gateway.example/api/v1"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1"),
        ("https://generativelanguage.example/v1beta", "https://generativelanguage.example/v1beta"),
    ],
)
def test_openai_base_url_with_or_without_v1(given, expected):
    assert normalize_openai_url(given) == expected


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (":5678", "http://127.0.0.1:5678"),
        ("127.0.0.1", "http://127.0.0.1:11434"),
        ("gpu-box:11434", "http://gpu-box:11434"),
        ("https://ollama.example", "https://ollama.example:443"),
        ("http://[::1]:9000/", "http://[::1]:9000"),
    ],
)
def test_ollama_host_forms(given, expected):
    assert normalize_ollama_url(given) == expected


def test_no_file_discovers_ollama_and_preset_keys(tmp_path):
    env = {"OLLAMA_HOST": ":5678", "GROQ_API_KEY": "x", "CEREBRAS_API_KEY": ""}
    config = load(tmp_path / "missing.toml", env=env)
    assert list(config.sources) == ["local", "groq", "embedded"]  # embedded: the test extras install it
    assert config.sources["local"].base_url == "http://127.0.0.1:5678"
    assert config.sources["groq"].tags == ["hosted", "fast"]


def test_no_file_discovers_presets_with_a_key_in_the_keyring(tmp_path):
    config = load(tmp_path / "missing.toml", env={}, has_stored_key=lambda name: name == "cerebras")
    assert list(config.sources) == ["local", "cerebras", "embedded"]
    assert config.sources["cerebras"].base_url == "https://api.cerebras.ai/v1"


def test_openai_base_url_env_overrides_the_preset(tmp_path):
    config = load(tmp_path / "missing.toml", env={"OPENAI_API_KEY": "x", "OPENAI_BASE_URL": "http://127.0.0.1:9/api"})
    assert config.sources["openai"].base_url == "http://127.0.0.1:9/api/v1"


@pytest.mark.parametrize(
    ("text", "line", "key", "words"),
    [
        ('default_source = "auto"\n[sources.a]\nkind = "ollama"\nmodel = 7\n', 4, "sources.a.model", "must be a string"),
        ('[sources.a]\nkind = "grpc"\nmodel = "m"\n', 2, "sources.a.kind", "unknown kind"),
        ('theme = "x"\n\n[sources.a]\nkind = "openai"\nmodel = "m"\n', 3, "sources.a", "missing 'base_url'"),
        ('default_source = "nowhere"\n[sources.a]\nkind = "ollama"\nmodel = "m"\n', 1, "default_source",
         "not a configured source"),
        ('theme = "x"\nmax_tokens = "lots"\n', 2, "max_tokens", "whole number"),
        ('[sources.a]\nkind = "openai"\nbase_url = "ftp://x"\nmodel = "m"\n', 3, "sources.a.base_url", "http(s) URL"),
        ('theme = "x"\nbroken = \n', 2, None, "not valid TOML"),
        ('[sources.fast]\nkind = "openai"\nbase_url = "https://x/v1"\nmodel = "m"\napi_key = "csk-live-123"\n', 5,
         "sources.fast.api_key", "fastchat keys set fast"),
    ],
)
def test_broken_config_names_file_line_and_key(tmp_path, text, line, key, words):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load(path, env={})
    error = caught.value
    assert error.path == path and error.line == line and error.key == key
    assert words in str(error) and str(path) in str(error) and f"line {line}" in str(error)


def test_secret_in_an_array_of_tables_is_refused_too(tmp_path):
    path = write(tmp_path, '[[router.rules]]\ntask = "chat"\ntoken = "ghp-not-here-123"\n')
    with pytest.raises(ConfigError) as caught:
        load(path, env={})
    assert "must not be stored in the config file" in str(caught.value) and caught.value.line == 3
    assert "ghp-not-here-123" not in str(caught.value)


def test_secret_in_config_is_never_echoed(tmp_path):
    path = write(tmp_path, '[sources.fast]\nkind = "openai"\nbase_url = "https://x/v1"\nmodel = "m"\napi_key = "csk-live-123"\n')
    with pytest.raises(ConfigError) as caught:
        load(path, env={})
    assert "csk-live-123" not in str(caught.value)


def test_broken_config_exits_2_with_the_location(tmp_path):
    path = write(tmp_path, '[sources.a]\nkind = "ollama"\nmodel = 7\n')
    done = fastchat(child_env(path, home=tmp_path), "ask", "hi")
    assert done.returncode == 2
    assert f"{path}, line 3, key 'sources.a.model'" in done.stderr
    assert "Traceback" not in done.stderr


def test_config_init_writes_a_loadable_starter(tmp_path):
    path = tmp_path / "sub" / "config.toml"
    write_starter(path, env={"CEREBRAS_API_KEY": "csk-unique-value-42"})
    config = load(path, env={})
    assert set(config.sources) == {"local", "cerebras", "embedded"}
    assert "csk-unique-value-42" not in path.read_text()


# -- issue 13, item 9: one schema, the same check everywhere -------------------------------------

SOURCE = '[sources.a]\nkind = "ollama"\nmodel = "m"\n'


@pytest.mark.parametrize(
    ("text", "line", "key", "hint"),
    [
        ('defualt_source = "auto"\n' + SOURCE, 1, "defualt_source", "did you mean 'default_source'?"),
        (SOURCE + 'modl = "llama3.2"\n', 4, "sources.a.modl", "did you mean 'model'?"),
        (SOURCE + "colour = 0.2\n", 4, "sources.a.colour", "known: api_key_env, base_url"),
        (SOURCE + '[router]\ndefualt = "a"\n', 5, "router.defualt", "did you mean 'default'?"),
        (SOURCE + '[[router.rules]]\ntask = "chat"\nsorce = "a"\n', 6, "router.rules[1].sorce", "did you mean 'source'?"),
    ],
)
def test_every_unknown_key_is_an_error_with_a_suggestion(tmp_path, text, line, key, hint):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load(path, env={})
    error = caught.value
    assert (error.path, error.line, error.key) == (path, line, key)
    assert f"{path}, line {line}, key '{key}': unknown key (" in str(error) and hint in str(error)


def test_config_check_runs_the_checks_the_chat_runs(tmp_path):
    path = write(tmp_path, SOURCE + '[router]\ndefualt = "a"\n')
    for args in (("config", "check"), ("-s", "a")):  # the check, and the chat itself
        done = fastchat(child_env(path, home=tmp_path), *args)
        assert done.returncode == 2, done.stderr
        assert f"{path}, line 5, key 'router.defualt': unknown key (did you mean 'default'?" in done.stderr
        assert "Traceback" not in done.stderr


def test_a_config_named_by_fastchat_config_must_exist(tmp_path):
    missing = tmp_path / "nonexistent" / "x.toml"
    with pytest.raises(ConfigError) as caught:
        load(env={"FASTCHAT_CONFIG": str(missing)})
    assert caught.value.path == missing and "no such file" in str(caught.value)
    done = fastchat(child_env(missing, home=tmp_path), "config", "check")
    assert done.returncode == 2 and f"fastchat: {missing}: no such file, named by FASTCHAT_CONFIG" in done.stderr
    assert fastchat(child_env(missing, home=tmp_path), "config", "init").returncode == 0  # init writes it there
    assert fastchat(child_env(missing, home=tmp_path), "config", "check").returncode == 0


@pytest.mark.parametrize(("kind", "written"), [("openai", "not a url"), ("openai", "localhost:8080"),
                                               ("ollama", "gpu box")])
def test_a_bad_url_is_quoted_as_written(tmp_path, kind, written):
    path = write(tmp_path, f'[sources.a]\nkind = "{kind}"\nbase_url = "{written}"\nmodel = "m"\n')
    with pytest.raises(ConfigError) as caught:
        load(path, env={})
    assert caught.value.key == "sources.a.base_url" and caught.value.line == 3
    assert f"'{written}' is not an http(s) URL" in str(caught.value)


def test_a_bad_url_from_the_environment_says_where_it_came_from(tmp_path):
    path = write(tmp_path, '[sources.a]\npreset = "openai"\n')
    with pytest.raises(ConfigError) as caught:
        load(path, env={"OPENAI_BASE_URL": "not a url"})
    assert "'not a url' (from OPENAI_BASE_URL) is not an http(s) URL" in str(caught.value)


@pytest.mark.parametrize("value", ["true", "false", '"low"', '"high"'])
def test_think_is_a_known_source_key(tmp_path, value):
    config = load(write(tmp_path, SOURCE + f"think = {value}\n"), env={})
    assert config.sources["a"].think in (True, False, "low", "high")


# -- issue 12, section 2: no secret in the config file under any name ----------------------------

FAST = '[sources.fast]\nkind = "openai"\nbase_url = "https://gw.example/v1"\nmodel = "m"\n'


@pytest.mark.parametrize(
    ("text", "line", "key", "secret"),
    [
        (FAST + 'apikey = "abcdef0123456789xyzQ"\n', 5, "sources.fast.apikey", "abcdef0123456789xyzQ"),
        (FAST + '"api-key" = "abcdef0123456789xyzQ"\n', 5, "sources.fast.api-key", "abcdef0123456789xyzQ"),
        (FAST + 'access_token = "tok_9f8e7d6c5b4a3210"\n', 5, "sources.fast.access_token", "tok_9f8e7d6c5b4a3210"),
        (FAST + 'headers = {Authorization = "Bearer sk-proj-abcdefghijklmnop0123456789"}\n', 5,
         "sources.fast.headers.Authorization", "sk-proj-abcdefghijklmnop0123456789"),
        (FAST + '\n[sources.fast.headers]\nX-Trace = "1"\nAuthorization = "Bearer abcdef0123456789xyzQ"\n', 8,
         "sources.fast.headers.Authorization", "abcdef0123456789xyzQ"),
        ('[sources.fast]\nkind = "openai"\nbase_url = "https://bob:s3cr3tpw99@gw.example/v1"\nmodel = "m"\n', 3,
         "sources.fast.base_url", "s3cr3tpw99"),
        (FAST + 'tags = ["hosted", "gsk_abcdefghijklmnopqrstuvwxyz0123456789ABCDEF"]\n', 5, "sources.fast.tags",
         "gsk_abcdefghijklmnopqrstuvwxyz0123456789ABCDEF"),
        ('system_prompt = "Use the key csk-abcdefghijklmnopqrstuvwxyz0123456789 when asked"\n' + FAST, 1,
         "system_prompt", "csk-abcdefghijklmnopqrstuvwxyz0123456789"),
        (FAST + '[router]\nsensitive_patterns = [["ours", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"]]\n', 6,
         "router.sensitive_patterns", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    ],
)
def test_a_secret_under_any_key_name_is_refused_with_its_line_and_never_shown(tmp_path, text, line, key, secret):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load(path, env={})
    error = caught.value
    assert (error.path, error.line, error.key) == (path, line, key)
    assert "looks like a secret" in str(error) and "fastchat keys set" in str(error)
    assert secret not in str(error) and secret[:8] not in str(error)


@pytest.mark.parametrize("value", [
    "csk-abcdefghijklmnopqrstuvwxyz0123456789",  # a Cerebras key
    "gsk_abcdefghijklmnopqrstuvwxyz0123456789ABCDEF",  # a Groq key: also a valid identifier
    "0123456789abcdef0123456789abcdef",
    "a1b2c3d4e5f6a7b8c9d0e1f2",  # generated: letters and digits, no _
])
def test_a_key_pasted_as_api_key_env_is_refused_and_not_shown(tmp_path, value):
    path = write(tmp_path, FAST + f'api_key_env = "{value}"\n')
    with pytest.raises(ConfigError) as caught:
        load(path, env={})
    error = caught.value
    assert (error.line, error.key) == (5, "sources.fast.api_key_env")
    assert "name of an environment variable" in str(error) and "fastchat keys set fast" in str(error)
    assert value not in str(error) and value[:8] not in str(error)


@pytest.mark.parametrize("name", ["CEREBRAS_API_KEY", "MY_KEY_2024", "OPENAI_API_KEY2", "work_key", "_K"])
def test_variable_names_are_fine_in_api_key_env(tmp_path, name):
    assert load(write(tmp_path, FAST + f'api_key_env = "{name}"\n'), env={}).sources["fast"].api_key_env == name


def test_ordinary_values_are_not_taken_for_secrets(tmp_path):
    text = ('system_prompt = "You are concise. Never reveal passwords or tokens; budget 500 tokens."\n'
            + FAST.replace('model = "m"', 'model = "hf.co/bartowski/Qwen2.5-Coder-7B-Instruct-GGUF:Q4_K_M"')
            + 'api_key_env = "GW_API_KEY"\ntags = ["hosted", "fast"]\n'
            '[sources.docs]\nkind = "openai"\nbase_url = "http://user:password@localhost:8080/v1"\nmodel = "m"\n'
            "[router]\nsensitive_patterns = ['(?i)password\\s*=\\s*\\S+', 'ACME-[0-9]{6}']\n"
            'sensitive_paths = ["*.pem", "**/secrets/**"]\n'
            "[[router.rules]]\ntask = \"chat\"\nmatch = '(?i)\\btoken\\b'\nsource = \"fast\"\n")
    config = load(write(tmp_path, text), env={})
    assert set(config.sources) == {"fast", "docs"}


def test_a_key_in_api_key_env_never_reaches_the_output(tmp_path):
    """It used to be printed on a 401 ("set csk-… or run fastchat keys set"): now the config is refused first."""
    key = "csk-pasted0123456789abcdefghijklmn"
    path = write(tmp_path, FAST + f'api_key_env = "{key}"\n')
    for args in (("config", "check"), ("ask", "-s", "fast", "hi"), ("keys", "test", "fast")):
        done = fastchat(child_env(path, home=tmp_path), *args)
        assert done.returncode == 2 and f"{path}, line 5, key 'sources.fast.api_key_env'" in done.stderr, args
        assert key not in done.stdout + done.stderr and key[:12] not in done.stdout + done.stderr


# -- issue 25, item 9: a user's regex that backtracks for ever is refused at load ---------------------------

def test_a_catastrophic_user_pattern_is_refused_by_route_and_config_check_within_seconds(tmp_path):
    """Before, ``route`` ran ``(a+)+$`` on the prompt at 100 % CPU until killed; ``config check`` said nothing."""
    path = write(tmp_path, SOURCE + "[router]\nsensitive_patterns = ['(a+)+$']\n")
    for args in (("route", "a" * 40 + "!"), ("config", "check")):
        done = fastchat(child_env(path, home=tmp_path), *args, timeout=30)
        assert done.returncode == 2, done.stderr
        assert f"{path}, line 5, key 'router.sensitive_patterns': '(a+)+$' can take exponential time" in done.stderr
        assert "Traceback" not in done.stderr
