"""create_file: a new file inside the workspace, atomically; an existing one is replaced only
when the call says `overwrite` and names the version it read."""

from __future__ import annotations

import os

from ..budget import plural
from ..editing import DIAGNOSTICS, PATH, Diagnosis, commit, open_source
from ..errors import Refusal
from ..paging import number_lines
from ..workspace import Text
from ..writer import HISTORY, decodable, write_file
from .registry import BUDGET, MAX_CHARS, Context, tool

SCHEMA = {
    "type": "object",
    "properties": {
        "path": PATH,
        "content": {"type": "string", "description": "The whole text of the file."},
        "overwrite": {
            "type": "boolean",
            "default": False,
            "description": "Replace the file if it exists (then if_version= must name the version read).",
        },
        "if_version": {
            "type": "string",
            "description": "With overwrite: the version of the file being replaced.",
        },
        "diagnostics": DIAGNOSTICS,
        "max_chars": MAX_CHARS,
    },
    "required": ["path", "content"],
    "additionalProperties": False,
}

SUMMARY = (
    "Create a file with the given content (missing folders made); an existing one is refused unless "
    "overwrite=true with if_version= from a read. Use it for a new file; edit or edit_symbol change one. "
    f"The answer gives the version and the first lines, within {BUDGET}."
)


@tool("create_file", "Create file", SUMMARY, SCHEMA, idempotent=False, writes=True)
def create_file(
    ctx: Context,
    path: str,
    content: str,
    *,
    max_chars: int,
    overwrite: bool = False,
    if_version: str | None = None,
    diagnostics: bool = False,
) -> dict:
    resolved = ctx.workspace.resolve(path)
    shown = ctx.workspace.display(resolved)
    if os.path.lexists(resolved) or ctx.workspace.open_text(resolved) is not None:
        if not overwrite:
            raise Refusal(
                "exists",
                f"{shown} exists; to replace it, read it and call again with overwrite=true and its if_version=, "
                "or change it with edit.",
            )
        source = open_source(ctx, path)
        if if_version != source.text.version:
            why = "needs if_version=" if if_version is None else f"names version {if_version}, but"
            raise Refusal(
                "stale" if if_version else "version_required",
                f"overwrite of {shown} {why} the file is now version {source.text.version}; nothing was written.",
                current_version=source.text.version,
            )
        return commit(ctx, source, content.replace("\r\n", "\n") if source.crlf else content, max_chars,
                      what="replaced the whole file", diagnostics=diagnostics)  # fmt: skip
    data = content.encode("utf-8", errors="surrogatepass")
    if not decodable(data):
        raise Refusal(
            "binary", f"The content for {shown} holds a NUL byte or invalid text; nothing was written."
        )
    if ctx.apply_edit is not None:
        refused = ctx.apply_edit(resolved, Text.from_str("", from_editor=False), content)
        if refused is not None:
            raise Refusal("editor_refused", f"The editor did not create {shown}: {refused}.")
        ctx.workspace.open_document(resolved, content)
        by = "created by the editor (unsaved in its buffer)"
    else:
        root = ctx.workspace.confining_root(resolved)
        assert root is not None
        write_file(root, resolved, data, expected=None, shown=shown, create=True)
        by = "written to disk"
    text = ctx.workspace.text(resolved)
    HISTORY.remember(resolved, text)
    if ctx.index is not None:
        ctx.index.update(resolved)
    found = None
    if diagnostics:
        found = Diagnosis.before(ctx, [], (resolved,)).after([(resolved, shown, "", text)], max_chars // 3)
    return created(shown, text, by, max_chars, found)


def created(shown: str, text: Text, by: str, max_chars: int, found: Diagnosis | None = None) -> dict:
    head = f"{shown} · created, {plural(text.line_count, 'line')} · {by} · version {text.version}"
    said = found.lines() if found is not None else []
    head = "\n".join([head, *said])
    lines: list[str] = []
    last = 0
    for n in range(1, min(text.line_count, 40) + 1):
        block = number_lines(1, text.lines(1, n))
        if len(head) + 1 + len(block[0]) + 60 > max_chars:
            break
        lines, last = block, n
    if last < text.line_count:
        lines.append(f"[{plural(text.line_count - last, 'more line')}: read start={last + 1}]")
    fields = {"path": shown, "version": text.version, "previous_version": None, "created": True}
    extra = found.fields() if found is not None else {}
    return {
        "text": "\n".join([head, *lines]),
        **fields,
        "applied_by": "editor" if "editor" in by else "disk",
        **extra,
    }
