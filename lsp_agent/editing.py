"""What the edit tools share: a file's text as edits address it, the version guard, symbols
by name path, applying changes all or none, and committing the new text — through the editor
when one is attached (the person sees the change and can undo it), else atomically to disk
(see writer) — then the answer with the new version and a diff within the budget. The
overlay, the caches and the symbol index see the new text before the answer is sent.
"""

from __future__ import annotations

import difflib
import threading
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate, pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from .budget import Overflow, Writer, cut_line, plural
from .config import Settings
from .errors import Cancelled, Refusal
from .semantic import Missing, RequestCancelled, Semantic, Unavailable
from .syntax import language_for, outline, walk
from .syntax.index import named
from .workspace import Text, Workspace, content_version
from .writer import HISTORY, decodable, write_file

if TYPE_CHECKING:
    from .syntax.index import SymbolIndex


class Editing(Protocol):
    """What an edit needs of a tool's Context."""

    workspace: Workspace
    settings: Settings
    cancel_event: threading.Event
    index: SymbolIndex | None
    apply_edit: Callable[[Path, Text, str], str | None] | None


PATH = {"type": "string", "description": "Relative to the workspace root."}
DIAGNOSTICS = {
    "type": "boolean",
    "default": False,
    "description": "List the errors this introduced (by the language's server).",
}
IF_VERSION = {
    "type": "string",
    "description": "The version of the read the edit is made against (needed for line ranges); a stale one "
    "is refused with what changed.",
}


@dataclass(frozen=True)
class Change:
    """Characters start..end of the file's text (as edits see it) become `new`."""

    start: int
    end: int
    new: str
    what: str  # for refusals: "edit 2"


class Source:
    """A file's text as edits address it: CRLF shown as LF (reads show lines without CR),
    with the offset of each line's start."""

    def __init__(self, path: Path, shown: str, text: Text):
        self.path, self.shown, self.text = path, shown, text
        self.crlf = text.eol == "\r\n"
        self.content = text.content.replace("\r\n", "\n") if self.crlf else text.content
        self.starts = list(accumulate((len(line) + 1 for line in self.content.split("\n")), initial=0))[:-1]

    def line_of(self, offset: int) -> int:
        """The 1-based line holding character `offset`."""
        return bisect_right(self.starts, offset)

    def offset(self, line: int) -> int:
        """Where line `line` starts (the text's end past the last line)."""
        return self.starts[line - 1] if line <= len(self.starts) else len(self.content)

    def encode(self, content: str) -> str:
        """Content as the file holds it: LF back to CRLF in a CRLF file."""
        return content.replace("\r\n", "\n").replace("\n", "\r\n") if self.crlf else content


def open_source(ctx: Editing, path: str) -> Source:
    resolved = ctx.workspace.resolve(path)
    text = ctx.workspace.text(resolved)
    shown = ctx.workspace.display(resolved)
    if not text.utf8:
        raise Refusal(
            "not_utf8",
            f"{shown} is not valid UTF-8: an edit would replace its undecodable bytes; it was not changed.",
        )
    return Source(resolved, shown, text)


def check_version(source: Source, if_version: str | None, *, lines: bool) -> None:
    """Refuse a line-range edit without a version, and any edit against a stale one."""
    current = source.text.version
    if if_version is None:
        if lines:
            raise Refusal(
                "version_required",
                f"A line-range edit needs if_version= from the read it was made against (now version {current}); "
                "line numbers of an older read may point at other lines.",
                current_version=current,
            )
        return
    if if_version == current:
        return
    before = HISTORY.recall(source.path, if_version)
    since = changed_since(before, source.text.content) if before is not None else None
    what = f"lines changed since: {since}" if since else "its older text is not known here"
    raise Refusal(
        "stale",
        f"{source.shown} changed since version {if_version} (now version {current}; {what}); nothing was "
        f"changed: read those lines again and redo the edit with if_version={current}.",
        current_version=current,
    )


def changed_since(before: str, after: str, most: int = 12) -> str:
    """The line ranges of `after` that differ from `before`: "12-14, 40 (2 lines deleted after 39)"."""
    old, new = before.splitlines(), after.splitlines()
    spans = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if j2 > j1:
            spans.append(f"{j1 + 1}" if j2 == j1 + 1 else f"{j1 + 1}-{j2}")
        else:
            spans.append(f"{plural(i2 - i1, 'line')} deleted after line {j1}")
    more = f" and {len(spans) - most} more" if len(spans) > most else ""
    return ", ".join(spans[:most]) + more if spans else "none (only line endings or the final newline)"


