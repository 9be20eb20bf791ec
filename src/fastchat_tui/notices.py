"""Notes fastchat gives once per machine, such as the first code review sent to a hosted source.

Which were given is kept in ``notices.json`` in the data directory (beside the history), so a note is not
repeated on every run; deleting the file brings them back.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from fastchat_tui.paths import data_dir


def notices_path() -> Path:
    return data_dir() / "notices.json"


def first_time(name: str, path: Path | None = None) -> bool:
    """Whether the note ``name`` was never given here; it counts as given from now on. A file that cannot be
    read counts as none given, and one that cannot be written leaves the note to be given again next time."""
    path = path or notices_path()
    try:
        given = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        given = []
    given = [item for item in given if isinstance(item, str)] if isinstance(given, list) else []
    if name in given:
        return False
    partial = path.with_name(path.name + ".partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps([*given, name]) + "\n", encoding="utf-8")
        os.replace(partial, path)  # never a half-written file
    except OSError:
        pass
    return True
