"""Reading a source's event stream in tests."""

from __future__ import annotations

from fastchat_tui.sources.base import SourceError, TextDelta


async def collect(source, messages, **kw) -> tuple[list, SourceError | None]:
    """Every event ``source.stream`` yielded, and the error it ended with (or ``None``); closes the source."""
    events: list = []
    try:
        async for event in source.stream(messages, **kw):
            events.append(event)
    except SourceError as exc:
        return events, exc
    finally:
        await source.aclose()
    return events, None


def texts(events) -> list[str]:
    return [e.text for e in events if isinstance(e, TextDelta)]
