"""The shortening chain: a search answer that fits its budget and still locates every match.
The answer's shaping, beside every tool's (the engine in search/ only finds and counts);
its stage pieces shared with the other ladders come from budget.py.

Seven stages, each a complete answer covering every match (or every match of the requested
page); the first whose text fits `max_chars` is returned:

1. full matches with context lines, grouped by file;
2. one line per match, without indentation;
3. the same with the text cut to a stated width, each cut line ending in "…";
4. line numbers with enclosing symbols, no text;
5. line numbers per file;
6. match counts per file;
7. a summary: totals, and the folders and file types with most matches.

Stages 1-4 write a match as `LINE[ SYMBOL]:TEXT` (no `:TEXT` in stage 4), ripgrep's `N:text`
with the enclosing symbol named when it changes from the previous match's; a line that
defines a symbol names it itself, so its label is the symbol around it. The header is the
totals alone when nothing is shortened or paged; below stage 1 it names the stage and what
it dropped, and a `more:` line gives the likely next calls. Stages are rendered by budget.py's
writer, which stops as soon as the budget is exceeded, so trying a stage costs at most the
budget, and symbols are asked for only for the files a stage actually reaches. Stages 2 and
3 are first sized from their lines alone (a lower bound), so one that cannot fit is never
drawn; the pages a `more:` line suggests are sized from one drawing of the largest.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial

from ..budget import (
    ELLIPSIS,
    INFINITE,
    MIN_WIDTH,
    TOP_LEVEL,
    Overflow,
    Writer,
    first_fit,
    largest_fit,
    largest_fit_near,
    numbers,
    plain,
    plural,
    sizes_at,
)
from ..errors import Refusal
from ..search.collector import KeepDetails
from ..search.model import FileMatches, Match, Outcome

STAGE_NAMES = {
    1: "full matches",
    2: "one line per match",
    3: "lines cut to {width} characters",
    4: "line numbers with symbols",
    5: "line numbers per file",
    6: "match counts per file",
    7: "summary",
}
DEFAULT_BUDGET = 20_000

# The innermost symbol around a line (its name path, None outside every definition), and
# whether the line is the one that names it (`def to_dict(self):` defines Message/to_dict).
Enclosing = tuple["str | None", bool]
# symbols(file) -> {line: Enclosing} for its match lines, or None (no grammar)
Symbols = Callable[[FileMatches], "dict[int, Enclosing] | None"]


class StageWriter(Writer):
    """The writer, noting the text's size after each match stage 1 wrote in full (before
    it overflowed)."""

    def __init__(self, limit: float):
        super().__init__(limit)
        self.ends: list[int] = []


@dataclass
class Search:
    """One search's matches and what the answer must say about them."""

    outcome: Outcome
    symbols: Symbols
    before: int = 0  # context lines asked for
    after: int = 0
    offset: int = 0  # a page of the full matches: the first one shown …
    limit: int | None = None  # … and at most how many (as many as fit the budget)
    budget: int = DEFAULT_BUDGET  # the answer's max_chars: what a suggested page must fit
    extra_notes: list[str] = field(default_factory=list)  # paths left out, …
    files: list[FileMatches] = field(init=False)  # the shown files and matches
    shown_matches: int = field(init=False)
    _symbols: dict[str, dict[int, Enclosing] | None] = field(init=False, default_factory=dict)
    full_fit: int | None = field(init=False, default=None)  # matches stage 1 wrote within the budget
    _page_sizes: dict[tuple[int, int, int], int] = field(init=False, default_factory=dict)
    _widths: list[int] | None = field(init=False, default=None)
    _tally: tuple[list[FileMatches], Tally] | None = field(init=False, default=None)
    _whole: dict[str, FileMatches] | None = field(init=False, default=None)  # each file with all its matches

    def __post_init__(self) -> None:
        self.show(self.limit)

    def show(self, count: int | None) -> None:
        """Show `count` matches from the offset (None: all the rest)."""
        self.files, self.shown_matches = page(self.outcome, self.offset, count, self.before, self.after)
        self._widths = None

    def page_of(self, offset: int, count: int) -> Search:
        page = Search(
            self.outcome, self.symbols, self.before, self.after, offset, count, self.budget, self.extra_notes
        )
        page._symbols, page._whole = self._symbols, self._whole  # symbols computed once for every page tried
        return page

    @property
    def paging(self) -> bool:
        """A page was asked for (offset/limit): it shows full matches, as many as fit."""
        return self.offset > 0 or self.limit is not None

    @property
    def context(self) -> bool:
        return bool(self.before or self.after)

    @property
    def paged(self) -> bool:
        return self.offset > 0 or self.shown_matches < self.outcome.total

    def tally(self) -> Tally:
        """The shown files' counts per folder and type, counted once for every stage tried
        (a very common pattern's thousands of files)."""
        if self._tally is None or self._tally[0] is not self.files:
            self._tally = (self.files, tally_of(self.files))
        return self._tally[1]

    def text_widths(self) -> list[int]:
        """Each shown match's line without indentation, in characters (a line ending
        "…" when the match goes on), in order: what stages 2 and 3 write at the least."""
        if self._widths is None:
            self._widths = [
                len(m.lines[0].strip()) + (len(m.lines) > 1) for f in self.files for m in f.matches
            ]
        return self._widths

    def symbols_of(self, file: FileMatches) -> dict[int, Enclosing] | None:
        """Enclosing symbols of the file's match lines, asked once for all its matches (a
        page's file holds only some of them)."""
        if file.shown not in self._symbols:
            if self._whole is None:  # (made when first wanted: an answer of counts wants none)
                self._whole = {f.shown: f for f in self.outcome.files}
            self._symbols[file.shown] = self.symbols(self._whole.get(file.shown, file))
        return self._symbols[file.shown]

    def label(self, file: FileMatches, line: int, *, text: bool) -> str | None:
        """The symbol a match line is labelled with: the innermost around it, or when the
        line itself is shown (`text`) and names that symbol, the one around that."""
        names = self.symbols_of(file)
        if names is None:
            return None
        name, defines = names.get(line, (None, False))
        if name is not None and defines and text:
            name = name.rsplit("/", 1)[0] if "/" in name else None
        return name or TOP_LEVEL


