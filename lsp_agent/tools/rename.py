"""rename: a symbol renamed across the workspace by the language's own server (prepareRename,
then rename), never by name. A preview by default: every change, budgeted and paged like
references (one line per change with its enclosing symbol, then shorter stages), and a
version token over the texts the preview saw; `apply=true` applies every file's change or
none, refused as stale when any of those files changed since the preview named."""

from __future__ import annotations

import difflib
import hashlib
import re
from collections import Counter, OrderedDict
from dataclasses import dataclass

from ..budget import (
    TOP_LEVEL,
    Stage,
    cut_line,
    first_stage,
    page_end,
    page_size,
    per_file,
    plural,
    showing,
    top_counts,
    widest_cut,
)
from ..editing import (
    DIAGNOSTICS,
    PATH,
    Change,
    Diagnosis,
    Source,
    apply,
    commit_all,
    lines_of,
    one_symbol,
    open_source,
)
from ..errors import Refusal
from ..semantic import Missing, Unavailable, utf16_to_index
from ..semantic.rename import Renamed
from ..semantic.rename import rename as server_rename
from ..syntax import enclosing_symbols, language_for
from ..workspace import Text
from .precise import PRECISION, semantic
from .registry import BUDGET, MAX_CHARS, Context, tool

SCHEMA = {
    "type": "object",
    "properties": {
        "path": PATH | {"description": "The file of its definition or of a use."},
        "symbol": {"type": "string", "minLength": 1, "description": "Its name path (`Model/save`)."},
        "line": {"type": "integer", "minimum": 1, "description": "Or the line of a use in path."},
        "column": {"type": "integer", "minimum": 1, "description": "With line: inside the name."},
        "new_name": {"type": "string", "minLength": 1},
        "apply": {"type": "boolean", "default": False},
        "if_version": {"type": "string", "description": "With apply: the preview's version."},
        "offset": {"type": "integer", "minimum": 0},
        "limit": {"type": "integer", "minimum": 1},
        "diagnostics": DIAGNOSTICS,
        "precision": PRECISION,
        "max_chars": MAX_CHARS,
    },
    "required": ["path", "new_name"],
    "additionalProperties": False,
}

SUMMARY = (
    "Rename a symbol everywhere through the language's own server (refused without one: never by name). "
    "First a preview: each changed line with its enclosing symbol, and a version; then apply=true with that "
    "if_version= changes every file or none (refused if one changed). Use it to rename a function, method, "
    f"class or variable. Within {BUDGET}, paged with offset/limit."
)
STAGES = (
    "one line per change",
    "lines cut to {width} characters",
    "line numbers",
    "counts per file",
    "summary",
)
PREVIEWS: OrderedDict[str, dict[str, str]] = OrderedDict()  # version token -> {file: version}, recent
MOST_PREVIEWS = 256


@dataclass(frozen=True)
class Row:
    path: str
    line: int
    symbol: str
    text: str  # the line as it reads after the rename


@dataclass
class Applied:
    by: str  # "editor" or "disk"
    files: list[tuple[Source, Text]]
    found: Diagnosis | None = None


@tool("rename", "Rename symbol", SUMMARY, SCHEMA, idempotent=False, writes=True)
def rename(
    ctx: Context,
    path: str,
    new_name: str,
    *,
    max_chars: int,
    symbol: str | None = None,
    line: int | None = None,
    column: int | None = None,
    apply: bool = False,
    if_version: str | None = None,
    offset: int = 0,
    limit: int | None = None,
    diagnostics: bool = False,
    precision: str | None = None,
) -> dict:
    source = open_source(ctx, path)
    at_line, at_column = position(ctx, source, symbol, line, column)
    found = ask_server(ctx, source, at_line, at_column, new_name, precision)
    sources, contents = planned(ctx, found)
    token = version_of(new_name, sources)
    rows = rows_of(sources, contents, found)
    asked = f"{symbol or f'{source.shown}:{at_line}'} → {new_name}"
    if not apply:
        PREVIEWS[token] = {s.shown: s.text.version for s in sources}
        while len(PREVIEWS) > MOST_PREVIEWS:
            PREVIEWS.popitem(last=False)
        return listing(asked, rows, found, token, None, offset, limit, max_chars)
    check_stale(if_version, token, sources)
    if found.partial:
        raise Refusal(
            "partial",
            f"{found.server} may not know every use yet ({found.partial}); nothing was changed: preview again shortly.",
        )
    before = Diagnosis.before(ctx, sources) if diagnostics else None
    by, texts = commit_all(ctx, list(zip(sources, contents, strict=True)))
    done = Applied(by, list(zip(sources, texts, strict=True)))
    if before is not None:
        done.found = before.after(
            [(s.path, s.shown, s.text.content, t) for s, t in done.files], max_chars // 3
        )
    return listing(asked, rows, found, token, done, offset, limit, max_chars)


