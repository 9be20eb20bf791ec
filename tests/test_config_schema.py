"""Issue 12, section 4 (config): one schema checks every value of the file, for `config check` and every
command alike; only a regular, bounded, UTF-8 file is read; URLs from the file or the environment are
checked before anything uses them. Also the keys issue 14 needs: temperature, per-source system_prompt
and [templates.NAME]."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from fastchat_tui.config import (
    EDIT_FIELDS,
    HISTORY_FIELDS,
    MCP_FIELDS,
    SOURCE_FIELDS,
    TEMPLATE_FIELDS,
    TOOLS_FIELDS,
    TOP_FIELDS,
    ConfigError,
    SourceConfig,
    Template,
    load,
)
from fastchat_tui.config_schema import MAX_CONFIG_BYTES
from fastchat_tui.router_config import ROUTER_FIELDS, RULE_FIELDS
from tests.helpers import child_env, fastchat

OPENAI = '[sources.a]\nkind = "openai"\nmodel = "m"\n'
URL = 'base_url = "http://127.0.0.1:9/v1"\n'


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "config.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def refused(path: Path, env: dict[str, str] | None = None) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load(path, env=env or {})
    return caught.value


# -- values: every type and range, with file, line and key ---------------------------------------

BAD_VALUES = [
    # (the file, its line and key in the error, words of the error)
    (OPENAI + 'base_url = "http://[::1/v1"\n', 4, "sources.a.base_url", "an IPv6 address must be closed with ]"),
    ('[sources.a]\nkind = "ollama"\nmodel = "m"\nbase_url = "http://[::1"\n', 4, "sources.a.base_url",
     "an IPv6 address must be closed with ]"),
    (OPENAI + 'base_url = "http://gw.example/v1\\nHost: evil"\n', 4, "sources.a.base_url", "a line break"),
    ('[sources.a]\nkind = "ollama"\nmodel = "m"\nbase_url = "http://gpu\\nbox:11434"\n', 4, "sources.a.base_url",
     "a line break"),
    (OPENAI + 'base_url = "http://gw.example:99999/v1"\n', 4, "sources.a.base_url", "port must be a number from 1"),
    (OPENAI + 'base_url = "http://gw.example:0/v1"\n', 4, "sources.a.base_url", "port must be a number from 1"),
    (OPENAI + 'base_url = "http://gw.example:http/v1"\n', 4, "sources.a.base_url", "port must be a number from 1"),
    (OPENAI + URL + "timeout_s = nan\n", 5, "sources.a.timeout_s", "must be a number more than 0"),
    (OPENAI + URL + "timeout_s = inf\n", 5, "sources.a.timeout_s", "not inf"),
    (OPENAI + URL + "timeout_s = true\n", 5, "sources.a.timeout_s", "not true"),
    (OPENAI + URL + "timeout_s = 1e300\n", 5, "sources.a.timeout_s", "at most 86400"),
    ("max_tokens = -5\n", 1, "max_tokens", "must be a whole number from 1"),
    ("max_tokens = 0\n", 1, "max_tokens", "not 0"),
    ("max_tokens = 2.5\n", 1, "max_tokens", "whole number"),
    (OPENAI + URL + "monthly_budget = nan\n", 5, "sources.a.monthly_budget", "must be a number 0 or more, not nan"),
    (OPENAI + URL + "price_in = nan\n", 5, "sources.a.price_in", "not nan"),
    (OPENAI + URL + "price_out = inf\n", 5, "sources.a.price_out", "not inf"),
    (OPENAI + URL + "price_out = -1\n", 5, "sources.a.price_out", "0 or more"),
    (OPENAI + URL + "context_tokens = 0\n", 5, "sources.a.context_tokens", "must be a whole number from 1"),
    (OPENAI + URL + "context_tokens = -8192\n", 5, "sources.a.context_tokens", "not -8192"),
    (OPENAI + URL + "output_timeout_s = -inf\n", 5, "sources.a.output_timeout_s", "more than 0"),
    (OPENAI + URL + 'think = "max"\n', 5, "sources.a.think", "must be true, false or one of: low, medium, high"),
    ("temperature = 2.5\n", 1, "temperature", "must be a number from 0 to 2"),
    (OPENAI + URL + "temperature = -0.1\n", 5, "sources.a.temperature", "from 0 to 2"),
    (OPENAI + URL + "temperature = nan\n", 5, "sources.a.temperature", "from 0 to 2"),
    (OPENAI + URL + 'system_prompt = ["a"]\n', 5, "sources.a.system_prompt", "must be a string"),
    ('theme = "x"\nmax_input_bytes = 0\n', 2, "max_input_bytes", "1 or more"),
    (OPENAI + URL + "price_in = 1" + "0" * 400 + "\n", 5, "sources.a.price_in", "0 or more"),  # no float holds it
    (OPENAI + URL + "max_reply_chars = 1" + "0" * 400 + "\n", 5, "sources.a.max_reply_chars", "whole number"),
]


@pytest.mark.parametrize(("text", "line", "key", "words"), BAD_VALUES)
def test_a_bad_value_is_refused_with_file_line_and_key(tmp_path: Path, text: str, line: int, key: str, words: str):
    path = write(tmp_path, text)
    error = refused(path)
    assert (error.path, error.line, error.key) == (path, line, key), str(error)
    assert words in error.message


@pytest.mark.parametrize(("text", "line", "key", "words"), BAD_VALUES[:4] + BAD_VALUES[7:10] + BAD_VALUES[11:13]
                         + BAD_VALUES[14:16] + BAD_VALUES[18:19])
def test_config_check_refuses_the_same_values(tmp_path: Path, text: str, line: int, key: str, words: str):
    path = write(tmp_path, text)
    done = fastchat(child_env(path, home=tmp_path), "config", "check")
    assert done.returncode == 2, done.stdout
    assert f"fastchat: {path}, line {line}, key '{key}': " in done.stderr and words in done.stderr
    assert "Traceback" not in done.stderr


def test_every_command_that_loads_the_config_gives_the_one_message(tmp_path: Path):
    """There is one validator: the check and each command say the same thing, word for word."""
    path = write(tmp_path, OPENAI + URL + "timeout_s = nan\n")
    (tmp_path / "notes.md").write_text("hello\n", encoding="utf-8")
    expected = (f"fastchat: {path}, line 5, key 'sources.a.timeout_s': must be a number more than 0 and at most "
                "86400, not nan")
    for args in (("config", "check"), ("ask", "hi"), ("ask", "-s", "a", "hi"), ("route", "hi"),
                 ("review", str(tmp_path / "notes.md")), ("bench", "--prompt", "hi"), ("keys", "list"),
                 ("keys", "test", "a"), ("-s", "a"), ()):
        done = fastchat(child_env(path, home=tmp_path), *args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith(expected), (args, done.stderr)


def test_a_config_that_passes_the_check_loads_the_same_for_the_chat(tmp_path: Path):
    path = write(tmp_path, OPENAI + URL + "timeout_s = 12\nmonthly_budget = 0\nprice_in = 0.5\ntemperature = 0\n")
    done = fastchat(child_env(path, home=tmp_path), "config", "check")
    assert done.returncode == 0, done.stderr
    source = load(path, env={}).sources["a"]
    assert (source.timeout_s, source.monthly_budget, source.price_in, source.temperature) == (12.0, 0.0, 0.5, 0.0)
    assert isinstance(source.timeout_s, float)


# -- URLs from the environment -------------------------------------------------------------------

@pytest.mark.parametrize(("variable", "extra", "text"), [
    ("OLLAMA_HOST", {}, '[sources.a]\nkind = "ollama"\nmodel = "m"\n'),
    ("OPENAI_BASE_URL", {}, '[sources.a]\npreset = "openai"\n'),
])
def test_a_bad_url_from_the_environment_in_a_source_of_the_file(tmp_path: Path, variable: str, extra: dict[str, str],
                                                                text: str):
    path = write(tmp_path, text)
    error = refused(path, {variable: "http://[::1/v1", **extra})
    assert (error.path, error.line, error.key) == (path, 1, "sources.a.base_url")
    assert f"'http://[::1/v1' (from {variable}) is not an http(s) URL: an IPv6 address" in error.message
    done = fastchat(child_env(path, home=tmp_path, **{variable: "http://[::1/v1"}), "config", "check")
    assert done.returncode == 2 and f"(from {variable}) is not an http(s) URL" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("variable", "extra"), [
    ("OLLAMA_HOST", {}),
    ("OPENAI_BASE_URL", {"OPENAI_API_KEY": "sk-test-not-a-real-key"}),
])
@pytest.mark.parametrize("value", ["http://[::1/v1", "http://127.0.0.1:99999", "http://host\nx"])
def test_a_bad_url_from_the_environment_with_no_config_file(tmp_path: Path, variable: str, extra: dict[str, str],
                                                             value: str):
    """Discovery (no file) reads the same variables: the error names the variable, not a file."""
    with pytest.raises(ConfigError) as caught:
        load(tmp_path / "missing.toml", env={variable: value, **extra})
    error = caught.value
    assert error.variable == variable and error.path is None
    assert str(error).startswith(f"environment variable {variable}: {value!r} is not an http(s) URL")
    assert str(error).endswith(f"; correct or unset {variable}")
    done = fastchat(child_env(None, home=tmp_path, **{variable: value, **extra}), "config", "check")
    assert done.returncode == 2 and f"fastchat: environment variable {variable}: " in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_good_urls_from_the_environment_still_work(tmp_path: Path):
    config = load(tmp_path / "missing.toml", env={"OLLAMA_HOST": "[::1]:9000", "OPENAI_API_KEY": "x",
                                                  "OPENAI_BASE_URL": "http://127.0.0.1:8080"})
    assert config.sources["local"].base_url == "http://[::1]:9000"
    assert config.sources["openai"].base_url == "http://127.0.0.1:8080/v1"


# -- the file itself: only a regular, bounded, UTF-8 TOML file -----------------------------------

def test_deeply_nested_arrays_are_an_error_with_the_line(tmp_path: Path):
    path = write(tmp_path, 'theme = "x"\n# a comment with [[[[ brackets\nx = ' + "[" * 100_000 + "]" * 100_000 + "\n")
    error = refused(path)
    assert error.path == path and error.line == 3
    assert "nested too deeply" in error.message
    done = fastchat(child_env(path, home=tmp_path), "config", "check")
    assert done.returncode == 2 and f"fastchat: {path}, line 3: keys, tables or arrays are nested" in done.stderr
    assert "RecursionError" not in done.stderr


@pytest.mark.parametrize("nested", [
    "x = " + "{a = " * 50_000 + "1" + "}" * 50_000,  # tomllib: RecursionError
    "[" + "a." * 50_000 + "b]",  # tomllib: seconds, quadratic in the parts (a MiB of them: minutes)
    "a." * 20_000 + "b = 1",
    '"a".' * 20_000 + '"b" = 1',
    "x = {" + "a." * 20_000 + "b = 1}",
    "[a.b.c.d.e.f.g.h.i]",  # nine levels
    "x = [[[[[[[[[1]]]]]]]]]",
])
def test_nesting_and_long_dotted_keys_are_refused_before_parsing(tmp_path: Path, nested: str):
    path = write(tmp_path, 'theme = "x"\n' + nested + "\n")
    error = refused(path)
    assert error.line == 2 and error.message.startswith("keys, tables or arrays are nested too deeply")


@pytest.mark.parametrize("text", [
    '[sources.a]\nkind = "ollama"\nmodel = "m"\n[a.b.c.d.e.f.g.h]\n',  # eight levels: unknown key, not too deep
    'system_prompt = "a.b.c.d.e.f.g.h.i.j.k.l [[[[[[[[[[ {{{{{{{{{{"\n',
    "# a.b.c.d.e.f.g.h.i.j [[[[[[[[[[[[\ntheme = 'x'\n",
    'system_prompt = """\na.b.c.d.e.f.g.h.i.j\n[[[[[[[[[[[[\n"""\n',
    "system_prompt = 'a.b.c.d.e.f.g.h.i.j [[[[[[[[[['\n",
])
def test_dots_and_brackets_in_strings_and_comments_are_not_nesting(tmp_path: Path, text: str):
    try:
        load(write(tmp_path, text), env={})
    except ConfigError as error:
        assert "nested too deeply" not in error.message and error.key == "a"


@pytest.mark.parametrize("kind", ["fifo", "directory", "link to /dev/zero", "/dev/null"])
def test_only_a_regular_file_is_read(tmp_path: Path, kind: str):
    """A FIFO nobody writes to used to hang, /dev/zero to exhaust memory: each is refused at once."""
    path = tmp_path / "config.toml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    else:
        path = Path("/dev/null")
    error = refused(path)
    assert error.path == path and error.message.startswith("not a regular file (it is ")
    done = fastchat(child_env(path, home=tmp_path), "config", "check", timeout=60)  # a hang fails with TimeoutExpired
    assert done.returncode == 2 and f"fastchat: {path}: not a regular file" in done.stderr
    done = fastchat(child_env(path, home=tmp_path), "ask", "hi", timeout=60)
    assert done.returncode == 2 and "not a regular file" in done.stderr


def test_config_init_does_not_write_into_a_fifo(tmp_path: Path):
    path = tmp_path / "config.toml"
    os.mkfifo(path)
    done = fastchat(child_env(path, home=tmp_path), "config", "init", "--force", timeout=60)  # it used to wait for a reader
    assert done.returncode == 2 and f"fastchat: {path}: not a regular file (it is a named pipe)" in done.stderr


def test_a_config_larger_than_the_bound_is_refused(tmp_path: Path):
    line = "# " + "x" * 98 + "\n"
    path = write(tmp_path, 'theme = "x"\n' + line * (MAX_CONFIG_BYTES // len(line) + 1))
    assert path.stat().st_size > MAX_CONFIG_BYTES
    assert "larger than 1 MiB" in refused(path).message
    write(tmp_path, 'theme = "x"\n' + line * (MAX_CONFIG_BYTES // len(line) - 1))  # just under: fine
    assert load(path, env={}).theme == "x"


def test_a_byte_order_mark_is_accepted(tmp_path: Path):
    path = write(tmp_path, b"\xef\xbb\xbf" + (OPENAI + URL).encode())
    assert load(path, env={}).sources["a"].base_url == "http://127.0.0.1:9/v1"
    assert fastchat(child_env(path, home=tmp_path), "config", "check").returncode == 0


def test_invalid_utf8_names_its_line(tmp_path: Path):
    path = write(tmp_path, b'theme = "x"\n\nsystem_prompt = "caf\xe9"\n')
    error = refused(path)
    assert (error.path, error.line) == (path, 3)
    assert "not UTF-8 text" in error.message and "save the file as UTF-8" in error.message
    done = fastchat(child_env(path, home=tmp_path), "config", "check")
    assert done.returncode == 2 and f"fastchat: {path}, line 3: not UTF-8 text" in done.stderr


def test_utf16_is_refused_as_not_utf8(tmp_path: Path):
    path = write(tmp_path, 'theme = "x"\n'.encode("utf-16"))
    assert "not UTF-8 text" in refused(path).message


# -- [router]: checked by load, so by `config check` and the chat alike --------------------------

HOSTED = OPENAI + URL + '[sources.local]\nkind = "ollama"\nmodel = "m"\n'


@pytest.mark.parametrize(("text", "line", "key", "words"), [
    (HOSTED + "router = 5\n", 8, "sources.local.router", "unknown key"),  # in [sources.local]: not the router
    ("router = 5\n" + HOSTED, 1, "router", "must be a table, written [router], not 5"),
    (HOSTED + "[router]\nsensitive_patterns = ['(unclosed']\n", 9, "router.sensitive_patterns",
     "not a valid regular expression"),
    (HOSTED + '[[router.rules]]\ntask = "chat"\nmatch = "[a-"\nsource = "a"\n', 10, "router.rules[1].match",
     "not a valid regular expression"),
    (HOSTED + '[[router.rules]]\ntask = ["sensitive"]\nsource = "a"\n', 10, "router.rules[1].source",
     "sensitive prompts only ever go to private sources"),
    (HOSTED + '[router]\ncooldown = 5\n', 9, "router.cooldown", "did you mean 'cooldown_s'?"),
    (HOSTED + '[router]\ncooldown_s = nan\n', 9, "router.cooldown_s", "not nan"),
    (HOSTED + '[router]\nlong_max_tokens = 0\n', 9, "router.long_max_tokens", "1 or more"),
    (HOSTED + '[[router.rules]]\ntask = "chat"\nsource = "a"\nfallback = "local"\n', 11,
     "router.rules[1].fallback", "did you mean 'fallbacks'?"),
    (HOSTED + 'router = {rules = [{task = "chat", source = "nowhere"}]}\n', 8, "sources.local.router", "unknown key"),
    ("router = {rules = [{task = \"chat\", source = \"nowhere\"}]}\n" + HOSTED, 1, "router.rules[1].source",
     "no source named 'nowhere'"),
])
def test_router_errors_are_found_by_load_and_by_config_check(tmp_path: Path, text: str, line: int, key: str,
                                                             words: str):
    path = write(tmp_path, text)
    error = refused(path)
    assert (error.line, error.key) == (line, key), str(error)
    assert words in error.message
    done = fastchat(child_env(path, home=tmp_path), "config", "check")
    assert done.returncode == 2 and f"fastchat: {path}, line {line}, key '{key}': " in done.stderr


def test_router_names_discovered_sources(tmp_path: Path):
    """A file with no sources gets discovered ones, and its [router] may name them."""
    path = write(tmp_path, '[[router.rules]]\ntask = "sensitive"\nsource = "local"\n')
    config = load(path, env={})
    assert list(config.sources) == ["local", "embedded"] and config.router.rules[0].source == ("local",)


# -- the schema: declared once, documented in config.example.toml --------------------------------

EXAMPLE = Path(__file__).resolve().parent.parent / "config.example.toml"


@pytest.mark.parametrize(("table", "fields"), [("top level", TOP_FIELDS), ("[sources.NAME]", SOURCE_FIELDS),
                                               ("[router]", ROUTER_FIELDS), ("[[router.rules]]", RULE_FIELDS),
                                               ("[templates.NAME]", TEMPLATE_FIELDS), ("[history]", HISTORY_FIELDS),
                                               ("[edit]", EDIT_FIELDS), ("[tools]", TOOLS_FIELDS),
                                               ("[mcp.NAME]", MCP_FIELDS)])
def test_every_key_of_the_schema_is_documented_in_the_example(table: str, fields: dict):
    text = EXAMPLE.read_text(encoding="utf-8")
    missing = [key for key in fields if key not in ("sources", "templates", "router", "rules", "history", "edit", "tools", "mcp")
               and not re.search(rf"^#? ?{key} = ", text, re.MULTILINE)]
    assert not missing, f"{table}: {missing} not in config.example.toml"


def test_the_example_config_loads_with_its_templates():
    config = load(EXAMPLE, env={})
    assert config.templates and all(isinstance(t, Template) for t in config.templates.values())


def test_every_value_is_shown_as_toml_writes_it(tmp_path: Path):
    error = refused(write(tmp_path, OPENAI + URL + 'private = "yes"\n'))
    assert error.message == "must be true or false, not 'yes' (whether sensitive prompts may go to this source)"
    error = refused(write(tmp_path, OPENAI + URL + "tags = [1, 2]\n"))
    assert error.message.startswith("must be a list of strings, not a list (")
    error = refused(write(tmp_path, '[sources.a]\nkind = "openai"\n' + URL + f'model = ["{"x" * 100}"]\n'))
    assert "xxxx" not in error.message  # a list is named, not printed


def test_a_long_wrong_value_is_cut_in_the_message(tmp_path: Path):
    error = refused(write(tmp_path, f'max_tokens = "{"9" * 5000}"\n'))
    assert len(error.message) < 200 and error.message.endswith("... (the most tokens of any reply)")


# -- new keys for issue 14: temperature, system_prompt per source, templates -----------------------

def test_temperature_and_system_prompt_per_source(tmp_path: Path):
    path = write(tmp_path, 'temperature = 0.7\nsystem_prompt = "Be brief."\n' + OPENAI + URL
                 + 'temperature = 0\nsystem_prompt = "Answer in French."\n')
    config = load(path, env={})
    assert (config.temperature, config.system_prompt) == (0.7, "Be brief.")
    assert (config.sources["a"].temperature, config.sources["a"].system_prompt) == (0.0, "Answer in French.")
    assert isinstance(config.temperature, float)
    assert SourceConfig("x", "openai", "http://127.0.0.1/v1", "m").temperature is None


def test_templates_are_parsed(tmp_path: Path):
    path = write(tmp_path, OPENAI + URL + '[templates.explain]\nsystem = "You teach."\nprompt = "Explain: $input"\n'
                 '\n[templates.plain]\nprompt = "Summarise the text below."\n')
    templates = load(path, env={}).templates
    assert templates["explain"] == Template("explain", "You teach.", "Explain: $input")
    assert templates["plain"] == Template("plain", None, "Summarise the text below.")


@pytest.mark.parametrize(("prompt", "given", "expected"), [
    ("Explain: $input", "x = 1", "Explain: x = 1"),
    ("Explain ${input}ly", "quick", "Explain quickly"),
    ("Costs $$5 for $input; $other stays", "two", "Costs $5 for two; $other stays"),
    ("$input and $input", "a", "a and a"),
    ("Fix a $ sign: $input", "b", "Fix a $ sign: b"),
    ("Summarise the text below.", "the text", "Summarise the text below.\n\nthe text"),
    ("Summarise the text below.", "", "Summarise the text below."),
    ("", "only the input", "only the input"),
])
def test_template_render(prompt: str, given: str, expected: str):
    assert Template("t", None, prompt).render(given) == expected


def test_render_substitutes_the_input_once(tmp_path: Path):
    """Text that itself contains $input is not substituted again."""
    assert Template("t", None, "Q: $input").render("what is $input?") == "Q: what is $input?"


@pytest.mark.parametrize(("text", "line", "key", "words"), [
    ('[templates.x]\nsystem = "s"\n', 1, "templates.x", "missing 'prompt'"),
    ('[templates.x]\nprompt = "p"\nsytem = "s"\n', 3, "templates.x.sytem", "did you mean 'system'?"),
    ('[templates.x]\nprompt = 5\n', 2, "templates.x.prompt", "must be a string"),
    ("templates = 5\n", 1, "templates", "must be a table, written [templates.NAME]"),
    ('[templates]\nx = "p"\n', 2, "templates.x", "must be a table, written [templates.NAME]"),
])
def test_a_bad_template_is_refused(tmp_path: Path, text: str, line: int, key: str, words: str):
    error = refused(write(tmp_path, text))
    assert (error.line, error.key) == (line, key) and words in error.message


def test_a_secret_in_a_template_is_refused_and_not_shown(tmp_path: Path):
    key = "csk-abcdefghijklmnopqrstuvwxyz0123456789"
    error = refused(write(tmp_path, f'[templates.x]\nprompt = "use {key} for $input"\n'))
    assert error.key == "templates.x.prompt" and "looks like a secret" in error.message and key not in str(error)


# -- kind = "embedded": folded into the schema, same behaviour ----------------------------------

EMBEDDED = '[sources.e]\nkind = "embedded"\nmodel = "/models/gemma.gguf"\n'


def test_embedded_defaults_are_kept(tmp_path: Path):
    source = load(write(tmp_path, EMBEDDED + "threads = 2\ngpu_layers = 0\ncontext_tokens = 4096\n"),
                  env={}).sources["e"]
    assert (source.kind, source.base_url, source.model, source.tags) == ("embedded", "", "/models/gemma.gguf",
                                                                         ["local", "private"])
    assert (source.timeout_s, source.threads, source.gpu_layers, source.context_tokens) == (300.0, 2, 0, 4096)
    assert source.is_private


@pytest.mark.parametrize(("text", "line", "key", "words"), [
    (EMBEDDED + 'base_url = "http://127.0.0.1:1"\n', 4, "sources.e.base_url",
     "an embedded source has no base_url: fastchat runs llama.cpp itself"),
    (EMBEDDED + 'api_key_env = "MY_KEY"\n', 4, "sources.e.api_key_env", "an embedded source has no api_key_env"),
    (EMBEDDED + "threads = 0\n", 4, "sources.e.threads", "from 1 to 1024"),
    (EMBEDDED + "gpu_layers = -1\n", 4, "sources.e.gpu_layers", "from 0 to"),
    (EMBEDDED + 'think = "max"\n', 4, "sources.e.think", "true, false or one of"),
    ('[sources.e]\nkind = "embedded"\n', 1, "sources.e", "missing 'model' (a GGUF file's path"),
    (OPENAI + URL + "threads = 4\n", 5, "sources.a.threads", 'it is for kind = "embedded" only'),
])
def test_embedded_errors(tmp_path: Path, text: str, line: int, key: str, words: str):
    error = refused(write(tmp_path, text))
    assert (error.line, error.key) == (line, key) and words in error.message, str(error)


def test_edit_commit_is_off_by_default_and_read_from_the_edit_table(tmp_path: Path):
    assert load(write(tmp_path, "theme = \"fastchat-dark\"\n"), env={}).edit_commit is False
    assert load(write(tmp_path, "[edit]\ncommit = true\n"), env={}).edit_commit is True
    error = refused(write(tmp_path, "[edit]\ncommit = \"yes\"\n"))
    assert (error.line, error.key) == (2, "edit.commit")