def page(
    outcome: Outcome, offset: int, limit: int | None, before: int, after: int
) -> tuple[list[FileMatches], int]:
    """The files and matches of matches[offset:offset+limit] in path-then-line order."""
    if offset == 0 and limit is None:
        return outcome.files, outcome.total
    end = outcome.total if limit is None else offset + limit
    files: list[FileMatches] = []
    seen = shown = 0
    for f in outcome.files:
        lo, hi = max(offset - seen, 0), min(end - seen, f.count)
        seen += f.count
        if lo >= hi:
            continue
        kept = f.matches[lo:hi]
        context = {
            n: t for n, t in f.context.items() if any(m.line - before <= n <= m.last + after for m in kept)
        }
        files.append(FileMatches(f.name, f.shown, kept, context, len(kept), f.from_editor, f.lines, f.hits))
        shown += len(kept)
    return files, shown


# --- text helpers ----------------------------------------------------------------------------


def snippet(m: Match, width: int | None) -> str:
    """The matched line without indentation, cut to `width` around the match if needed."""
    line = m.lines[0]
    text = line.strip()
    lead = len(line) - len(line.lstrip())
    col, end = max(m.col - lead, 0), max(m.end - lead, 0)
    more = len(m.lines) > 1  # a match over several lines shows its first: a cut
    if width is None or len(text) + more <= width:
        return text + ELLIPSIS if more else plain(text)
    if col <= width - 1 - min(end - col, 6):  # the match starts early enough: cut the tail
        return text[: width - 1] + ELLIPSIS
    start = max(1, min(col - 3, len(text) - width + 1))  # else a window from just before it
    return ELLIPSIS + text[start : start + width - 2] + ELLIPSIS


def span(m: Match) -> str:
    return str(m.line) if m.last == m.line else f"{m.line}-{m.last}"


def heading(f: FileMatches) -> str:
    return f.shown + (" (editor buffer, unsaved changes included)" if f.from_editor else "")


