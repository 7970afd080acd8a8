"""Pages of a text: whole numbered lines under a budget, with an exact continuation.

Shared by the tools that show source (read, and find_symbol's bodies). Every line is
`N:text`, ripgrep's form, an empty line `N:` too: a line-anchored edit names any line by the
number it was shown with, never by counting from the line above. Following `next` from the
first line yields every line exactly once; a line longer than the whole budget comes in
column segments, so the parts concatenate to the file's exact text.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate

from .errors import Refusal
from .workspace import Text


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


def shown_chars(n: int, line: str) -> int:
    """Characters of line `n` as a page shows it (`N:text`), without its newline."""
    return len(line) + len(str(n)) + 1


def number_lines(start: int, lines: list[str]) -> list[str]:
    """`lines` from line `start` as one block, each line numbered `N:text`."""
    return ["\n".join(f"{n}:{line}" for n, line in enumerate(lines, start))] if lines else []


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


def symbol_label(kind: str, name_path: str, asked: str) -> str:
    """How a page names the symbol it reads: its kind, and its name path unless the call
    `asked` for it whole (`Cart/total`, `/Cart/total` or `Cart.total`, not `total`)."""
    body = asked.strip("/")
    return kind if name_path in (body, body.replace(".", "/")) else f"{kind} {name_path}"


def header_lines(head: str | None, start: int, end: int, total: int, version: str, part: bool = False) -> str:
    """`lines 1-120 of 300 · version V`, or for a whole file (not a `part` of it) `300 lines ·
    version V`, after `head`: what the call did not name (the path, a symbol)."""
    where = f"{total} lines" if not part and (start, end) == (1, total) else f"lines {start}-{end} of {total}"
    return joined(head, where, f"version {version}")


def header_segment(
    head: str | None, line: int, total: int, c1: int, c2: int, length: int, version: str
) -> str:
    return joined(head, f"line {line} of {total}, columns {c1}-{c2} of {length}", f"version {version}")


def joined(*fields: str | None) -> str:
    return " · ".join(f for f in fields if f)


def trailer_text(start: int, col: int | None, then: str = "") -> str:
    """The call that reads on; the header has said what this page shows of how much."""
    return f"[read on with start={start}{f' col={col}' if col is not None else ''}{then}]"


def page(
    text: Text,
    shown: str,
    *,
    start: int = 1,
    col: int = 1,
    max_chars: int,
    if_version: str | None = None,
    first: int = 1,
    last: int | None = None,
    part: str | None = None,
    notes: list[str] | None = None,
    then: str = "",
    named: bool = False,
) -> dict:
    """One page of `text` from line `start` (column `col`) within `max_chars`: lines
    `first`..`last` only, for reads of a part such as a symbol, which `part` names in the
    header ("method Message/to_dict"); `notes` are shown under the header; `then` are the
    arguments besides start= that the trailer names for reading on, such as " symbol=NAME".
    The header names the path `shown` unless the call `named` that one file itself."""
    total = text.line_count
    last = total if last is None else last
    paged = _Part(text, shown, first, last, part, list(notes or ()), if_version, then, named)
    if if_version is not None and if_version == text.version:
        return paged.unchanged(start)
    if total == 0:
        return paged.empty(start, col)
    paged.check(start, col)
    body, number, segment = paged.whole_lines(start, max_chars) if col == 1 else ([], start, None)
    if not body:  # a long line, or the rest of one: serve a column segment
        body, number, segment = paged.segment(start, col, max_chars)
    return paged.answer(start, body, number, segment, max_chars)


@dataclass
class _Part:
    """The lines `first`..`last` of a text being paged, and what every page of it shows."""

    text: Text
    shown: str
    first: int
    last: int
    name: str | None  # what the part is, for the header ("method Message/to_dict")
    extra: list[str]  # notes about the part, above the file's own
    if_version: str | None
    then: str
    named: bool  # the call named the file: its path is left out of the header

    @property
    def fields(self) -> dict:
        return {"path": self.shown, "version": self.text.version, "total_lines": self.text.line_count}

    @property
    def about(self) -> dict:
        text = self.text
        return {"eol": text.eol, "final_newline": text.final_newline, "utf8": text.utf8, "from_editor": text.from_editor}  # fmt: skip

    def head(self, start: int, end: int) -> str | None:
        """What the header names before the lines: the path unless the call named it, and the
        part, with its range when the page shows only some of it."""
        part = self.name
        if part and (start, end) != (self.first, self.last):
            part += f" (lines {self.first}-{self.last})"
        return joined(None if self.named else self.shown, part) or None

    @property
    def span(self) -> str:
        whole = (self.first, self.last) == (1, self.text.line_count)
        return self.shown if whole else f"lines {self.first}-{self.last} of {self.shown}"

    def notes(self, shows_last_line: bool) -> list[str]:
        return self.extra + file_notes(self.text, shows_last_line=shows_last_line, if_version=self.if_version)

    def notes_chars(self, shows_last_line: bool) -> int:
        return sum(len(n) + 7 for n in self.notes(shows_last_line))

    def unchanged(self, start: int) -> dict:
        text = self.text
        return {
            "text": f"{self.span} unchanged since version {text.version} ({text.line_count} lines); nothing re-sent.",
            "unchanged": True,
            "start": start,
            "end": None,
            "next": None,
            **self.fields,
        }

    def empty(self, start: int, col: int) -> dict:
        shown, version = self.shown, self.text.version
        if start != 1 or col != 1:
            raise Refusal("out_of_range", f"{shown} is empty (0 lines); read it with start=1.", **self.fields)
        header = joined(self.head(1, 0), "empty file (0 lines)", f"version {version}")
        text = compose(header, self.notes(True), [], None)
        return {"text": text, "start": 1, "end": 0, "next": None, **self.fields, **self.about}

    def check(self, start: int, col: int) -> None:
        """Refuse a start outside the part, or a column past the end of its line."""
        first, last, total = self.first, self.last, self.text.line_count
        if not first <= start <= last:
            where = (
                f"{self.shown} has {total} lines"
                if (first, last) == (1, total)
                else f"{self.span} is the range"
            )
            raise Refusal(
                "out_of_range",
                f"start={start} is outside the text: {where}; read with start={first}..{last}.",
                **self.fields,
            )
        length = self.text.line_length(start)
        if col != 1 and not 1 <= col <= length:
            raise Refusal(
                "out_of_range",
                f"col={col} is past the end of line {start}, which has {length} characters; use col=1..{max(length, 1)}.",
                **self.fields,
            )

    def whole_lines(self, start: int, max_chars: int) -> tuple[list[str], int, None]:
        """The numbered whole lines from `start` that fit, and the number of the next line.

        The page's overhead varies only with the digits of its last line and of the next
        start, so it is computed arithmetically: packing stays O(1) per line."""
        text, last = self.text, self.last
        notes_mid, notes_end = self.notes_chars(False), self.notes_chars(True)
        # the form with a line range: never shorter than the whole file's
        header_base = (
            len(header_lines(self.head(start, 0), start, 0, text.line_count + 1, text.version, part=True)) - 1
        )
        trailer_base = len(trailer_text(0, None, self.then)) + 1 - 1

        def page_chars(body: int, lines: int, end: int, nxt: int) -> int:
            """Length of the assembled page showing lines start..end, `nxt` coming next."""
            size = header_base + len(str(end)) + body + lines
            if nxt <= last:
                return size + notes_mid + trailer_base + len(str(nxt))
            return size + notes_end

        # Packed against the widest header and ending (a trailer, or the notes of the last line),
        # each line numbered with the widest number; with the real numbers more lines may fit.
        overhead = max(page_chars(0, 0, last, last), page_chars(0, 0, last, last + 1))
        count = max(0, fit_lines(text, start, last, len(str(last)) + 2, max_chars - overhead))
        chars = sum(
            shown_chars(n, line) for n, line in enumerate(text.lines(start, start + count - 1), start)
        )
        while (n := start + count) <= last:
            more = chars + shown_chars(n, text.line(n))
            if page_chars(more, count + 1, n, n + 1) > max_chars:
                break
            chars, count = more, count + 1
        return number_lines(start, text.lines(start, start + count - 1)), start + count, None

    def segment(self, start: int, col: int, max_chars: int) -> tuple[list[str], int, tuple[int, int]]:
        """Columns of line `start` from `col` that fit, the number of the next line (`start`
        itself while the line goes on) and the (first, last) columns shown."""
        text, shown = self.text, self.shown
        length = text.line_length(start)
        big = 10 ** len(str(length)) - 1
        head = self.head(start, start)
        overhead = len(header_segment(head, start, text.line_count, col, big, length, text.version))
        overhead += self.notes_chars(True) + 1 + len(str(start)) + 1
        overhead += len(trailer_text(start, big, self.then)) + 1
        take = max_chars - overhead
        if take < 1:
            minimum = overhead + 1
            raise Refusal(
                "budget_too_small",
                f"max_chars={max_chars} leaves no room for text; the smallest budget for {shown} is {minimum}.",
                minimum=minimum,
                **self.fields,
            )
        piece = text.line(start)[col - 1 : col - 1 + take]
        segment = (col, col - 1 + len(piece))
        number = start if segment[1] < length else start + 1
        return number_lines(start, [piece]), number, segment

    def answer(
        self,
        start: int,
        body: list[str],
        number: int,
        segment: tuple[int, int] | None,
        max_chars: int,
    ) -> dict:
        """The page showing `body`, with `number` the next line to read."""
        text, last, total = self.text, self.last, self.text.line_count
        length = text.line_length(start)
        end = number - 1 if segment is None or number > start else start
        notes = self.notes(number > total)
        if segment is None:
            header = header_lines(
                self.head(start, end), start, end, total, text.version, part=self.name is not None
            )
        else:
            header = header_segment(
                self.head(start, start), start, total, segment[0], segment[1], length, text.version
            )
        nxt: dict | None
        if segment is not None and number == start:
            nxt = {"start": start, "col": segment[1] + 1}
        elif number <= last:
            nxt = {"start": number}
        else:
            nxt = None
        trailer = None
        if nxt is not None:
            trailer = trailer_text(nxt["start"], nxt.get("col"), self.then)
        page_text = compose(header, notes, body, trailer)
        assert len(page_text) <= max_chars, (len(page_text), max_chars)
        result = {"text": page_text, "start": start, "end": end, "next": nxt, **self.fields, **self.about}
        if segment is not None:
            result["columns"] = list(segment)
        if self.if_version is not None:
            result["unchanged"] = False
        return result
