"""Rename through the semantic source: textDocument/prepareRename, then textDocument/rename,
and the server's WorkspaceEdit checked before anything is shown or applied — every file it
names inside the workspace roots (one outside refuses the whole rename), no file created,
renamed or deleted, every range a range of the file, and every range holding the old name
(a server whose view of a file is older than the file would otherwise shift the edit)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import Refusal
from ..workspace import Workspace, uri_to_path

if TYPE_CHECKING:
    from . import Semantic


@dataclass(frozen=True)
class TextChange:
    """One edit of a server's answer: 0-based lines, UTF-16 characters, as LSP gives them."""

    line: int
    character: int
    end_line: int
    end_character: int
    new_text: str


@dataclass
class Renamed:
    server: str
    old_name: str  # what prepareRename's range holds ("" when the server gave no range)
    files: dict[Path, list[TextChange]] = field(default_factory=dict)
    partial: str | None = None


def rename(source: Semantic, path: Path, line: int, column: int, new_name: str) -> Renamed:
    """The changes that rename the symbol at a 1-based position to `new_name`, checked."""
    at = {"textDocument": {"uri": path.as_uri()}, "position": source.position(path, line, column)}
    source.show_buffers(path)  # the server renames the text the editor holds, saved or not
    server, prepared, _ = refused_as(source, "textDocument/prepareRename", path, at)
    if prepared is None:
        raise Refusal(
            "cannot_rename",
            f"{server} says nothing it can rename is at {line}:{column}; nothing was changed.",
        )
    old_name = prepared_name(source.ws, path, prepared)
    server, edit, partial = refused_as(source, "textDocument/rename", path, {**at, "newName": new_name})
    files = workspace_changes(source.ws, edit, server)
    return Renamed(server, old_name, files, partial)


def refused_as(source: Semantic, method: str, path: Path, params: dict) -> tuple[str, Any, str | None]:
    """source.ask, where the server's own error ("cannot rename this") is a refusal."""
    from . import Unavailable

    try:
        return source.ask(method, path, params)
    except Unavailable as exc:
        if "answered with an error" not in str(exc):
            raise
        raise Refusal("cannot_rename", f"{exc}; nothing was changed.") from None


def prepared_name(ws: Workspace, path: Path, prepared: Any) -> str:
    """The text prepareRename's answer (a Range, {range, placeholder} or {defaultBehavior}) covers."""
    span = prepared.get("range", prepared) if isinstance(prepared, dict) else None
    try:
        start, end = span["start"], span["end"]  # type: ignore[index]
        if start["line"] != end["line"]:
            return ""
        from . import utf16_to_index

        text = ws.text(path).line(start["line"] + 1)
        return text[utf16_to_index(text, start["character"]) : utf16_to_index(text, end["character"])]
    except (TypeError, KeyError, ValueError):
        return str(prepared.get("placeholder", "")) if isinstance(prepared, dict) else ""


def workspace_changes(ws: Workspace, edit: Any, server: str) -> dict[Path, list[TextChange]]:
    """A WorkspaceEdit's text edits by workspace file; a refusal for anything outside the
    roots, any file operation, or anything that is not a WorkspaceEdit."""
    if edit is None:
        return {}
    if not isinstance(edit, dict):
        raise Refusal(
            "bad_answer", f"{server} answered rename with a {type(edit).__name__}; nothing was changed."
        )
    entries: list[tuple[Any, Any]] = []
    for change in edit.get("documentChanges") or []:
        if not isinstance(change, dict):
            raise Refusal(
                "bad_answer", f"{server} answered a document change that is not one; nothing was changed."
            )
        if "kind" in change:
            raise Refusal(
                "file_operation",
                f"{server}'s rename would also {change['kind']} a file ({str(change.get('uri', change.get('newUri')))[:200]}); "
                "lsp-agent renames only text: nothing was changed.",
            )
        entries.append(((change.get("textDocument") or {}).get("uri"), change.get("edits")))
    changes = edit.get("changes") or {}
    entries += list(changes.items()) if isinstance(changes, dict) else [(None, None)]
    files: dict[Path, list[TextChange]] = {}
    for uri, edits in entries:
        path = inside(ws, uri, server)
        files.setdefault(path, []).extend(
            text_change(e, server) for e in (edits if isinstance(edits, list) else [None])
        )
    return files


def inside(ws: Workspace, uri: Any, server: str) -> Path:
    """The workspace file a URI of the answer names; refuses the whole rename otherwise."""
    outside = Refusal(
        "outside_workspace",
        f"{server}'s rename would change {str(uri)[:200]}, outside the workspace roots; the whole rename "
        "is refused and nothing was changed.",
    )
    if not isinstance(uri, str) or not uri.startswith("file:"):
        raise outside
    try:
        path = ws.resolve(uri_to_path(uri))
    except (Refusal, ValueError, OSError):
        raise outside from None
    if not path.is_file():
        raise outside
    return path


def text_change(edit: Any, server: str) -> TextChange:
    try:
        start, end, new = edit["range"]["start"], edit["range"]["end"], edit["newText"]
        numbers = [start["line"], start["character"], end["line"], end["character"]]
    except (TypeError, KeyError):
        raise Refusal(
            "bad_answer", f"{server} answered an edit that is not one; nothing was changed."
        ) from None
    if not isinstance(new, str) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers
    ):
        raise Refusal("bad_answer", f"{server} answered an edit that is not one; nothing was changed.")
    return TextChange(numbers[0], numbers[1], numbers[2], numbers[3], new)
