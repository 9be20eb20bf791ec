"""Where fastchat's files live on each OS: Linux keeps the XDG paths it always had (and their overrides), and
macOS and Windows get their own folders from platformdirs' classes for those systems, read here on any OS."""

from __future__ import annotations

from pathlib import Path, PureWindowsPath

import pytest
from platformdirs.macos import MacOS
from platformdirs.unix import Unix
from platformdirs.windows import Windows

from fastchat_tui import gguf, paths
from fastchat_tui.config import config_path
from tests.helpers import child_env, fastchat

XDG = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME")


@pytest.fixture
def bare_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME and none of the variables that move fastchat's folders."""
    for name in (*XDG, "FASTCHAT_DATA_DIR", "FASTCHAT_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def test_linux_paths_are_the_xdg_defaults(bare_home: Path):
    assert paths.config_dir(Unix) == bare_home / ".config" / "fastchat"
    assert paths.data_dir(Unix) == bare_home / ".local" / "share" / "fastchat"
    assert paths.cache_dir(Unix) == bare_home / ".cache" / "fastchat"
    assert gguf.cache_dir() == bare_home / ".cache" / "fastchat" / "models"  # this machine is a Linux one


def test_linux_paths_follow_the_xdg_variables_and_fastchat_s_own(bare_home: Path, monkeypatch: pytest.MonkeyPatch):
    for name in XDG:
        monkeypatch.setenv(name, str(bare_home / name.lower()))
    assert paths.config_dir(Unix) == bare_home / "xdg_config_home" / "fastchat"
    assert config_path() == bare_home / "xdg_config_home" / "fastchat" / "config.toml"
    assert paths.data_dir(Unix) == bare_home / "xdg_data_home" / "fastchat"
    assert paths.cache_dir(Unix) == bare_home / "xdg_cache_home" / "fastchat"
    monkeypatch.setenv("FASTCHAT_DATA_DIR", str(bare_home / "mine"))
    monkeypatch.setenv("FASTCHAT_CONFIG", str(bare_home / "my.toml"))
    assert paths.data_dir(Unix) == paths.data_dir(MacOS) == bare_home / "mine"  # on every OS
    assert config_path() == bare_home / "my.toml"


def test_macos_paths(bare_home: Path):
    support = bare_home / "Library" / "Application Support" / "fastchat"
    assert paths.config_dir(MacOS) == support
    assert paths.data_dir(MacOS) == support
    assert paths.cache_dir(MacOS) == bare_home / "Library" / "Caches" / "fastchat"


def test_windows_paths(bare_home: Path, monkeypatch: pytest.MonkeyPatch):
    # platformdirs asks the Windows shell for these folders; its WIN_PD_OVERRIDE_* variables answer in its place
    monkeypatch.setenv("WIN_PD_OVERRIDE_APPDATA", r"C:\Users\you\AppData\Roaming")
    monkeypatch.setenv("WIN_PD_OVERRIDE_LOCAL_APPDATA", r"C:\Users\you\AppData\Local")
    assert PureWindowsPath(paths.config_dir(Windows)) == PureWindowsPath(r"C:\Users\you\AppData\Roaming\fastchat")
    assert PureWindowsPath(paths.data_dir(Windows)) == PureWindowsPath(r"C:\Users\you\AppData\Local\fastchat")
    assert PureWindowsPath(paths.cache_dir(Windows)) == PureWindowsPath(r"C:\Users\you\AppData\Local\fastchat\Cache")


def test_a_fresh_linux_home_gets_the_same_files_as_before(tmp_path: Path):
    """The real command, with nothing but HOME: the config path it prints and the history it writes."""
    env = child_env(home=tmp_path)
    del env["XDG_CONFIG_HOME"], env["FASTCHAT_DATA_DIR"]
    assert fastchat(env, "config", "path").stdout.strip() == str(tmp_path / ".config" / "fastchat" / "config.toml")
    assert fastchat(env, "history").returncode == 0
    assert (tmp_path / ".local" / "share" / "fastchat" / "history.db").is_file()
