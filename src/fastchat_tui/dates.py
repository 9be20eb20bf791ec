"""Dates as fastchat shows and reads them, in local time: one format each, used everywhere.

``local_minute`` for tables and lists, ``iso`` for JSON, ``month_key`` and
``month_range`` for the ``YYYY-MM`` months that usage and budgets are summed over.
"""

from __future__ import annotations

from datetime import datetime

UNKNOWN_MINUTE = "????-??-?? ??:??"
"""What :func:`local_minute` shows of seconds no date has (a damaged history's), as wide as a date."""


def local_minute(ts: float) -> str:
    """``2026-05-09 10:00``: epoch seconds as a local date and time to the minute."""
    when = _local(ts)
    return UNKNOWN_MINUTE if when is None else when.strftime("%Y-%m-%d %H:%M")


def iso(ts: float | None) -> str | None:
    """Epoch seconds as local ISO 8601 with its UTC offset, to the second; ``None`` stays ``None``, and so do
    seconds no date has."""
    when = None if ts is None else _local(ts)
    return None if when is None else when.astimezone().isoformat(timespec="seconds")


def _local(ts: float) -> datetime | None:
    """``ts`` as a local datetime, or ``None`` if no date has it (out of range, or not a number)."""
    try:
        return datetime.fromtimestamp(ts)
    except (OverflowError, OSError, ValueError, TypeError):
        return None


def month_key(ts: float | None = None) -> str:
    """``2026-05``: the local calendar month of ``ts`` (default: now), as :func:`month_range` reads it."""
    return (datetime.now() if ts is None else datetime.fromtimestamp(ts)).strftime("%Y-%m")


def month_range(month: str | None = None) -> tuple[float, float]:
    """Start and end (epoch seconds, local time) of ``YYYY-MM``, or of the current month."""
    if month is None:
        first = datetime.now().replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    else:
        try:
            first = datetime.strptime(month, "%Y-%m")
        except ValueError:
            raise ValueError(f"'{month}' is not a month like 2026-05") from None
    following = first.replace(year=first.year + 1, month=1) if first.month == 12 else first.replace(month=first.month + 1)
    return first.timestamp(), following.timestamp()
