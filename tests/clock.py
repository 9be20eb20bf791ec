"""A wall clock that tests set by hand, for code that takes ``clock=`` (the router's budgets and cool-downs)."""

from __future__ import annotations

import datetime as dt


class FakeClock:
    """Returns ``t`` (epoch seconds) until a test moves it; by default local noon on 2026-05-15, mid-month."""

    def __init__(self, t: float | None = None) -> None:
        self.t = dt.datetime(2026, 5, 15, 12).timestamp() if t is None else t

    def __call__(self) -> float:
        return self.t
