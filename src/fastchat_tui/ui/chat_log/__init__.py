"""The chat transcript: user messages, streamed Markdown replies and notices.

`ChatLog` keeps up with replies streamed at 20,000 tokens a second because a reply is
cut into top-level Markdown blocks as it arrives (`blocks`), each finished block is
rendered once (`render`, in the log's Markdown flavour: `markdown`) into cached lines
(`cache`) held by its entry (`entries`; a reply's answer and thinking each stream as a
`flow`), only the unfinished tail is rendered again, at most once per frame (`pacing`),
and the widget draws only the lines on screen (`widget`). `compare` shows one prompt's
replies from several sources side by side, a `ChatLog` per column.
"""

from fastchat_tui.ui.chat_log.compare import CompareView
from fastchat_tui.ui.chat_log.entries import PastMessage, ReplyEntry, ReplyStatus, Severity, ThinkingFigures
from fastchat_tui.ui.chat_log.render import RenderStats
from fastchat_tui.ui.chat_log.widget import ChatLog

__all__ = ["ChatLog", "CompareView", "PastMessage", "RenderStats", "ReplyEntry", "ReplyStatus", "Severity", "ThinkingFigures"]