def position(
    ctx: Context, source: Source, symbol: str | None, line: int | None, column: int | None
) -> tuple[int, int]:
    """The 1-based line and column to ask the server about: a symbol's name, or a use."""
    if symbol is not None:
        found = one_symbol(ctx, source, symbol)
        row, byte = found.selection[0], found.selection[1]
        text = source.text.line(row + 1)
        return row + 1, len(text.encode("utf-8")[:byte].decode("utf-8", "ignore")) + 1
    if line is None:
        raise Refusal("bad_arguments", "Give symbol= (a name path in path) or line= (and column=) of a use.")
    if not 1 <= line <= source.text.line_count:
        raise Refusal(
            "out_of_range",
            f"line {line} is outside {source.shown}, which has {source.text.line_count} lines.",
        )
    if column is None:
        name = re.search(r"[^\W\d]\w*", source.text.line(line))
        column = name.start() + 1 if name else 1
    return line, column


def ask_server(
    ctx: Context, source: Source, line: int, column: int, new_name: str, precision: str | None
) -> Renamed:
    try:
        return server_rename(semantic(ctx, precision), source.path, line, column, new_name)
    except Missing as exc:
        raise Refusal(
            "no_semantic_source",
            f"rename needs the language's own server, and there is none here ({exc}); lsp-agent never renames "
            "by name (other things share names). Find the uses with references and change them with edit.",
        ) from None
    except Unavailable as exc:
        raise Refusal(
            "semantic_unavailable",
            f"rename needs the language's own server, which did not answer ({exc}); nothing was changed.",
        ) from None


def planned(ctx: Context, found: Renamed) -> tuple[list[Source], list[str]]:
    """Each file's text and its text after the rename; refused when the server's view of a
    file is not the file (a range that does not hold the old name)."""
    if not found.files:
        raise Refusal(
            "nothing_to_rename", f"{found.server} found nothing to rename there; nothing was changed."
        )
    sources, contents = [], []
    for path in sorted(found.files):
        source = open_source(ctx, str(path))
        changes = [change_of(source, c, found, n) for n, c in enumerate(found.files[path], 1)]
        sources.append(source)
        contents.append(apply(source.content, changes))
    return sources, contents


def change_of(source: Source, change, found: Renamed, n: int) -> Change:
    lines = source.text.line_count
    if not (
        (change.line < lines and change.end_line < lines)
        or (change.end_line == lines and change.end_character == 0)
    ):
        raise stale_server(source, found)
    start = source.offset(change.line + 1) + utf16_to_index(
        source.text.line(change.line + 1), change.character
    )
    end_text = source.text.line(change.end_line + 1) if change.end_line < lines else ""
    end = source.offset(change.end_line + 1) + utf16_to_index(end_text, change.end_character)
    if end < start or (found.old_name and source.content[start:end] != found.old_name):
        raise stale_server(source, found)
    return Change(start, end, change.new_text, f"change {n} of {source.shown}")


def stale_server(source: Source, found: Renamed) -> Refusal:
    return Refusal(
        "server_out_of_date",
        f"{found.server}'s rename of {source.shown} does not match the file (its view of it is older); "
        "nothing was changed: ask again in a moment.",
    )