# --- the stages -------------------------------------------------------------------------------


class Labels:
    """A file's symbol labels, each shown only when it differs from the previous match's
    (a file's first matches outside every definition need none)."""

    def __init__(self) -> None:
        self.shown: str | None = TOP_LEVEL

    def __call__(self, label: str | None) -> str:
        if label is None or label == self.shown:
            return ""
        self.shown = label
        return f" {label}"


def full_matches(s: Search, w: StageWriter) -> None:
    for f in s.files:
        w.add(heading(f))
        entries: dict[int, tuple[str, str, Match | None]] = {n: ("-", t, None) for n, t in f.context.items()}
        for match in f.matches:
            for k, text in enumerate(match.lines):
                entries[match.line + k] = (":", text, match if k == 0 else None)
        labels = Labels()
        previous: int | None = None
        pending: list[int] = []
        after_last = 0  # context lines up to here follow the previous match
        for n in sorted(entries):
            kind, text, m = entries[n]
            if m is None and kind == "-" and n > after_last:
                pending.append(n)  # before-context: shown with the next match's group
                continue
            if m is not None:
                lines = [*pending, n]
                pending = []
                if s.context and previous is not None and lines[0] > previous + 1:
                    w.add("--")
                for k in lines[:-1]:
                    w.add(f"{k}-{plain(entries[k][1])}")
                w.add(f"{n}{labels(s.label(f, n, text=True))}:{plain(text)}")
                for k in range(m.line + 1, m.last + 1):  # the rest of a match over several lines
                    w.add(f"{k}:{plain(entries[k][1])}")
                w.ends.append(w.size)
                previous = after_last = m.last
                after_last += s.after
                continue
            if m is None and kind == ":":
                continue  # a later line of a match over several lines: written with it
            if s.context and previous is not None and n > previous + 1:
                w.add("--")
            w.add(f"{n}{kind}{plain(text)}")
            previous = n
        for k in pending:  # context after the page's last match, beyond its after-context
            w.add(f"{k}-{plain(entries[k][1])}")


def one_line(s: Search, w: StageWriter, width: int | None = None, *, text: bool = True) -> None:
    """Stages 2 and 3 (`LINE[ SYMBOL]:TEXT`), and 4 without the text (`LINE[ SYMBOL]`)."""
    for f in s.files:
        w.add(heading(f))
        labels = Labels()
        for m in f.matches:
            line = f"{span(m)}{labels(s.label(f, m.line, text=text))}"
            w.add(f"{line}:{snippet(m, width)}" if text else line)


def symbol_numbers(s: Search, w: StageWriter) -> None:
    one_line(s, w, text=False)


def file_numbers(s: Search, w: Writer) -> None:
    for f in s.files:
        w.add(f"{heading(f)}: {numbers([m.line for m in f.matches])}")


def file_counts(s: Search, w: Writer) -> None:
    for f in s.files:
        w.add(
            f"{heading(f)}: {f.hits:,}" if f.lines == f.hits else f"{heading(f)}: {counts(f.lines, f.hits)}"
        )


@dataclass
class Tally:
    """The shown files' matches, matched lines and files per folder and per file type."""

    folders: Counter[str]  # matches
    folder_lines: Counter[str]
    folder_files: Counter[str]
    types: Counter[str]  # "*.py", or a name without a suffix
    type_files: Counter[str]


def tally_of(files: list[FileMatches]) -> Tally:
    folders: dict[str, list[int]] = {}  # folder: [matches, matched lines, files]
    types: dict[str, list[int]] = {}  # type: [matches, files]
    for f in files:
        folder, slash, name = f.shown.rpartition("/")
        kind = "*." + name.rpartition(".")[2] if "." in name.lstrip(".") else name
        if (row := folders.get(folder if slash else ".")) is None:
            row = folders[folder if slash else "."] = [0, 0, 0]
        row[0] += f.hits
        row[1] += f.lines
        row[2] += 1
        if (row := types.get(kind)) is None:
            row = types[kind] = [0, 0]
        row[0] += f.hits
        row[1] += 1
    return Tally(
        Counter({k: r[0] for k, r in folders.items()}),
        Counter({k: r[1] for k, r in folders.items()}),
        Counter({k: r[2] for k, r in folders.items()}),
        Counter({k: r[0] for k, r in types.items()}),
        Counter({k: r[1] for k, r in types.items()}),
    )


