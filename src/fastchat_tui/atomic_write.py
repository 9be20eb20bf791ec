"""Write a file all at once: a temporary file next to it, flushed to disk, then renamed over it.

A reader (or a crash) sees the old file or the new one, never half of it.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(path: Path, data: bytes) -> None:
    """Put ``data`` at ``path`` atomically (its directory must exist); the temporary file goes if anything fails.
    A file replaced keeps its permissions; a new one gets the umask's, as any file the user makes."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.partial")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
            file.flush()
            if path.exists():
                os.chmod(file.fileno(), path.stat().st_mode & 0o7777)
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
