"""How to add one of fastchat's extras (``embedded``) to the environment it runs in.

fastchat is installed from a clone (the README's ``pip install '.[embedded]'``), not from a package index, so
a hint that names a published package (``pip install 'fastchat-tui[embedded]'``) cannot work. The hint names
the interpreter that runs fastchat now and the checkout it was installed from: the source tree it runs from,
or the directory pip recorded (``direct_url.json``, PEP 610).
"""

from __future__ import annotations

import functools
import json
import shlex
import sys
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit

DISTRIBUTION = "fastchat-tui"


def checkout() -> Path | None:
    """The fastchat clone this install came from, if it is still there: the tree this code runs from (an
    editable install, ``PYTHONPATH=src``), else the local directory pip installed it from."""
    tree = Path(__file__).resolve().parents[2]
    if (tree / "pyproject.toml").is_file() and (tree / "src" / "fastchat_tui").is_dir():
        return tree
    try:
        recorded = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
        url = json.loads(recorded or "{}").get("url", "")
    except (metadata.PackageNotFoundError, ValueError, AttributeError):
        return None
    parts = urlsplit(url)
    if parts.scheme != "file":
        return None
    directory = Path(unquote(parts.path))
    return directory if (directory / "pyproject.toml").is_file() else None


@functools.cache
def install_command(extra: str) -> str:
    """The command that installs ``extra`` into the environment running fastchat:
    ``/path/.venv/bin/python -m pip install '/path/fastchat[embedded]'``, or, with no checkout known, the
    same to run in the clone (``'.[embedded]'``)."""
    python = shlex.quote(sys.executable or "python3")
    tree = checkout()
    if tree is None:
        return f"`{python} -m pip install '.[{extra}]'` in your fastchat clone"
    return f"`{python} -m pip install {shlex.quote(f'{tree}[{extra}]')}`"