def symbol_spans(ctx: Editing, source: Source, name_path: str) -> list[tuple[int, int]]:
    """The first and last line of each symbol `name_path` names (old text must then occur
    once in them all: one symbol, or overloads of one name)."""
    if language_for(source.path) is None:
        raise Refusal(
            "no_grammar", f"{source.shown}: no symbols for this kind of file; edit it by text or lines."
        )
    found = named(ctx.index, source.path, source.text, name_path)
    if not found:
        raise Refusal(
            "no_symbol",
            f"{source.shown} has no symbol {name_path!r}; list its symbols with symbols path={source.shown}.",
        )
    return [(s.start_line, s.end_line) for s in found]


def one_symbol(
    ctx: Editing, source: Source, name_path: str, occurrence: int | None = None, group: str | None = None
):
    """The symbol of the file `name_path` names (the occurrence-th of several); with `group`
    ("first" or "last"), that one of an overload group (same name and kind, one after another)."""
    if language_for(source.path) is None:
        raise Refusal(
            "no_grammar", f"{source.shown}: no symbols for this kind of file; edit it by text or lines."
        )
    found = named(ctx.index, source.path, source.text, name_path)
    if not found:
        raise Refusal(
            "no_symbol",
            f"{source.shown} has no symbol {name_path!r}; list its symbols with symbols path={source.shown}.",
        )
    if occurrence is not None:
        if occurrence > len(found):
            raise Refusal(
                "no_symbol", f"{source.shown} has {plural(len(found), 'symbol')} named {name_path!r}."
            )
        return found[occurrence - 1]
    if len(found) > 1 and group is not None and overloads(source, found):
        return found[-1] if group == "last" else found[0]
    if len(found) > 1:
        each = "; ".join(f"{s.kind} {s.name_path} lines {s.start_line}-{s.end_line}" for s in found[:10])
        raise Refusal(
            "ambiguous",
            f"{source.shown} has {plural(len(found), 'symbol')} named {name_path!r}: {each}. Give a longer name "
            "path, or occurrence=K.",
        )
    return found[0]


def overloads(source: Source, symbols) -> bool:
    """Whether the symbols are one overloaded definition: one kind, and no other symbol
    between the first and the last."""
    if len({s.kind for s in symbols}) != 1:
        return False
    spans = [(s.start_line, s.end_line) for s in symbols]
    first, last = min(a for a, _ in spans), max(b for _, b in spans)
    return not any(
        first <= other.start_line <= last and not any(a <= other.start_line <= b for a, b in spans)
        for other in walk(outline(source.path, source.text))
    )


def apply(content: str, changes: list[Change]) -> str:
    """The content with every change made; refuses changes that overlap."""
    ordered = sorted(changes, key=lambda c: (c.start, c.end))
    for before, after in pairwise(ordered):
        if after.start < before.end or (after.start == before.end == after.end == before.start):
            raise Refusal(
                "overlapping",
                f"{before.what} and {after.what} overlap; combine them into one edit. Nothing was changed.",
            )
    for change in reversed(ordered):
        content = content[: change.start] + change.new + content[change.end :]
    return content


def commit(
    ctx: Editing,
    source: Source,
    content: str,
    max_chars: int,
    *,
    what: str,
    shows: tuple[int, int] | None = None,
    diagnostics: bool = False,
) -> dict:
    """Write the new `content` (as edits see it) through the editor or to disk, and answer
    (with `diagnostics`, the errors the change introduced, asked before and after)."""
    before = Diagnosis.before(ctx, [source]) if diagnostics and content != source.content else None
    return write_and_answer(ctx, source, content, max_chars, what=what, shows=shows, before=before)


