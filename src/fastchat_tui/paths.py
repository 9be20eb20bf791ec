r"""Where fastchat keeps its files on each OS: the folders :mod:`platformdirs` gives for the app ``fastchat``.

- **Linux and BSD** (the XDG rules, as before): config ``$XDG_CONFIG_HOME/fastchat`` (``~/.config/fastchat``),
  data ``$XDG_DATA_HOME/fastchat`` (``~/.local/share/fastchat``), cache ``$XDG_CACHE_HOME/fastchat``
  (``~/.cache/fastchat``).
- **macOS**: config and data ``~/Library/Application Support/fastchat``, cache ``~/Library/Caches/fastchat``.
- **Windows**: config ``%APPDATA%\fastchat`` (it roams with the profile), data ``%LOCALAPPDATA%\fastchat``
  (the history can be large: it does not), cache ``%LOCALAPPDATA%\fastchat\Cache``.

``FASTCHAT_DATA_DIR`` names the data folder on every OS (the history, the UI's state, the notices given),
and ``FASTCHAT_CONFIG`` the config file (:func:`fastchat_tui.config.config_path`). The small state files stay
in the data folder, as they always have on Linux, so one variable moves all of a user's files.

Each function takes the platform as a :class:`platformdirs.api.PlatformDirsABC` subclass (default: this
machine's), so the answers of every OS can be read on any of them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import platformdirs
from platformdirs.api import PlatformDirsABC

APP = "fastchat"
Platform = type[PlatformDirsABC]


def config_dir(platform: Platform = platformdirs.PlatformDirs) -> Path:
    """The config file's folder (and the user's themes in ``themes/``)."""
    return Path(platform(APP, appauthor=False, roaming=True).user_config_dir)


def data_dir(platform: Platform = platformdirs.PlatformDirs, env: Mapping[str, str] | None = None) -> Path:
    """``$FASTCHAT_DATA_DIR`` if set, else the platform's data folder: the history and small state files."""
    if override := (os.environ if env is None else env).get("FASTCHAT_DATA_DIR"):
        return Path(override)
    return Path(platform(APP, appauthor=False).user_data_dir)


def cache_dir(platform: Platform = platformdirs.PlatformDirs) -> Path:
    """What can be made again: the model files assembled from a package's chunks (``models/``)."""
    return Path(platform(APP, appauthor=False).user_cache_dir)