def summary(s: Search, w: Writer) -> None:
    t = s.tally()
    for title, counts, files in (
        ("by folder", t.folders, t.folder_files),
        ("by type", t.types, t.type_files),
    ):
        entries = [f"{key} {n:,} ({plural(files[key], 'file')})" for key, n in counts.most_common(10)]
        largest_first(w, title, entries, len(counts))


def largest_first(w: Writer, title: str, entries: list[str], total: int) -> None:
    """The title's line with as many of its largest entries as fit (none fits: no line)."""

    def line(n: int) -> str:
        rest = total - n
        return f"{title}: " + "; ".join(entries[:n]) + (f"; {rest:,} more" if rest else "")

    shown = largest_fit(0, len(entries), lambda n: w.room_for(line(n)))
    if shown:
        w.add(line(shown))


RENDER: dict[int, Callable[[Search, StageWriter], None]] = {
    1: full_matches,
    2: one_line,
    3: one_line,
    4: symbol_numbers,
    5: file_numbers,
    6: file_counts,
    7: summary,
}
NEEDS_DETAILS = {1, 2, 3, 4, 5}


# --- header, notes, guidance -------------------------------------------------------------------


def counts(lines: int, hits: int) -> str:
    """'2,104 matches', or '1,681 lines, 2,104 matches' where lines hold several (ripgrep's
    --count and --count-matches)."""
    return plural(hits, "match") if lines == hits else f"{plural(lines, 'line')}, {plural(hits, 'match')}"


def unit(o: Outcome) -> str:
    """What offset and limit count: match records, one per matched line (one per block of
    touching lines with multiline), called matches where each holds one match."""
    if o.total == o.hits:
        return "matches"
    return "blocks of lines" if o.multiline else "lines"


SHOWN = {  # what a shortened stage shows, and what it leaves out
    2: "one line per match, without indentation",
    3: "one line per match cut to {width} characters (a cut line ends with …), without indentation",
    4: "line numbers and symbols, without the text",
    5: "line numbers per file, without the text and symbols",
    6: "match counts per file, without line numbers",
    7: "a summary, without the list of files",
}


def totals(o: Outcome, offset: int, shown: int) -> str:
    """The header's totals, and the range shown when it is not every match."""
    text = f"{counts(o.lines, o.hits)} in {plural(len(o.files), 'file')}"
    if offset > 0 or shown < o.total:
        text += f", showing {unit(o)} {offset + 1:,}-{offset + shown:,}"
    return text


def header(s: Search, stage: int, width: int | None) -> str:
    """The totals; below stage 1, the stage and what it dropped; ranges explained when used."""
    parts = [totals(s.outcome, s.offset, s.shown_matches)]
    if stage > 1:
        shown = SHOWN[stage].format(width=width)
        if s.context and stage in (2, 3):
            shown += " and context lines"
        parts.append(f"stage {stage}/7: {shown}")
    multi = stage in (2, 3, 4) and any(m.last > m.line for f in s.files for m in f.matches)
    if multi:
        parts.append("N-M: one match over lines N to M" + (", its first line shown" if stage < 4 else ""))
    if stage == 5 and any(
        b.line == a.line + 1 for f in s.files for a, b in zip(f.matches, f.matches[1:], strict=False)
    ):
        parts.append("N-M: a match on each line from N to M")
    return " · ".join(parts)


NEXT_LINE = 80  # room kept for a page's own "more: the next page with offset=… limit=…" line