def write_and_answer(
    ctx: Editing, source: Source, content: str, max_chars: int, *, what: str,
    shows: tuple[int, int] | None, before: Diagnosis | None,
) -> dict:  # fmt: skip
    if content == source.content:
        return answer(
            ctx, source, source.text, "", max_chars, what=f"{what}: no change (the text is already so)"
        )
    after = source.encode(content)
    data = after.encode("utf-8", errors="surrogatepass")
    if not decodable(data):
        raise Refusal("binary", f"The new text of {source.shown} would hold a NUL byte; nothing was changed.")
    if ctx.apply_edit is not None:
        refused = ctx.apply_edit(source.path, source.text, after)
        if refused is not None:
            raise Refusal("editor_refused", f"The editor did not apply the edit of {source.shown}: {refused}. "
                          "Its buffer is unchanged.")  # fmt: skip
        ctx.workspace.open_document(source.path, after)  # the editor's didChange will say the same
        by = "editor"
    elif ctx.workspace.in_editor(source.path):  # its buffer unsaved or the disk's: either way open
        raise Refusal(
            "open_in_editor",
            f"{source.shown} is open in an editor that cannot apply edits (it did not announce "
            "workspace/applyEdit); writing the disk would go behind its buffer. Nothing was changed.",
        )
    else:
        root = ctx.workspace.confining_root(source.path)
        assert root is not None  # resolve() confined it
        write_file(root, source.path, data, expected=source.text.version, shown=source.shown)
        by = "disk"
    new = settle(ctx, [(source, new_text(ctx, source.path))])[0]
    written = [(source.path, source.shown, source.text.content, new)]
    found = before.after(written, max_chars // 3) if before is not None else None
    return answer(ctx, source, new, by, max_chars, what=what, shows=shows, found=found)


def new_text(ctx: Editing, path: Path) -> Text:
    return ctx.workspace.text(path)


def settle(ctx: Editing, written: list[tuple[Source, Text]]) -> list[Text]:
    """What every reader must see at once of files just changed: the history (for stale
    refusals), the symbol index, the language servers."""
    for source, new in written:
        HISTORY.remember(source.path, source.text)
        HISTORY.remember(source.path, new)
        if ctx.index is not None:
            ctx.index.update(source.path)
    Semantic(ctx.workspace, ctx.settings).written([s.path for s, _ in written])
    return [new for _, new in written]


def answer(ctx: Editing, source: Source, new: Text, by: str, max_chars: int, *, what: str,
           shows: tuple[int, int] | None = None, found: Diagnosis | None = None) -> dict:  # fmt: skip
    """The header (new version, where the edit went), then the diff or the lines `shows`."""
    old_version = source.text.version
    where = {
        "editor": "applied by the editor (unsaved in its buffer)",
        "disk": "written to disk",
        "": "unchanged",
    }[by]
    head = f"{source.shown} · {what} · {where} · version {old_version} → {new.version}"
    if not by:
        head = f"{source.shown} · {what} · version {new.version}"
    after = new.content.replace("\r\n", "\n") if source.crlf else new.content
    said = found.lines() if found is not None else []
    room = max_chars - len(head) - 1 - sum(len(x) + 1 for x in said)
    body = diff_lines(source.content, after, room) if by else []
    fields = {
        "path": source.shown,
        "version": new.version,
        "previous_version": old_version,
        "applied_by": by or None,
    }
    extra = found.fields() if found is not None else {}
    return {
        "text": "\n".join([head, *said, *body]),
        **fields,
        **changed_lines(source.content, after),
        **extra,
    }


def changed_lines(before: str, after: str) -> dict:
    """The first and last line of the new text the edit changed."""
    old, new = lines_of(before), lines_of(after)
    codes = [
        c for c in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes() if c[0] != "equal"
    ]
    if not codes:
        return {"changed": None}
    return {"changed": {"start": codes[0][3] + 1, "end": max(codes[-1][4], codes[-1][3] + 1)}}


def lines_of(content: str) -> list[str]:
    """The lines of a text (none after a final newline)."""
    lines = content.split("\n")
    return lines[:-1] if content.endswith("\n") else lines


def diff_lines(before: str, after: str, budget: int) -> list[str]:
    """A diff with a line of context: `@@ -A,B +C,D`, then `-N:old` and `+N:new` (N: the line's
    number in its own text) and ` N:same`; hunks that do not fit are counted in a last line."""
    old, new = lines_of(before), lines_of(after)
    groups = list(difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(1))
    out = Writer(budget)
    for shown, group in enumerate(groups):
        try:
            out.add(
                f"@@ -{group[0][1] + 1},{group[-1][2] - group[0][1]} +{group[0][3] + 1},{group[-1][4] - group[0][3]}"
            )
            for tag, i1, i2, j1, j2 in group:
                for n in range(i1, i2) if tag != "equal" else ():
                    out.add(f"-{n + 1}:{old[n]}")
                for n in range(j1, j2):
                    out.add(f"{'+' if tag != 'equal' else ' '}{n + 1}:{new[n]}")
        except Overflow:
            rest = len(groups) - shown
            note = f"[diff cut: {plural(rest, 'hunk')} not shown from line {group[0][3] + 1}; read the file there]"
            while out.lines and not out.room_for(note):
                out.lines.pop()
                out.size = len("\n".join(out.lines)) if out.lines else -1
            if out.room_for(note):
                out.add(note)
            break
    return out.lines


# --- several files, all or none (rename) ---------------------------------------------------


def commit_all(
    ctx: Editing, items: list[tuple[Source, str]], *, write: Callable = write_file
) -> tuple[str, list[Text]]:
    """Write each source's new content (as edits see it), all or none: through the editor in
    one workspace edit, else to disk one file after another, the files already written put
    back as they were when one fails. (where it went, the new texts); a refusal otherwise."""
    encoded = []
    for source, content in items:
        data = source.encode(content).encode("utf-8", errors="surrogatepass")
        if not decodable(data):
            raise Refusal(
                "binary", f"The new text of {source.shown} would hold a NUL byte; nothing was changed."
            )
        encoded.append((source, data))
    many = getattr(ctx.apply_edit, "many", None)
    if ctx.apply_edit is not None:
        if many is None and len(items) > 1:
            raise Refusal("editor_refused", "The editor applies one file per edit here; nothing was changed.")
        after = [(s.path, s.text, data.decode("utf-8")) for s, data in encoded]
        refused = many(after) if many is not None else ctx.apply_edit(*after[0])
        if refused is not None:
            raise Refusal(
                "editor_refused", f"The editor did not apply the edit: {refused}. No buffer changed."
            )
        for path, _, text in after:
            ctx.workspace.open_document(path, text)
        return "editor", settle(ctx, [(s, new_text(ctx, s.path)) for s, _ in encoded])
    if held := [s.shown for s, _ in encoded if ctx.workspace.in_editor(s.path)]:
        raise Refusal(
            "open_in_editor",
            f"{', '.join(held[:5])} open in an editor that cannot apply edits; writing the disk would go "
            "behind its buffer. Nothing was changed.",
        )
    write_in_turn(ctx, encoded, write)
    return "disk", settle(ctx, [(s, new_text(ctx, s.path)) for s, _ in encoded])


def write_in_turn(ctx: Editing, encoded: list[tuple[Source, bytes]], write: Callable) -> None:
    """Write each file; when one fails, put those written back (each guarded by the version
    just written, so a file changed meanwhile by someone else is not overwritten)."""
    done: list[tuple[Source, bytes]] = []
    for source, data in encoded:
        root = ctx.workspace.confining_root(source.path)
        assert root is not None  # resolve() confined it
        try:
            write(root, source.path, data, expected=source.text.version, shown=source.shown)
        except Refusal as failed:
            kept = roll_back(ctx, done, write)
            if kept:
                raise Refusal(
                    "partly_applied",
                    f"{failed.message} Putting back the files already written failed for {', '.join(kept)}: "
                    "they hold the new text; the others are as they were.",
                ) from None
            raise Refusal(
                failed.code,
                f"{failed.message} None of the {plural(len(encoded), 'file')} changed (the "
                f"{plural(len(done), 'file')} already written were put back).",
                **failed.fields,
            ) from None
        done.append((source, data))


def roll_back(ctx: Editing, done: list[tuple[Source, bytes]], write: Callable) -> list[str]:
    """Put back the old text of files written; the names of those that could not be."""
    kept = []
    for source, data in reversed(done):
        root = ctx.workspace.confining_root(source.path)
        assert root is not None
        old = source.text.content.encode("utf-8", errors="surrogatepass")
        try:
            write_file(root, source.path, old, expected=content_version(data), shown=source.shown)
        except Refusal:
            kept.append(source.shown)
    return kept


# --- diagnostics: only the errors an edit introduced ---------------------------------------

MAX_DIAGNOSED = 20  # files asked about per call (a rename may touch hundreds)
ERROR = 1  # DiagnosticSeverity.Error


@dataclass
class Diagnosis:
    """The errors of the files an edit changes, asked before the edit, then after it: the
    answer lists only the new ones (a diagnostic is old when one with its message was on
    the same line before, the line moved by the edit, or on a line the edit changed)."""

    semantic: Semantic
    server: str = ""
    unavailable: str | None = None
    earlier: dict[Path, list] = field(default_factory=dict)
    partial: list[str] = field(default_factory=list)
    introduced: list[tuple[str, int, int, str]] = field(default_factory=list)
    already: int = 0
    warnings: int = 0
    skipped: int = 0
    budget: int = 0

    @classmethod
    def before(cls, ctx: Editing, sources: list[Source], new_files: tuple[Path, ...] = ()) -> Diagnosis:
        found = cls(Semantic(ctx.workspace, ctx.settings, ctx.cancel_event))
        for path in new_files:
            found.earlier[path] = []
        for source in sources[:MAX_DIAGNOSED]:
            items = found.ask(source.path, source.text.content)
            if items is None:
                break
            found.earlier[source.path] = items
        found.skipped = max(0, len(sources) - MAX_DIAGNOSED)
        return found

    def ask(self, path: Path, text: str) -> list | None:
        """The server's diagnostics of `path` holding `text`; None (and why) when it cannot say."""
        if self.unavailable is not None:
            return None
        try:
            self.server, items, partial = self.semantic.diagnostics(path, text)
        except RequestCancelled:
            raise Cancelled() from None
        except Missing as exc:
            self.unavailable = f"no language server answers for {path.name} ({exc})"
            return None
        except Unavailable as exc:
            self.unavailable = str(exc) or "the language server did not answer"
            return None
        if partial and partial not in self.partial:
            self.partial.append(partial)
        return [d for d in items if isinstance(d, dict)]

    def after(self, written: list[tuple[Path, str, str, Text]], budget: int) -> Diagnosis:
        """The new errors of each file (path, as shown, old content, new text)."""
        self.budget = budget
        for path, shown, old_content, new in written:
            if path not in self.earlier or self.unavailable is not None:
                continue
            now = self.ask(path, new.content)
            if now is None:
                break
            old_lines = lines_of(old_content.replace("\r\n", "\n"))
            new_lines = lines_of(new.content.replace("\r\n", "\n"))
            fresh, old = introduced(self.earlier[path], now, old_lines, new_lines)
            self.already += old
            for d in fresh:
                if d.get("severity", ERROR) == ERROR:
                    start = (d.get("range") or {}).get("start") or {}
                    line, column = int(start.get("line", 0)) + 1, int(start.get("character", 0)) + 1
                    self.introduced.append((shown, line, column, describe(d)))
                else:
                    self.warnings += 1
        return self

    def lines(self) -> list[str]:
        if self.unavailable is not None:
            return [f"diagnostics: unavailable ({self.unavailable})"]
        notes = [f"{plural(self.already, 'error')} already there not shown"] if self.already else []
        notes += [f"{plural(self.warnings, 'new warning')} not shown"] if self.warnings else []
        notes += [f"{plural(self.skipped, 'file')} not checked"] if self.skipped else []
        notes += [f"may be partial: {p}" for p in self.partial]
        head = f"diagnostics ({self.server}): {plural(len(self.introduced), 'error')} introduced"
        head += f" ({'; '.join(notes)})" if notes else ""
        rows = [
            cut_line(f"  {p}:{line}:{column} {message}", 240) for p, line, column, message in self.introduced
        ]
        out = Writer(max(self.budget, len(head) + 60))
        out.add(head)
        for n, row in enumerate(rows):
            rest = f"  … {plural(len(rows) - n, 'more error')} not shown (ask with a larger max_chars)"
            if (not out.room_for(row + "\n" + rest) and n < len(rows) - 1) or not out.room_for(row):
                out.add(rest)
                break
            out.add(row)
        return out.lines

    def fields(self) -> dict:
        if self.unavailable is not None:
            return {"diagnostics": {"unavailable": self.unavailable}}
        return {
            "diagnostics": {
                "server": self.server,
                "introduced": [
                    {"path": p, "line": a, "column": b, "message": m} for p, a, b, m in self.introduced[:100]
                ],
                "already": self.already,
                "partial": "; ".join(self.partial) or None,
            }
        }


def describe(diagnostic: dict) -> str:
    code = diagnostic.get("code")
    message = " ".join(str(diagnostic.get("message", "")).split())
    return message + (f" [{code}]" if code not in (None, "") else "")


def introduced(before: list, after: list, old: list[str], new: list[str]) -> tuple[list[dict], int]:
    """(the diagnostics of `after` that are new, how many were there before): each before one
    is moved with its line through the diff of `old` to `new`; an after one with its message
    on its moved line, or whose line the edit changed while one with that message was on a
    changed line before, is old."""
    moved: dict[int, int] = {}
    for tag, i1, i2, j1, _ in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            moved.update({i1 + k: j1 + k for k in range(i2 - i1)})
    kept: Counter = Counter()
    loose: Counter = Counter()
    for d in before:
        line = ((d.get("range") or {}).get("start") or {}).get("line")
        if isinstance(line, int) and line in moved:
            kept[(describe(d), moved[line])] += 1
        else:
            loose[describe(d)] += 1
    fresh, old_count = [], 0
    for d in after:
        key = (describe(d), ((d.get("range") or {}).get("start") or {}).get("line"))
        if kept[key] > 0:
            kept[key] -= 1
        elif loose[key[0]] > 0:
            loose[key[0]] -= 1
        else:
            fresh.append(d)
            continue
        old_count += d.get("severity", ERROR) == ERROR
    return fresh, old_count
