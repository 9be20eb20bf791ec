"""One edit turn: files and an instruction in, a planned change out (or why there is none), nothing written.

The request takes the path of any prompt: it is sent by a :class:`~fastchat_tui.conversation.Conversation` with
the files as ``SendOptions.attachments``, so routing, the context check and the data boundary see them exactly as
they see any attachment (a ``.env`` or a file holding a key keeps the edit on private sources). The edit format is
chosen by file size and model (:mod:`fastchat_tui.edit_prompt`); the reply is read with
:func:`~fastchat_tui.edits.find_changes` and matched against the files with
:func:`~fastchat_tui.edits.plan_changes`, the text each file had when it was read being its base (a file that
changes meanwhile is a conflict, not a silent overwrite). A change the reply got wrong is sent back once: the
:class:`~fastchat_tui.edits.EditError` message goes to the model as a follow-up turn, and its second reply is
planned the same way; then the turn fails (at once for an error no reply can mend: :data:`THE_MODELS_KINDS`).

:func:`edit` yields the conversation's events as they come (front ends render them as for any reply, and answer
its questions), and its own: :class:`EditStarted`, :class:`EditRetrying`, then :class:`EditPlanned` or
:class:`EditFailed`. Applying the plan is the caller's decision (:func:`~fastchat_tui.edits.apply_plan`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, replace
from pathlib import Path

from fastchat_tui.attachment import Attachment
from fastchat_tui.conversation import Conversation, ConversationEvent
from fastchat_tui.edit_prompt import FORM_NAMES, Form, build_prompt, choose_form, commit_message, retry_prompt
from fastchat_tui.edits import EditError, Plan, find_changes, plan_changes
from fastchat_tui.events import Finished
from fastchat_tui.inputs import InputError, read_path
from fastchat_tui.review import detect_language
from fastchat_tui.sources.base import SourceError
from fastchat_tui.turn import SendOptions, Turn

RETRIES = 1
"""How many times a reply whose change cannot be planned is sent back with the error, before the turn fails."""
THE_MODELS_KINDS = ("no_match", "ambiguous", "outside")
"""The planning errors a reply makes (lines that match nowhere or twice, a path out of the project): sent back. The
others (a file that changed meanwhile, a binary or huge file, a read that failed) no second reply can mend."""


@dataclass(frozen=True, slots=True)
class EditFile:
    """A file to edit, as read: where it is, what the model is shown, and the text the change must apply to."""

    path: Path
    """Absolute, inside the root."""
    attachment: Attachment
    """Named by its path relative to the root, with LF line ends (the change keeps the file's own)."""
    base: str | None
    """The text as read from disk; ``None``: the file does not exist yet (the edit creates it)."""


@dataclass(frozen=True, slots=True)
class EditStarted:
    """The edit prompt is about to be sent, asking for ``form``."""

    form: Form


@dataclass(frozen=True, slots=True)
class EditRetrying:
    """The reply's change could not be planned (``error``); it is sent back, as attempt number ``attempt``."""

    error: EditError
    attempt: int


@dataclass(frozen=True, slots=True)
class EditPlanned:
    """The change, matched against the files and ready to preview and apply; ``message``: the commit message the
    model wrote, when asked for one."""

    plan: Plan
    turn: Turn
    attempts: int
    message: str | None = None


@dataclass(frozen=True, slots=True)
class EditFailed:
    """No change to apply: ``message`` says why. ``error``: the last planning error (``None`` when the reply itself
    failed or was cut: ``turn.error`` and ``turn.status`` say how)."""

    message: str
    attempts: int
    turn: Turn | None
    error: EditError | None = None


EditEvent = ConversationEvent | EditStarted | EditRetrying | EditPlanned | EditFailed


def project_root(start: Path) -> Path:
    """The git work tree ``start`` is in (the nearest folder holding ``.git``), else ``start`` itself: the folder
    the model's paths are relative to."""
    start = start.resolve()
    return next((folder for folder in (start, *start.parents) if (folder / ".git").exists()), start)


def read_files(paths: Sequence[str], root: Path, limit: int) -> list[EditFile]:
    """Each path read within ``limit`` bytes (:func:`~fastchat_tui.inputs.read_path`: binary refused), once.
    A path that does not exist is a new file, if its folder exists. Raises :class:`InputError` for a path outside
    ``root``, a folder, or text that is not valid in its encoding (the edit would change bytes the model never saw)."""
    files: dict[Path, EditFile] = {}
    root = root.resolve()
    for given in paths:
        path = Path(given).resolve()
        if not path.is_relative_to(root):
            raise InputError(f"{given} is outside {root}: edit files of the project you run fastchat edit in")
        name = path.relative_to(root).as_posix()
        if path in files:
            continue
        if not path.exists() and not path.is_symlink():
            if not path.parent.is_dir():
                raise InputError(f"{given}: no such file, and no folder {path.parent} to create it in")
            files[path] = EditFile(path, Attachment(name, "", language=detect_language(name, "")), None)
            continue
        read = read_path(str(path), given, limit)
        if read.warning:
            raise InputError(f"{read.warning}; fastchat edit changes only text it can show the model as it is")
        text = read.text.replace("\r\n", "\n")
        files[path] = EditFile(path, Attachment(name, text, size=read.size, language=detect_language(name, text),
                                                path=name), read.text)
    return list(files.values())


def model_for(conversation: Conversation, prompt: str, options: SendOptions) -> str | None:
    """The model the prompt would go to (the route the session would take now); ``None`` when it cannot be routed
    (the send then reports why)."""
    session = conversation.session
    chosen = conversation.choice(options)
    try:
        route = session.prepare(prompt, chosen)
    except SourceError:
        return None
    return chosen.model if chosen.model and chosen.source == route.source else session.config.sources[route.source].model


async def edit(conversation: Conversation, root: Path, files: Sequence[EditFile], instruction: str,
               options: SendOptions | None = None, *, form: Form | None = None, commit: bool = False,
               may_change_nothing: bool = False) -> AsyncGenerator[EditEvent, None]:
    """Ask for ``instruction`` applied to ``files`` (under ``root``) and plan the change; see the module docstring.
    ``options.attachments``: more inputs that go along (the instruction holds their text: the diff ``review --fix``
    reviews), for the router and the data boundary. ``form``: the edit format (default:
    :func:`~fastchat_tui.edit_prompt.choose_form`); ``commit``: ask for a commit message too;
    ``may_change_nothing``: the instruction allows a reply that proposes no change (``review --fix`` of sound code),
    which is then planned as a plan of no changes instead of sent back."""
    options = options or SendOptions()
    attachments = tuple(file.attachment for file in files)
    options = replace(options, attachments=(*options.attachments, *attachments))
    if form is None:
        draft = build_prompt(attachments, instruction, "whole", commit=commit)
        max_tokens = options.max_tokens or conversation.session.config.max_tokens
        form = choose_form(attachments, model_for(conversation, draft, options), max_tokens)
    bases = {file.path: file.base for file in files if file.base is not None}
    prompt = build_prompt(attachments, instruction, form, commit=commit)
    yield EditStarted(form)
    for attempt in range(1, RETRIES + 2):
        turn: Turn | None = None
        async with aclosing(conversation.send(prompt, options)) as events:
            async for event in events:
                if isinstance(event, Finished):
                    turn = event.turn
                yield event
        if turn is None or turn.status != "complete":
            yield EditFailed(_unanswered(turn), attempt, turn)
            return
        try:
            plan = plan_reply(turn.text, root, bases, may_change_nothing=may_change_nothing)
        except EditError as error:
            if error.kind not in THE_MODELS_KINDS:
                yield EditFailed(f"the change cannot be applied: {error.message}", attempt, turn, error)
                return
            if attempt > RETRIES:
                yield EditFailed(f"the change could not be applied after {attempt} replies: {error.message}", attempt,
                                 turn, error)
                return
            yield EditRetrying(error, attempt + 1)
            prompt = retry_prompt(error.message, form)
            options = replace(options, source=turn.source, model=turn.model)  # the same model tries again
            continue
        yield EditPlanned(plan, turn, attempt, commit_message(turn.text) if commit else None)
        return


def plan_reply(reply: str, root: Path, bases: dict[Path, str], *, may_change_nothing: bool = False) -> Plan:
    """The change ``reply`` proposes, planned against the files under ``root``; raises :class:`EditError` when it
    cannot be matched, or proposes none (unless it ``may_change_nothing``: then the plan has no changes)."""
    proposals = find_changes(reply)
    if not proposals and may_change_nothing:
        return Plan(root.resolve(), [])
    if not proposals:
        raise EditError("no_match", "the reply holds no change fastchat can read: no file block, SEARCH/REPLACE block or "
                        "unified diff naming one of the files")
    plan = plan_changes(proposals, root, bases=bases)
    if not plan.changes:
        raise EditError("no_match", "the reply's change leaves every file as it was")
    return plan


def _unanswered(turn: Turn | None) -> str:
    """Why a reply that did not complete gives no change to apply."""
    if turn is None or turn.status == "cancelled":
        return "cancelled: nothing was changed"
    if turn.status == "truncated":
        return (f"the reply was {turn.end_note or 'cut at the token limit'}, so its change is incomplete: nothing was "
                f"changed; raise max_tokens, or ask for {FORM_NAMES['search_replace']} or {FORM_NAMES['diff']}, "
                "which are shorter")
    if turn.error is not None:
        return f"no change: {turn.error.shown}"
    return f"no change: the reply ended {turn.status}"
