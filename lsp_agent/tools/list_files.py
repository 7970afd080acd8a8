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

from ..budget import first_stage, largest_fit, plural, size
from ..errors import Refusal
from ..search import Query, check_query
from ..search.walk import list_files as list_rg_files
from ..workspace import Workspace
from . import MAX_CHARS, Context, tool

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
    "rules as search (.gitignore honoured, hidden files skipped). Over the budget it shortens to folders "
    "with file and line counts, then a summary, and says how to page (offset/limit) or narrow (path, glob)."
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
    budget = max_chars
    globs = tuple([glob] if isinstance(glob, str) else glob or [])
    check_query(Query("list_files", globs=globs))  # the globs ripgrep can be given
    folder = ws.resolve(path)
    if not folder.is_dir():
        raise Refusal(
            "not_a_folder", f"{ws.display(folder)} is not a folder; list_files takes a folder (and glob=)."
        )
    root = ws.root_of(folder)
    assert root is not None
    rel = folder.relative_to(root).as_posix()
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

    shown = ws.display(folder) if rel else "."
    options = f" (glob {', '.join(globs)})" if globs else ""
    total_lines = sum(e.lines or 0 for e in entries)
    fields = {"path": shown, "total_files": len(entries), "total_lines": total_lines}
    if not entries:
        return {
            "text": f"list_files {shown}{options} · no files (hidden files and those .gitignore, .ignore or .rgignore exclude are not listed)",
            "next": None,
            "stage": "files",
            **fields,
        }
    if offset and offset >= len(entries):
        raise Refusal(
            "out_of_range",
            f"offset={offset} is past the last file: there are {len(entries):,}; use offset=0..{len(entries) - 1}.",
        )
    end = len(entries) if limit is None else min(len(entries), offset + limit)
    page = entries[offset:end]

    def head(start: int, stop: int, stage: str) -> str:
        showing = f", showing {start + 1:,}-{stop:,}" if (start or stop < len(entries)) else ""
        return f"list_files {shown}{options} · {plural(len(entries), 'file')}, {plural(total_lines, 'line')}{showing} · stage: {stage}"

    def files_page(start: int, n: int, more: str | None) -> list[str]:
        return [
            head(start, start + n, "files"),
            *([more] if more else []),
            *(describe(e) for e in entries[start : start + n]),
        ]

    def page_size(start: int, most: int) -> int:
        more = f"more: the next page with offset={len(entries)} limit={len(entries)}"
        return largest_fit(1, most, lambda n: size(files_page(start, n, more)) <= budget)

    full_next = {"offset": end, "limit": page_size(end, len(entries) - end)} if end < len(entries) else None
    short_next = {"offset": offset, "limit": page_size(offset, len(page))}
    hint = f"more: each file with offset={offset} limit={short_next['limit']}, or a narrower path= or glob="

    def files_stage() -> list[str]:
        more = f"more: the next page with offset={end} limit={full_next['limit']}" if full_next else None
        return files_page(offset, len(page), more)

    deepest = max(e.path.count("/") for e in page)

    def folders_stage() -> list[str] | None:
        for depth in range(deepest, 0, -1):
            lines = [head(offset, end, f"folders (depth {depth})"), hint, *folder_lines(page, depth)]
            if size(lines) <= budget:
                return lines
        return None

    def summary_stage() -> list[str]:
        kinds = Counter(
            "*." + e.path.rsplit(".", 1)[-1] if "." in e.path.rsplit("/", 1)[-1] else "other" for e in page
        )
        top = "; ".join(f"{k} {n:,}" for k, n in kinds.most_common(8))
        return [head(offset, end, "summary"), hint, f"by type: {top}"]

    index, lines = first_stage([files_stage, folders_stage, summary_stage], budget)
    stage = lines[0].rsplit("stage: ", 1)[1]
    answer = {
        "text": "\n".join(lines),
        "stage": stage,
        "next": full_next if index == 0 else short_next,
        **fields,
    }
    answer["files"] = (
        [{"path": e.path, "lines": e.lines, "size": e.size} for e in page[:500]] if index == 0 else None
    )
    return answer
