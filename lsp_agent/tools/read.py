"""read: whole numbered lines under a budget, with an exact continuation.

Following `next` from start=1 yields every line exactly once; a line longer than the whole
budget comes in column segments, so the parts concatenate to the file's exact text.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate, chain, repeat

from ..errors import Refusal
from ..workspace import Text
from . import Context, tool

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "File path, relative to the workspace root (or absolute inside it).",
        },
        "paths": {
            "type": "array",
            "items": {"type": "string"},
            "minItems": 1,
            "maxItems": 50,
            "description": "Several files in one read: the budget is split between them (a short file leaves "
            "its share to the others), each with its own continuation (read path=… start=N).",
        },
        "start": {"type": "integer", "default": 1, "description": "First line to show (1-based)."},
        "col": {
            "type": "integer",
            "default": 1,
            "description": "First column (1-based character) of line `start`; used to page a line longer than the budget.",
        },
        "max_chars": {
            "type": "integer",
            "minimum": 200,
            "description": "Budget for the answer's text, header included.",
        },
        "if_version": {
            "type": "string",
            "description": "A version from an earlier read: if the file is unchanged the answer is one line.",
        },
        "symbol": {
            "type": "string",
            "minLength": 1,
            "description": "Read only this symbol's lines, by name path (`Message/to_dict` or `Message.to_dict`); "
            "start then pages within the symbol.",
        },
    },
    "anyOf": [{"required": ["path"]}, {"required": ["paths"]}],
    "additionalProperties": False,
}

SUMMARY = (
    "Read a file as numbered whole lines within a character budget. The header gives the lines "
    "shown, the total and the version; when there is more, the answer ends with "
    "'read on with start=N' (and col=C for a line longer than the budget) and `next` holds those arguments. "
    "`paths` reads several files at once, one budget split between them, each with its own continuation."
)


def fit_lines(text: Text, start: int, last: int, per_line: int, room: int) -> int:
    """How many whole lines from `start` fit in `room` characters, each costing its length
    plus `per_line`. Scans chunks that double in size, starting from a guess by the file's
    mean line length, so a page costs about its own lines, never the rest of the file."""
    mean = len(text.content) / max(text.line_count, 1)
    count, used, chunk = 0, 0, max(16, int(room / (mean + per_line) * 1.25))
    while start + count <= last:
        piece = text.lines(start + count, min(last, start + count + chunk - 1))
        costs = list(accumulate(map(per_line.__add__, map(len, piece)), initial=used))
        fit = bisect_right(costs, room) - 1
        count, used = count + fit, costs[fit]
        if fit < len(piece):
            break
        chunk *= 2
    return count


def body_chars(text: Text, start: int, count: int, prefix: int) -> int:
    """Characters of `count` numbered lines from `start`, without their newlines."""
    return sum(map(len, text.lines(start, start + count - 1))) + prefix * count


def number_lines(start: int, width: int, lines: list[str]) -> list[str]:
    """`lines` numbered from `start`, right-aligned to `width`. One %-format over the
    whole page runs in C: it is a quarter faster than formatting line by line."""
    if not lines:
        return []
    fields = chain.from_iterable(zip(repeat(width), range(start, start + len(lines)), lines))
    return [("%*d  %s\n" * len(lines) % tuple(fields))[:-1]]


def file_notes(text: Text, *, shows_last_line: bool, if_version: str | None) -> list[str]:
    notes = []
    if text.from_editor:
        notes.append("open in the editor: showing its buffer, which may be unsaved")
    if if_version is not None and if_version != text.version:
        notes.append(f"changed since version {if_version}")
    if not text.utf8:
        notes.append("not valid UTF-8: undecodable bytes shown as U+FFFD")
    if text.eol == "\r\n":
        notes.append("CRLF line endings (not shown)")
    elif text.eol == "mixed":
        notes.append("mixed line endings: CR kept as \\r at the end of CRLF lines")
    if shows_last_line and not text.final_newline:
        notes.append("no newline at end of file")
    return notes


def compose(header: str, notes: list[str], body: list[str], trailer: str | None) -> str:
    parts = [header, *(f"note: {n}" for n in notes), *body]
    if trailer:
        parts.append(trailer)
    return "\n".join(parts)


def read_text(
    text: Text,
    shown: str,
    *,
    start: int = 1,
    col: int = 1,
    max_chars: int,
    if_version: str | None = None,
    first: int = 1,
    last: int | None = None,
    notes: list[str] | None = None,
    then: str = "",
) -> dict:
    """One page of `text` (lines `first`..`last` only, for reads of a part such as a symbol;
    `notes` are shown under the header, saying what that part is; `then` are the arguments
    besides start= that the trailer names for reading on, such as " symbol=NAME")."""
    extra = list(notes or ())

    def notes_for(text: Text, *, shows_last_line: bool, if_version: str | None) -> list[str]:
        return extra + file_notes(text, shows_last_line=shows_last_line, if_version=if_version)

    total = text.line_count
    last = total if last is None else last
    fields = {"path": shown, "version": text.version, "total_lines": total}
    about = {
        "eol": text.eol,
        "final_newline": text.final_newline,
        "utf8": text.utf8,
        "from_editor": text.from_editor,
    }
    span = f"lines {first}-{last} of {shown}" if (first, last) != (1, total) else shown

    if if_version is not None and if_version == text.version:
        return {
            "text": f"{span} unchanged since version {text.version} ({total} lines); nothing re-sent.",
            "unchanged": True,
            "start": start,
            "end": None,
            "next": None,
            **fields,
        }
    if total == 0:
        if start != 1 or col != 1:
            raise Refusal("out_of_range", f"{shown} is empty (0 lines); read it with start=1.", **fields)
        notes = notes_for(text, shows_last_line=True, if_version=if_version)
        return {
            "text": compose(f"{shown} · empty file (0 lines) · version {text.version}", notes, [], None),
            "start": 1,
            "end": 0,
            "next": None,
            **fields,
            **about,
        }
    if not first <= start <= last:
        where = f"{shown} has {total} lines" if (first, last) == (1, total) else f"{span} is the range"
        raise Refusal(
            "out_of_range",
            f"start={start} is outside the text: {where}; read with start={first}..{last}.",
            **fields,
        )
    length = text.line_length(start)
    if col != 1 and not 1 <= col <= length:
        raise Refusal(
            "out_of_range",
            f"col={col} is past the end of line {start}, which has {length} characters; use col=1..{max(length, 1)}.",
            **fields,
        )

    width = len(str(last))
    prefix = width + 2

    # The page's overhead varies only with the digits of its last line and of the next
    # start, so it is computed arithmetically: packing stays O(1) per line.
    def notes_chars(shows_last: bool) -> int:
        return sum(len(n) + 7 for n in notes_for(text, shows_last_line=shows_last, if_version=if_version))

    notes_mid, notes_end = notes_chars(False), notes_chars(True)
    header_base = len(header_lines(shown, start, 0, total, text.version)) - 1
    trailer_base = len(trailer_text(0, None, 0, 0, last, then)) + 1 - 2

    def page_chars(body_chars: int, lines: int, end: int, nxt: int) -> int:
        """Length of the assembled page showing lines start..end, `nxt` coming next."""
        size = header_base + len(str(end)) + body_chars + lines
        if nxt <= last:
            return size + notes_mid + trailer_base + 2 * len(str(nxt))
        return size + notes_end

    body: list[str] = []
    number = start
    segment = None  # (first col, last col) when serving part of one long line
    if col == 1:

        def fits(count: int) -> bool:
            chars = body_chars(text, start, count, prefix)
            return page_chars(chars, count, start + count - 1, start + count) <= max_chars

        # Packed against the widest header and trailer; with the real numbers a line or
        # two more may fit.
        count = fit_lines(text, start, last, prefix + 1, max_chars - page_chars(0, 0, last, last))
        while start + count <= last and fits(count + 1):
            count += 1
        body = number_lines(start, width, text.lines(start, start + count - 1))
        number = start + count
    if not body:  # a long line, or the rest of one: serve a column segment
        big = 10 ** len(str(length)) - 1
        notes = notes_for(text, shows_last_line=True, if_version=if_version)
        overhead = len(header_segment(shown, start, total, col, big, length, text.version))
        overhead += sum(len(n) + 7 for n in notes) + 1 + prefix
        overhead += len(trailer_text(start, big, length, 0, last, then)) + 1
        take = max_chars - overhead
        if take < 1:
            minimum = overhead + 1
            raise Refusal(
                "budget_too_small",
                f"max_chars={max_chars} leaves no room for text; the smallest budget for {shown} is {minimum}.",
                minimum=minimum,
                **fields,
            )
        line = text.line(start)
        piece = line[col - 1 : col - 1 + take]
        segment = (col, col - 1 + len(piece))
        body += number_lines(start, width, [piece])
        number = start if segment[1] < length else start + 1

    end = number - 1 if segment is None or number > start else start
    shows_last = number > total
    notes = notes_for(text, shows_last_line=shows_last, if_version=if_version)
    if segment is None:
        header = header_lines(shown, start, end, total, text.version)
    else:
        header = header_segment(shown, start, total, segment[0], segment[1], length, text.version)

    if segment is not None and number == start:
        nxt = {"start": start, "col": segment[1] + 1}
    elif number <= last:
        nxt = {"start": number}
    else:
        nxt = None
    trailer = None
    if nxt is not None:
        trailer = trailer_text(nxt["start"], nxt.get("col"), length, last - number + 1, last, then)
    answer = compose(header, notes, body, trailer)
    assert len(answer) <= max_chars, (len(answer), max_chars)
    result = {"text": answer, "start": start, "end": end, "next": nxt, **fields, **about}
    if segment is not None:
        result["columns"] = list(segment)
    if if_version is not None:
        result["unchanged"] = False
    return result


def header_lines(shown: str, start: int, end: int, total: int, version: str) -> str:
    return f"{shown} · lines {start}-{end} of {total} · version {version}"


def header_segment(shown: str, line: int, total: int, c1: int, c2: int, length: int, version: str) -> str:
    return f"{shown} · line {line} of {total}, columns {c1}-{c2} of {length} · version {version}"


def trailer_text(start: int, col: int | None, length: int, remaining: int, last: int, then: str = "") -> str:
    if col is not None:
        return f"[line {start} goes on to column {length}: read on with start={start} col={col}{then}]"
    return f"[lines {start}-{last} not shown: read on with start={start}{then}]"


@tool("read", SUMMARY, SCHEMA)
def read(
    ctx: Context,
    path: str | None = None,
    paths: list[str] | None = None,
    start: int = 1,
    col: int = 1,
    max_chars: int | None = None,
    if_version: str | None = None,
    symbol: str | None = None,
) -> dict:
    if paths is not None:
        if path is not None or symbol is not None or start != 1 or col != 1 or if_version is not None:
            raise Refusal(
                "bad_arguments",
                "paths= reads each file from its start; give path= alone to read on from start=N.",
            )
        return read_many(ctx, paths, max_chars or ctx.settings.max_chars)
    assert path is not None  # the schema asks for path or paths
    resolved = ctx.workspace.resolve(path)
    text = ctx.workspace.text(resolved)
    budget = max_chars or ctx.settings.max_chars
    shown = ctx.workspace.display(resolved)
    if symbol is None:
        return read_text(text, shown, start=start, col=col, max_chars=budget, if_version=if_version)
    return read_symbol(
        text, resolved, shown, symbol, start=start, col=col, max_chars=budget, if_version=if_version
    )


def read_symbol(text: Text, path, shown: str, name_path: str, *, start: int, **options) -> dict:
    """Page through one symbol's lines; with several symbols of that name path, the first,
    and a note naming the others."""
    from ..syntax import language_for, outline
    from .symbols import find_in_file

    if language_for(path) is None:
        raise Refusal("no_grammar", f"{shown}: no symbols for this kind of file; read it by lines (start=N).")
    found = find_in_file(path, text, name_path)
    if not found:
        top = ", ".join(s.name for s in outline(path, text)[:12]) or "none"
        raise Refusal(
            "no_symbol",
            f"{shown} has no symbol {name_path!r}; its top-level symbols: {top}. "
            f"List them all with symbols path={shown}, or search with find_symbol substring=true.",
        )
    symbol = found[0]
    where = f"lines {symbol.start_line}-{symbol.end_line}"
    notes = [f"{symbol.kind} {symbol.name_path}, {where}"]
    if len(found) > 1:
        others = ", ".join(f"{s.name_path} {s.start_line}-{s.end_line}" for s in found[1:4])
        more = f" and {len(found) - 4} more" if len(found) > 4 else ""
        notes.append(
            f"{len(found) - 1} more symbols match: {others}{more} (read those with start=N, without symbol=)"
        )
    first = symbol.start_line
    answer = read_text(
        text, shown, start=max(start, first) if start == 1 else start, first=first, last=symbol.end_line,
        notes=notes, then=f" symbol={name_path}", **options,
    )  # fmt: skip
    if answer.get("next"):
        answer["next"] = {**answer["next"], "symbol": name_path}
    answer["symbol"] = {
        "name_path": symbol.name_path,
        "kind": symbol.kind,
        "start_line": first,
        "end_line": symbol.end_line,
    }
    return answer


MIN_PAGE = 200  # the smallest budget a page is written for (read's schema minimum)


def read_many(ctx: Context, paths: list[str], budget: int) -> dict:
    """The first page of each file, one budget split between them: the shortest files are
    served first, each taking at most an equal share of what is left, so a short file leaves
    its unused share to the longer ones. Each file's place is reserved by the line that
    says it was not shown, so the answer fits whatever the split."""
    ws = ctx.workspace
    head = f"read {len(paths)} files · one budget of {budget:,} characters split between them"
    blocks: list[str] = []
    texts: dict[int, tuple[Text, str]] = {}
    for n, raw in enumerate(paths):
        try:
            resolved = ws.resolve(raw)
            texts[n] = (ws.text(resolved), ws.display(resolved))
            blocks.append(f"{texts[n][1]}: not shown, no room left; read path={texts[n][1]}")
        except Refusal as refusal:
            blocks.append(refusal.message)
    minimum = len("\n\n".join([head, *blocks]))
    if minimum > budget:
        raise Refusal(
            "budget_too_small",
            f"max_chars={budget} is too small for {len(paths)} files; use at least {minimum}, or fewer paths.",
            minimum=minimum,
        )
    left = budget - minimum
    files: list[dict] = [{"path": raw, "error": blocks[n]} for n, raw in enumerate(paths)]
    order = sorted(texts, key=lambda n: len(texts[n][0].content))
    for k, n in enumerate(order):
        text, shown = texts[n]
        room = len(blocks[n]) + left // (len(order) - k)
        files[n] = {"path": shown, "next": {"start": 1}}
        if room < MIN_PAGE:
            continue
        try:
            part = read_text(text, shown, max_chars=room)
        except Refusal:
            continue
        left -= len(part["text"]) - len(blocks[n])
        blocks[n] = part["text"]
        files[n] = {
            "path": shown,
            "next": part["next"],
            "version": part["version"],
            "total_lines": part["total_lines"],
        }
    return {"text": "\n\n".join([head, *blocks]), "files": files}