def version_of(new_name: str, sources: list[Source]) -> str:
    """One token for the rename as previewed: the new name and each file's version."""
    parts = [new_name, *(f"{s.shown}\0{s.text.version}" for s in sources)]
    return hashlib.blake2b("\n".join(parts).encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def check_stale(if_version: str | None, token: str, sources: list[Source]) -> None:
    if if_version is None or if_version == token:
        return
    seen = PREVIEWS.get(if_version)
    now = {s.shown: s.text.version for s in sources}
    if seen is None:
        why = "that preview is not known here (previewed by another server, or long ago)"
    else:
        changed = sorted(p for p in seen.keys() | now.keys() if seen.get(p) != now.get(p))
        why = (
            f"changed since: {', '.join(changed[:8])}" if changed else "the server now answers other changes"
        )
    raise Refusal(
        "stale",
        f"The rename's files changed since the preview (version {if_version}, now {token}; {why}); nothing "
        f"was changed: look at the new preview, then apply with if_version={token}.",
        current_version=token,
    )


def rows_of(sources: list[Source], contents: list[str], found: Renamed) -> list[Row]:
    """One row per changed line, in each file's new text, with its enclosing symbol."""
    rows = []
    for source, content in zip(sources, contents, strict=True):
        old, new = lines_of(source.content), lines_of(content)
        changed = [
            j + 1
            for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
            if tag != "equal"
            for j in range(j1, j2)
        ]
        labels = enclosing_symbols(source.path, source.text, changed) if language_for(source.path) else {}
        for n in changed:
            symbol = labels.get(n) or (TOP_LEVEL if language_for(source.path) else "")
            rows.append(Row(source.shown, n, symbol, new[n - 1].strip()))
    return rows


def by_file(rows: list[Row]) -> dict[str, list[Row]]:
    files: dict[str, list[Row]] = {}
    for r in rows:
        files.setdefault(r.path, []).append(r)
    return files


def one_line(rows: list[Row], width: int | None = None) -> list[str]:
    out = []
    for path, file_rows in by_file(rows).items():
        out.append(path)
        out += [f"{r.line}{f' {r.symbol}' if r.symbol else ''}: {cut_line(r.text, width)}" for r in file_rows]
    return out


def numbers(rows: list[Row]) -> list[str]:
    return [
        f"{path}: " + ", ".join(f"{r.line}{f' {r.symbol}' if r.symbol else ''}" for r in file_rows)
        for path, file_rows in by_file(rows).items()
    ]


def counts(rows: list[Row]) -> list[str]:
    return per_file({path: plural(len(file_rows), "line") for path, file_rows in by_file(rows).items()})


def summary(rows: list[Row]) -> list[str]:
    folders = Counter(r.path.rsplit("/", 1)[0] if "/" in r.path else "." for r in rows)
    return [f"by folder: {top_counts(folders)}"]


def listing(
    asked: str, rows: list[Row], found: Renamed, token: str, done: Applied | None,
    offset: int, limit: int | None, max_chars: int,
) -> dict:  # fmt: skip
    """The preview (done None) or the applied rename, its changes on the first stage that fits."""
    ladder = Ladder(
        asked, rows, found, token, done, offset, page_end(offset, limit, len(rows), "change"), max_chars
    )
    index, lines = first_stage(ladder.stages(), max_chars)
    fields: dict = {
        "version": token,
        "server": found.server,
        "total": len(rows),
        "files": ladder.files,
        "stage": lines[0].rsplit("stage: ", 1)[1],
        "next": ladder.after if index == 0 else ladder.this,
        "changes": [{"path": r.path, "line": r.line, "symbol": r.symbol} for r in ladder.page[:500]],
        "applied_by": done.by if done else None,
        "partial": found.partial,
    }
    if done is not None:
        fields["written"] = [
            {"path": s.shown, "previous_version": s.text.version, "version": t.version} for s, t in done.files
        ]
        fields |= done.found.fields() if done.found is not None else {}
    return {"text": "\n".join(lines), **fields}


@dataclass
class Ladder:
    """A rename's changes as references shows uses: one line per change, then shorter stages;
    offset/limit page the first."""

    asked: str
    rows: list[Row]
    found: Renamed
    token: str
    done: Applied | None
    offset: int
    end: int
    budget: int

    def __post_init__(self) -> None:
        self.files = len({r.path for r in self.rows})
        self.page = self.rows[self.offset : self.end]
        total = len(self.rows)
        self.after = (
            {"offset": self.end, "limit": self.fits_from(self.end, total - self.end)}
            if self.end < total
            else None
        )
        self.this = {"offset": self.offset, "limit": self.fits_from(self.offset, max(len(self.page), 1))}

    def render(self, start: int, stop: int, stage: str, body: list[str], more: str | None) -> list[str]:
        done, found = self.done, self.found
        if done is None:
            state = f"preview, version {self.token}"
            notes = [f"apply: the same call with apply=true if_version={self.token}"]
        else:
            state = (
                "applied by the editor (unsaved in its buffers)" if done.by == "editor" else "written to disk"
            )
            notes = []
        notes += [f"may be incomplete: {found.partial}"] if found.partial else []
        said = done.found.lines() if done and done.found is not None else []
        head = (
            f"rename {self.asked} · {plural(len(self.rows), 'changed line')} in {plural(self.files, 'file')}"
            f"{showing(start, stop, len(self.rows))} · by {found.server} · {state} · stage: {stage}"
        )
        return [head, *said, *(f"note: {n}" for n in notes), *([more] if more else []), *body]

    def fits_from(self, start: int, most: int) -> int:
        more = f"more: the next page with offset={len(self.rows)} limit={len(self.rows)}"

        def draw(n: int) -> list[str]:
            return self.render(start, start + n, STAGES[0], one_line(self.rows[start : start + n]), more)

        return page_size(draw, most, self.budget)

    def shortened(self, stage: str, body: list[str]) -> list[str]:
        more = f"more: one line per change with offset={self.offset} limit={self.this['limit']}"
        more += f"; after this page, offset={self.end}" if self.after else ""
        return self.render(self.offset, self.end, stage, body, more)

    def cut_stage(self) -> list[str] | None:
        def draw(width: int) -> list[str]:
            return self.shortened(STAGES[1].format(width=width), one_line(self.page, width))

        width = widest_cut(draw, max((len(r.text) for r in self.page), default=0), self.budget)
        return None if width is None else draw(width)

    def stages(self) -> list[Stage]:
        after = self.after
        more = f"more: the next page with offset={self.end} limit={after['limit']}" if after else None
        return [
            lambda: self.render(self.offset, self.end, STAGES[0], one_line(self.page), more),
            self.cut_stage,
            lambda: self.shortened(STAGES[2], numbers(self.page)),
            lambda: self.shortened(STAGES[3], counts(self.page)),
            lambda: self.shortened(STAGES[4], summary(self.page)),
        ]
