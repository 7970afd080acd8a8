"""list_files: the files under a folder (or matching globs), with line counts and sizes, by
the rules search follows: the one walker, ripgrep's `rg --files` (.gitignore, .ignore, hidden
files skipped, as ripgrep decides with the same flags; a glob can name hidden files).

Over the budget the answer shortens: one line per file, then folders with file and line
counts (as deep as fits), then a summary; `offset`/`limit` page the file lines.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..budget import Stage, first_stage, page_end, page_size, plural, showing, size, top_counts
from ..errors import Refusal
from ..search import Query, check_query
from ..search.walk import list_files as list_rg_files
from ..workspace import Workspace
from .registry import MAX_CHARS, Context, tool

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "default": ".",
            "description": "The folder to list (recursive), relative to the workspace root.",
        },
        "glob": {
            "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
            "description": "ripgrep glob(s): '*.py' includes, '!*_test.py' excludes.",
        },
        "offset": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "Page: skip this many files.",
        },
        "limit": {"type": "integer", "minimum": 1, "description": "Page: list at most this many files."},
        "max_chars": MAX_CHARS,
    },
    "additionalProperties": False,
}

SUMMARY = (
    "List the files under a folder (or matching glob), each with its line count and size, by the same "
    "rules as search. Over the budget it shortens to folders with counts, then a summary, and says how "
    "to page (offset/limit) or narrow (path, glob). "
    "Use it to see what a folder holds, and how large each file is, before reading or searching it."
)


@dataclass(frozen=True, slots=True)
class Entry:
    path: str  # as shown
    lines: int | None  # None: a binary file
    size: int


def human(n: int) -> str:
    """1023 B, 4.5 KB, 97 KB, 12 MB."""
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            break
    return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"


def count_lines(data: bytes) -> int | None:
    if b"\x00" in data[:8192]:
        return None
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def count_file_lines(ws: Workspace, path: Path) -> tuple[int | None, int]:
    """(lines or None for a binary file, size) of a file read through a confined descriptor
    a MiB at a time: a huge file is never held whole."""
    fd = ws.open_file(path)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refusal("not_a_file", "not a regular file")
        lines, size, last = 0, 0, b"\n"
        while chunk := os.read(fd, 1 << 20):
            if not size and b"\x00" in chunk[:8192]:
                return None, info.st_size
            lines += chunk.count(b"\n")
            size += len(chunk)
            last = chunk[-1:]
        return lines + (last != b"\n"), size
    finally:
        os.close(fd)


def describe(entry: Entry) -> str:
    lines = "binary" if entry.lines is None else plural(entry.lines, "line")
    return f"{entry.path}  {lines}  {human(entry.size)}"


def folder_of(path: str, depth: int) -> str:
    parts = path.split("/")[:-1]
    return "/".join(parts[:depth]) + "/" if parts and depth else "./"


def folder_lines(entries: list[Entry], depth: int) -> list[str]:
    files: Counter = Counter()
    lines: Counter = Counter()
    for e in entries:
        key = folder_of(e.path, depth)
        files[key] += 1
        lines[key] += e.lines or 0
    return [f"{key}  {plural(files[key], 'file')}  {plural(lines[key], 'line')}" for key in sorted(files)]


def entries_under(ctx: Context, folder: Path, globs: tuple[str, ...]) -> tuple[str, list[Entry]]:
    """(the folder's path relative to its root, "" for the root; its files, by path), listed
    beneath the outermost root holding it (Workspace.confining_root)."""
    ws = ctx.workspace
    root, shown_root = ws.confining_root(folder), ws.root_of(folder)
    assert root is not None and shown_root is not None
    rel, shown = (folder.relative_to(r).as_posix() for r in (root, shown_root))
    rel = "" if rel == "." else rel
    entries = []
    for full in sorted(list_rg_files(root, [rel], globs, check=ctx.check_cancelled)):
        try:
            if full in ws.open_documents():
                data = ws.text(full).content.encode("utf-8", "surrogatepass")
                entries.append(Entry(ws.display(full), count_lines(data), len(data)))
            else:
                entries.append(Entry(ws.display(full), *count_file_lines(ws, full)))
        except (OSError, Refusal):
            continue
    return ("" if shown == "." else shown), entries


def kinds_of(entries: list[Entry]) -> str:
    """The summary's file types: `*.py 40; *.md 3; other 1`."""
    kinds = Counter(
        "*." + e.path.rsplit(".", 1)[-1] if "." in e.path.rsplit("/", 1)[-1] else "other" for e in entries
    )
    return top_counts(kinds, rest=False)


@dataclass
class Listing:
    """The ladder of a list_files answer: the files, the page asked for, the header's words."""

    title: str  # `list_files src (glob *.py)`
    entries: list[Entry]
    offset: int
    end: int
    budget: int

    def head(self, start: int, stop: int, stage: str) -> str:
        total_lines = sum(e.lines or 0 for e in self.entries)
        return f"{self.title} · {plural(len(self.entries), 'file')}, {plural(total_lines, 'line')}{showing(start, stop, len(self.entries))} · stage: {stage}"

    def files_page(self, start: int, n: int, more: str | None) -> list[str]:
        return [
            self.head(start, start + n, "files"),
            *([more] if more else []),
            *(describe(e) for e in self.entries[start : start + n]),
        ]

    def page_size(self, start: int, most: int) -> int:
        more = f"more: the next page with offset={len(self.entries)} limit={len(self.entries)}"
        return page_size(lambda n: self.files_page(start, n, more), most, self.budget)

    def stages(self, after: dict | None, hint: str) -> list[Stage]:
        page, offset, end = self.entries[self.offset : self.end], self.offset, self.end

        def files_stage() -> list[str]:
            more = f"more: the next page with offset={end} limit={after['limit']}" if after else None
            return self.files_page(offset, len(page), more)

        def folders_stage() -> list[str] | None:
            for depth in range(max(e.path.count("/") for e in page), 0, -1):
                lines = [self.head(offset, end, f"folders (depth {depth})"), hint, *folder_lines(page, depth)]
                if size(lines) <= self.budget:
                    return lines
            return None

        def summary_stage() -> list[str]:
            return [self.head(offset, end, "summary"), hint, f"by type: {kinds_of(page)}"]

        return [files_stage, folders_stage, summary_stage]


@tool("list_files", "List files", SUMMARY, SCHEMA)
def list_files(
    ctx: Context,
    *,
    path: str = ".",
    glob: str | list[str] | None = None,
    offset: int = 0,
    limit: int | None = None,
    max_chars: int,
) -> dict:
    ws = ctx.workspace
    globs = tuple([glob] if isinstance(glob, str) else glob or [])
    check_query(Query("list_files", globs=globs))  # the globs ripgrep can be given
    folder = ws.resolve(path)
    if not folder.is_dir():
        raise Refusal(
            "not_a_folder", f"{ws.display(folder)} is not a folder; list_files takes a folder (and glob=)."
        )
    rel, entries = entries_under(ctx, folder, globs)
    shown = ws.display(folder) if rel else "."
    title = f"list_files {shown}" + (f" (glob {', '.join(globs)})" if globs else "")
    fields = {"path": shown, "total_files": len(entries), "total_lines": sum(e.lines or 0 for e in entries)}
    if not entries:
        text = f"{title} · no files (hidden files and those .gitignore, .ignore or .rgignore exclude are not listed)"
        return {"text": text, "next": None, "stage": "files", **fields}
    end = page_end(offset, limit, len(entries), "file")
    listing = Listing(title, entries, offset, end, max_chars)
    after = (
        {"offset": end, "limit": listing.page_size(end, len(entries) - end)} if end < len(entries) else None
    )
    this = {"offset": offset, "limit": listing.page_size(offset, end - offset)}
    hint = f"more: each file with offset={offset} limit={this['limit']}, or a narrower path= or glob="
    index, lines = first_stage(listing.stages(after, hint), max_chars)
    files = [{"path": e.path, "lines": e.lines, "size": e.size} for e in entries[offset:end][:500]]
    return {
        "text": "\n".join(lines),
        "stage": lines[0].rsplit("stage: ", 1)[1],
        "next": after if index == 0 else this,
        **fields,
        "files": files if index == 0 else None,
    }
