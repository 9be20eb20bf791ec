"""Tool calls on the wire: assembling OpenAI's streamed pieces, reading Ollama's whole ones, and sending tool rounds
in Ollama's message shape. Bounded (:data:`~.base.MAX_TOOL_CALLS`, :data:`~.base.MAX_TOOL_ARGUMENTS`); anything of
the wrong shape raises :class:`BadToolCall`, which each source reports as a ``protocol`` error."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from fastchat_tui.sources.base import MAX_TOOL_ARGUMENTS, MAX_TOOL_CALLS, Message, ToolCall
from fastchat_tui.text import clean

MAX_NAME = 128
"""The longest tool name taken from a server."""


class BadToolCall(ValueError):
    """A tool call of the wrong shape or size; the message says what, in a few words."""


class ToolCallParts:
    """OpenAI's streamed ``delta.tool_calls``: each piece names its call by ``index``; the first brings ``id`` and
    ``function.name``, the following ones more of ``function.arguments``. Several calls may interleave."""

    __slots__ = ("_calls",)

    def __init__(self) -> None:
        self._calls: dict[int, list[Any]] = {}  # index -> [id, name, argument pieces, argument length]

    def __bool__(self) -> bool:
        return bool(self._calls)

    def feed(self, pieces: object) -> None:
        if type(pieces) is not list:
            raise BadToolCall("tool_calls that are not a list")
        for piece in pieces:
            if type(piece) is not dict:
                raise BadToolCall("a tool call that is not an object")
            index = piece.get("index")
            if index is None:  # servers that send each call whole leave the index out
                index = next((i for i, c in self._calls.items() if c[0] == piece.get("id")),
                             len(self._calls) if piece.get("id") else max(self._calls, default=0))
            if type(index) is not int or not 0 <= index < MAX_TOOL_CALLS:
                raise BadToolCall(f"a tool call index that is not 0 to {MAX_TOOL_CALLS - 1}")
            call = self._calls.get(index)
            if call is None:
                if len(self._calls) >= MAX_TOOL_CALLS:
                    raise BadToolCall(f"more than {MAX_TOOL_CALLS} tool calls")
                call = self._calls[index] = ["", "", [], 0]
            ident = piece.get("id")
            if ident:
                call[0] = _text(ident, "id")
            function = piece.get("function") or {}
            if type(function) is not dict:
                raise BadToolCall("a tool call whose function is not an object")
            name = function.get("name")
            if name:
                call[1] += _text(name, "name")
                if len(call[1]) > MAX_NAME:
                    raise BadToolCall(f"a tool name longer than {MAX_NAME} characters")
            arguments = function.get("arguments")
            if arguments:
                if type(arguments) is not str:  # a few servers send the object itself
                    arguments = json.dumps(arguments)
                call[3] += len(arguments)
                if call[3] > MAX_TOOL_ARGUMENTS:
                    raise BadToolCall(f"tool call arguments longer than {MAX_TOOL_ARGUMENTS:,} characters")
                call[2].append(arguments)

    def calls(self) -> list[ToolCall]:
        """The calls, in index order; a call without a name is the server's fault."""
        done = []
        for index in sorted(self._calls):
            ident, name, pieces, _ = self._calls[index]
            if not name:
                raise BadToolCall("a tool call without a name")
            done.append(ToolCall(ident or f"call_{index}", clean(name), "".join(pieces)))
        return done


def ollama_calls(calls: object, first: int = 0) -> list[ToolCall]:
    """Ollama's ``message.tool_calls``: whole calls, ``function.arguments`` an object, no ids (made up here,
    numbered from ``first`` so the calls of one reply stay apart)."""
    if type(calls) is not list:
        raise BadToolCall("tool_calls that are not a list")
    if first + len(calls) > MAX_TOOL_CALLS:
        raise BadToolCall(f"more than {MAX_TOOL_CALLS} tool calls")
    found = []
    for number, call in enumerate(calls, first):
        function = call.get("function") if type(call) is dict else None
        if type(function) is not dict:
            raise BadToolCall("a tool call without a function object")
        name = _text(function.get("name") or "", "name")
        if not name or len(name) > MAX_NAME:
            raise BadToolCall("a tool call without a name" if not name else f"a tool name longer than {MAX_NAME}")
        arguments = function.get("arguments", {})
        text = arguments if type(arguments) is str else json.dumps(arguments, ensure_ascii=False)
        if len(text) > MAX_TOOL_ARGUMENTS:
            raise BadToolCall(f"tool call arguments longer than {MAX_TOOL_ARGUMENTS:,} characters")
        ident = call.get("id")
        found.append(ToolCall(_text(ident, "id") if ident else f"call_{number}", clean(name), text))
    return found


def openai_messages(messages: Sequence[Message]) -> Sequence[Message]:
    """``messages`` as the chat completions API takes them: a tool result is its ``tool_call_id`` and ``content``
    (the ``name`` kept beside it is Ollama's, and strict servers refuse fields they do not know)."""
    if not any(m.get("role") == "tool" for m in messages):
        return messages
    return [{key: value for key, value in m.items() if key != "name"} if m.get("role") == "tool" else m
            for m in messages]


def ollama_messages(messages: Sequence[Message]) -> list[Mapping[str, Any]]:
    """``messages`` as Ollama takes them: an assistant's tool calls with their arguments as objects, a tool result
    with the ``tool_name`` it answers (Ollama pairs results by name and order, not by id)."""
    if not any("tool_calls" in m or m.get("role") == "tool" for m in messages):
        return list(messages)
    sent: list[Mapping[str, Any]] = []
    for message in messages:
        if "tool_calls" in message:
            calls = [{"function": {"name": call["function"]["name"], "arguments": _object(call["function"]["arguments"])}}
                     for call in message["tool_calls"]]
            sent.append({"role": "assistant", "content": message.get("content") or "", "tool_calls": calls})
        elif message.get("role") == "tool":
            sent.append({"role": "tool", "content": message.get("content") or "", "tool_name": message.get("name", "")})
        else:
            sent.append(message)
    return sent


def _object(arguments: str) -> object:
    """A call's arguments as the object Ollama wants back; text that is not a JSON object goes as it is."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return arguments
    return value if isinstance(value, dict) else arguments


def _text(value: object, what: str) -> str:
    if type(value) is not str:
        raise BadToolCall(f"a tool call {what} that is not text")
    return value