def page_size(s: Search, offset: int, most: int) -> int:
    """The most matches from `offset` (at most `most`) whose full matches (stage 1) fit the
    budget as a page of their own, its header and "more" line included: the `limit` an
    answer suggests is checked by rendering that page, so following it gives exactly that
    page. 0 when not even one fits (that page comes cut). (An estimate when only counts
    were kept.)"""
    if not s.outcome.detailed:
        return max(1, min(most, (s.budget - 300) // 80))
    key = (offset, most, s.budget)
    if key not in s._page_sizes:
        hi = most
        if s.full_fit is not None and offset == 0:
            hi = min(hi, s.full_fit)  # stage 1 of the whole overflowed before match full_fit + 1 ended
        s._page_sizes[key] = largest_fit(0, hi, page_fits(s, offset, hi))
    return s._page_sizes[key]


def page_fits(s: Search, offset: int, most: int) -> Callable[[int], bool]:
    """Whether the page of n full matches from `offset` (n <= `most`) fits the budget less
    room for its "more" line. Without context lines a page's matches are the first n of
    the largest page's, written alike, so one drawing of that page sizes every shorter one;
    with context, a shorter page also shows the context after its last match, so each page
    is drawn."""
    room = s.budget - NEXT_LINE
    if s.context:

        def drawn(n: int) -> bool:
            try:
                render(s.page_of(offset, n), 1, budget=room, guide=False)
                return True
            except Overflow:
                return False

        return drawn
    largest = s.page_of(offset, most)
    body = StageWriter(room)  # the matches alone, no header
    try:
        full_matches(largest, body)
    except Overflow:
        pass  # the matches past the room cannot fit with any header
    between = sum(len(note) + 1 for note in notes(s))  # the notes after the header

    def sized(n: int) -> bool:
        n = min(n, largest.shown_matches)  # a page past the last match shows up to it
        if n > len(body.ends):
            return False
        matches = body.ends[n - 1] + 1 if n else 0  # with the newline after the header's part
        return len(totals(s.outcome, offset, n)) + between + matches <= room

    return sized


def next_page(s: Search) -> tuple[str | None, dict | None]:
    """A page's way on: the page after it, sized to fit, if any matches are left."""
    end = s.offset + s.shown_matches
    if end >= s.outcome.total:
        return None, None
    limit = max(1, page_size(s, end, s.limit or s.outcome.total - end))
    return f"offset={end} limit={limit} for the next page", {"offset": end, "limit": limit}


def guidance(s: Search, stage: int) -> tuple[str | None, dict | None]:
    """The 'more:' line, the likely next calls first, and the arguments of the call that
    pages on (every shortened answer offers it: it is how to get the rest)."""
    if s.paging:
        way, nxt = next_page(s)
        ways = [way] if way else []
        if stage > 1:  # a page of one match too long for the budget: cut, the read shows it whole
            f = s.files[0]
            ways.insert(0, f"read it whole with read path={json.dumps(f.shown)} start={f.matches[0].line}")
        return ("more: " + "; ".join(ways) if ways else None), nxt
    if stage == 1:
        return None, None  # every match shown
    total = s.outcome.total
    limit = max(1, page_size(s, 0, total))
    pages = -(-total // limit)
    ways = [f"full matches with offset=0 limit={limit}" + (f" ({pages:,} pages)" if pages > 1 else "")]
    if len(s.files) > 1:
        top, hits, lines = busiest(s.files, s.tally())
        narrow = f"paths=[{json.dumps(top)}] ({counts(lines, hits)})"
        ways.insert(0 if pages > 3 else 1, narrow)  # few pages: reading them all is likely
    if stage <= 5 and total <= 3:  # a few matches: their surroundings are the likely next read
        f = s.files[0]
        ways.insert(0, f"read path={json.dumps(f.shown)} start={max(1, f.matches[0].line - 5)}")
    return "more: " + "; ".join(ways), {"offset": 0, "limit": limit}


def busiest(files: list[FileMatches], t: Tally) -> tuple[str, int, int]:
    """The folder with most matches, or the file when they all share one folder: its path,
    matches and matched lines."""
    top, hits = t.folders.most_common(1)[0]
    if top == "." or len(t.folders) == 1:
        biggest = max(files, key=lambda f: f.hits)
        return biggest.shown, biggest.hits, biggest.lines
    return top, hits, t.folder_lines[top]


def notes(s: Search) -> list[str]:
    o = s.outcome
    out = list(s.extra_notes)
    if o.binary:
        names = ", ".join(o.binary[:3]) + (f" and {len(o.binary) - 3:,} more" if len(o.binary) > 3 else "")
        out.append(f"binary files with matches, skipped: {len(o.binary):,} ({names})")
    return out


def render(
    s: Search,
    stage: int,
    width: int | None = None,
    budget: float = INFINITE,
    *,
    lists: bool = True,
    guide: bool = True,
) -> tuple[str, dict | None]:
    """Stage `stage` of the answer, or Overflow when it is longer than `budget`.
    (lists=False: the summary's fixed part only, whatever the budget: its smallest size;
    guide=False: without the "more" line, to size a page.)"""
    if stage in (2, 3) and lists and least_size(s, width) > budget:
        raise Overflow()  # ruled out by its lines alone, before any symbol is looked up
    w = StageWriter(budget if lists else INFINITE)
    w.add(header(s, stage, width))
    for note in notes(s):
        w.add(note)
    more, nxt = guidance(s, stage) if guide else (None, None)
    if more:
        w.add(more)
    try:
        if stage == 3:
            one_line(s, w, width)
        elif lists:
            RENDER[stage](s, w)
    except Overflow:
        raise Overflow(len(w.ends)) from None
    return w.text(), nxt


def least_size(s: Search, width: int | None) -> int:
    """A lower bound of stage 2's size (stage 3's with `width`): each file's path, and each
    match's line number and text (cut to `width`), without the header or symbols."""
    texts = s.text_widths() if width is None else [min(n, width) for n in s.text_widths()]
    paths = sum(len(heading(f)) + 1 for f in s.files)
    spans = sum(len(span(m)) + 2 for f in s.files for m in f.matches)  # "N:" and the newline
    return paths + spans + sum(texts) - 1


def widest(s: Search) -> int:
    return max(s.text_widths(), default=0)


def fit(s: Search, max_chars: int) -> dict:
    """The earliest stage within `max_chars`, as an answer's fields. A page (offset/limit)
    is never shrunk: it shows as many full matches as fit, and a next page for the rest; a
    single match too long for the budget comes alone, cut, with the read that shows it."""
    o = s.outcome
    s.budget = max_chars
    if o.total == 0:
        return nothing_found(s, max_chars)
    if s.paging:
        shown = page_size(s, s.offset, s.limit or o.total - s.offset)
        s.show(max(shown, 1))
        if shown:
            return answer_at(s, 1, None, max_chars)
    answer = first_fit(stages(s, max_chars, first=2 if s.paging else 1))
    if answer is not None:
        return answer
    minimum = smallest(s)
    raise Refusal(
        "budget_too_small",
        f"max_chars={max_chars} is too small for even the summary of {counts(o.lines, o.hits)}; "
        f"the smallest budget for this search is {minimum}.",
        minimum=minimum,
    )


def stages(s: Search, max_chars: int, first: int = 1) -> Iterator[Callable[[], dict]]:
    """The stages that can show this outcome, in order, each as the attempt to render it."""
    for stage in range(first, 8):
        if stage in NEEDS_DETAILS and not s.outcome.detailed:
            continue
        if stage != 3:
            yield partial(answer_at, s, stage, None, max_chars)
        elif (cut := cut_width(s, max_chars)) is not None:
            yield partial(answer_of, 3, *cut)


def answer_at(s: Search, stage: int, width: int | None, max_chars: int) -> dict:
    try:
        drawn = render(s, stage, width, max_chars)
    except Overflow as overflow:
        if stage == 1:
            s.full_fit = overflow.args[0] if overflow.args else None
        raise
    return answer_of(stage, width, drawn)


def answer_of(stage: int, width: int | None, drawn: tuple[str, dict | None]) -> dict:
    """A stage's answer from its drawing (text, next page)."""
    text, nxt = drawn
    answer = {
        "text": text,
        "stage": stage,
        "stage_name": STAGE_NAMES[stage].format(width=width),
        "next": nxt,
    }
    if width is not None:
        answer["width"] = width
    return answer


def smallest(s: Search) -> int:
    """The smallest budget any stage fits in (stage sizes are not monotonic: a few files'
    counts can be shorter than the summary)."""
    sizes = [len(render(s, 7, lists=False)[0])]
    for stage in (6, 5, 4, 3, 2, 1) if s.outcome.detailed else (6,):
        if stage == 3 and widest(s) - 1 < MIN_WIDTH:
            continue
        sizes.append(len(render(s, stage, MIN_WIDTH if stage == 3 else None)[0]))
    return min(sizes)


def cut_width(s: Search, max_chars: int) -> tuple[int, tuple[str, dict | None]] | None:
    """The widest cut (>= MIN_WIDTH, narrower than the widest line) whose stage 3 fits, and
    that stage drawn. The guess is tried first: where it fits, so does MIN_WIDTH (the size
    only grows with the width), which is then not drawn; no width is drawn twice."""
    drawn: dict[int, tuple[str, dict | None] | None] = {}  # None: over the budget

    def fits(width: int) -> bool:
        if width not in drawn:
            try:
                drawn[width] = render(s, 3, width, max_chars)
            except Overflow:
                drawn[width] = None
        return drawn[width] is not None

    hi = widest(s) - 1
    if hi < MIN_WIDTH:
        return None
    guess = width_guess(s, hi, max_chars)
    if not (guess is not None and MIN_WIDTH <= guess <= hi and fits(guess)) and not fits(MIN_WIDTH):
        return None
    width = largest_fit_near(MIN_WIDTH, hi, fits, guess)
    found = drawn[width] if fits(width) else None  # drawn already: the width found fits
    return None if found is None else (width, found)


def width_guess(s: Search, hi: int, max_chars: int) -> int | None:
    """cut_width's answer from one drawing (checked by it): a width changes only the cut
    lines and the digits of the stage's name, so the rest of stage 3's size is what the
    drawing at `hi` leaves, and each line's share at a width is its whole snippet or the
    width (see snippet)."""
    widths = sizes_at(s.text_widths(), [len(snippet(m, None)) for f in s.files for m in f.matches])
    rest = len(render(s, 3, hi)[0]) - widths(hi) - len(str(hi))
    n = largest_fit(0, hi - MIN_WIDTH + 1, lambda n: n == 0 or rest + len(str(MIN_WIDTH + n - 1)) + widths(MIN_WIDTH + n - 1) <= max_chars)  # fmt: skip
    return MIN_WIDTH + n - 1 if n else None


def nothing_found(s: Search, max_chars: int) -> dict:
    lines = [
        "no matches",
        *notes(s),
        "(hidden files, files ignored by .gitignore/.ignore and binary files are not searched: a glob that "
        "names hidden or ignored files includes them, count_binary=true names binary files that match)",
    ]
    text = "\n".join(lines)
    if len(text) > max_chars:
        text = lines[0]
    return {"text": text, "stage": 1, "stage_name": STAGE_NAMES[1], "next": None}


def keep_details(budget: int) -> KeepDetails:
    """The collector's test for keeping each match's text: true while a lower bound of stage
    5's size (each file's name, and "N," per run of consecutive lines) is within the budget.
    Past it no stage that shows matches can fit, and the answer will be counts."""
    floor = 0
    last: dict[str, int] = {}
    paid: dict[str, int] = {}  # each file's share of the floor

    def keep(file: FileMatches, spans: list[tuple[int, int]], new: bool) -> bool:
        nonlocal floor
        if new:  # (again after it was withdrawn, to be searched again: what it paid is given back)
            floor -= paid.pop(file.name, 0)
            last.pop(file.name, None)
        before = floor
        if new:
            floor += len(file.shown) + 2  # "path: "
        end = last.get(file.name, -2)
        for line, last_line in spans:
            if line != end + 1:  # a new run of lines costs at least "N,"
                floor += len(str(line)) + 1
            end = last_line
        last[file.name] = end
        paid[file.name] = paid.get(file.name, 0) + floor - before
        return floor <= budget

    return keep
