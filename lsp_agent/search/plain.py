"""rg's plain output, for the usual search (no context lines, not multiline, binary files
skipped): each match as LINE, COLUMN and TEXT, NUL between them, under its file's path
(ahead.PLAIN_FLAGS). A line rg names without a match in it (a pattern that matches only the
end of a file's last line, when no line end follows) comes as LINE and TEXT: it counts as a
matched line but no match, its first match at column 0, as in rg's JSON.

A common pattern's plain output is a twentieth of its JSON (Django, `self`: 1.4 MB, not
27 MB), so rg writes less and a file's counts come from a few passes in C over its lines.
The lines' text is not in it: the lines an answer may show are read from the file, opened
beneath the root, and each match is checked to be where rg said it is (`located_matches`).
A file that disagrees is searched again through its descriptor, as JSON (see
RipgrepEngine.confirm). Output this parser does not know raises `Unexpected`: the folder
is then searched again as JSON.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from functools import partial
from itertools import islice
from operator import eq
from pathlib import Path

from ..errors import Refusal
from ..workspace import Workspace
from .collector import Collector, strip_eol
from .model import Match, Progress

NUMBERED = re.compile(rb"(\d+)\0")  # the line number a match line starts with
NEXT_NUMBERED = re.compile(rb"\n(\d+)\0")  # … and each after it (a literal first: searched in C)
# line, 1-based byte column (none: no match on the line), matched text (no text line holds a NUL)
LOCATED = re.compile(rb"^(\d+)\0(?:(\d+)\0)?([^\n]*)\n", re.MULTILINE)
# A file that starts so is read by rg as UTF-16, or without its first 3 bytes: its columns are
# not the file's bytes' (its matches are searched again, as JSON)
MARKS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
WARNED = b"WARNING"  # rg's note that a file turned out binary after a match: "PATH: WARNING: …"
PIECE = 1 << 20  # bytes of a file's match lines taken at a time while only counts are kept
DETAILED_PIECE = 1 << 15  # … and while matches are kept: keep_details judges them often


class Unexpected(Exception):
    """rg wrote what this parser does not know (another version of rg, say)."""


TYPE_CHECKING = False  # typing is imported by type checkers only: a one-shot command's milliseconds
if TYPE_CHECKING:  # a protocol for type checkers: nothing checks it at run time
    from typing import Protocol

    class Stream(Protocol):
        """ripgrep.Lines: what was read (`data`, parsed up to `at`) and `more` to read on."""

        data: bytes
        at: int

        def more(self, *, to_line_end: bool = False) -> bool: ...


Read = Callable[[Path], "bytes | None"]  # a file's bytes, read beneath the root; None if it cannot be


def read_data(ws: Workspace, path: Path) -> bytes | None:
    """The file's bytes as the workspace reads them (beneath the outermost root holding it,
    which the search's target and the engine's check open too; a regular file within the
    limit); None where it refuses them."""
    try:
        return ws.data(path)
    except Refusal:
        return None


def located_matches(lines_of: Callable[[], list[bytes] | None], name: str, piece: bytes, continued: bytes, sink: Collector) -> list[Match]:  # fmt: skip
    """The matches of the lines a piece of rg's output names, their text read from the file
    (`lines_of`: its lines, read once for all its pieces): each line's first match (its byte
    column and matched text), in characters as the JSON engine gives them; not the line
    `continued` from the piece before. A match not where rg said (the file changed, or rg read
    another through a link swapped in, or rg read it as UTF-16): none, and the file is doubted
    (searched again through its descriptor)."""
    raws = lines_of()
    located, made = LOCATED.findall(piece), []
    if raws is None or len(located) != piece.count(b"\n"):  # unreadable, or not each line as rg writes it
        sink.doubted.add(name)
        return []
    last = len(raws) - (1 if raws and not raws[-1] else 0)  # the text after a final line end is no line
    for number, column, found in located:
        if number == continued:
            continue
        continued, line, col = number, int(number), int(column or 1) - 1
        raw = raws[line - 1] if 1 <= line <= last else None
        if raw is None or (column and not raw.startswith(found, col)):
            sink.doubted.add(name)
            return []
        end = col + len(found) if column else 0
        shown = strip_eol(raw.decode("utf-8", errors="replace"))
        if not raw.isascii():  # byte offsets to character offsets
            col = len(raw[:col].decode("utf-8", errors="replace"))
            end = len(raw[:end].decode("utf-8", errors="replace"))
        width = len(shown)
        made.append(Match(line, (shown,), min(col, width), min(end, width)))
    sink.read_here.add(name)
    return made


def numbered(data: bytes, at: int, whole: int) -> list[bytes]:
    """The line number of each match line in `data[at:whole]`."""
    if at and data[at - 1] == 10:  # after a line end
        return NEXT_NUMBERED.findall(data, at - 1, whole)
    first = NUMBERED.match(data, at, whole)
    return [] if first is None else [first[1], *NEXT_NUMBERED.findall(data, first.end(), whole)]


def checked_numbers(data: bytes, at: int, whole: int) -> tuple[list[bytes], int]:
    """The line number of each match line of a file in `data[at:whole]`, and how many
    matches they hold; Unexpected if a line is not as rg writes it."""
    numbers = numbered(data, at, whole)
    matchless = 2 * len(numbers) - data.count(b"\0", at, whole)  # lines named without a match (no column)
    if len(numbers) != data.count(b"\n", at, whole) or not 0 <= matchless <= len(numbers):
        raise Unexpected(data[at : min(whole, at + 200)])
    return numbers, len(numbers) - matchless


def lines_named(numbers: list[bytes], continued: bytes) -> int:
    """How many lines the match lines numbered so name, but the line `continued` from the
    piece before (in order: a line's matches come together)."""
    return len(numbers) - sum(map(eq, numbers, islice(numbers, 1, None))) - (numbers[0] == continued)


def count_whole(data: bytes, at: int, to_name: Callable[[str], str], sink: Collector) -> int:
    """While only counts are kept: the files of rg's output whole in `data[at:]` counted as
    File counts them, without one made each (a very common pattern's thousands); where
    they end. It stops at a file File must take: one not whole here, without match lines,
    reported already (reached through two searched paths), or with rg's warning in it."""
    warned = data.find(WARNED, at)  # (rare: looked for once, not in each of thousands of files)
    while (nul := data.find(b"\0", at)) >= 0 and (stop := data.find(b"\n\n", nul)) >= 0:
        name = to_name(os.fsdecode(data[at:nul]))
        if name in sink.done or data.startswith(b"\n", nul + 1) or 0 <= warned < stop:
            break  # (a warning in its path too: File takes it)
        numbers, hits = checked_numbers(data, nul + 1, stop + 1)
        sink.count_file(name, lines_named(numbers, b""), hits)
        at = stop + 2
    return at


class File:
    """One file's match lines as they come, handed to the sink a piece at a time."""

    def __init__(self, name: str, sink: Collector, read: Read):
        self.name, self.sink, self.read = name, sink, read
        self.again = name in sink.done  # reached through two searched paths: reported once
        self.binary = False
        self.last = b""  # the line number of the last match line taken
        self.lines = self.hits = 0
        self.raws: list[bytes] | None = None  # its lines, once read (for its matches' text)

    def lines_of(self) -> list[bytes] | None:
        """The file's lines as bytes, read once beneath the root (None: unreadable, or read
        by rg as other than its bytes)."""
        if self.raws is None:
            data = self.read(Path(self.name))
            if data is None or data.startswith(MARKS):
                return None
            self.raws = data.split(b"\n")
        return self.raws

    def take(self, data: bytes, at: int, whole: int) -> None:
        """Whole match lines of the file, in order (`data[at:whole]`): each line handed by
        its number, its first match read (`located_matches`) only if the sink still keeps
        details once it has judged the line."""
        if self.again or self.binary:
            return
        if data.find(WARNED, at, whole) >= 0:
            data, at = self.warned(data[at:whole]), 0
            whole = len(data)
            if self.binary or not data:
                return
        numbers, hits = checked_numbers(data, at, whole)
        continued, self.last = self.last, numbers[-1]
        self.hits += hits
        if not self.sink.detailed:
            lines = lines_named(numbers, continued)
            self.lines += lines
            self.sink.add(self.name, [], {}, lines)
            return
        distinct = dict.fromkeys(numbers)
        distinct.pop(continued, None)  # a line whose first match came in the piece before
        self.lines += len(distinct)
        made = partial(located_matches, self.lines_of, self.name, data[at:whole], continued, self.sink)
        self.sink.add(self.name, made, {}, len(distinct), lines=list(map(int, distinct)))

    def warned(self, piece: bytes) -> bytes:
        """The piece without rg's warning lines; a file that turned out binary is marked so
        (what came of it is withdrawn at its end, as the JSON engine withdraws it)."""
        kept = []
        for line in piece.split(b"\n")[:-1]:
            if LOCATED.match(line + b"\n"):
                kept.append(line + b"\n")
            elif WARNED in line and b"binary file" in line:
                self.binary = True
            else:
                raise Unexpected(line[:200])
        return b"".join(kept)

    def end(self, progress: Progress | None) -> None:
        if self.again:
            return
        self.sink.finished(self.name)
        if self.binary:
            self.sink.add_binary(self.name, matched=False)
        else:
            self.sink.counted(self.name, self.lines, self.hits)
        if progress is not None:
            progress(f"{len(self.sink.files):,} files with matches so far, {self.sink.total:,} matches")


def parse_plain(
    stream: Stream, to_name: Callable[[str], str], sink: Collector, read: Read, progress: Progress | None
) -> bool:
    """Feed rg's plain output to the sink, file by file; whether it wrote anything. A file
    is its path and a NUL, its match lines, and an empty line before the next file's path."""
    file: File | None = None
    wrote = False
    while True:
        data, at = stream.data, stream.at
        if file is None:
            if not sink.detailed and (after := count_whole(data, at, to_name, sink)) > at:
                stream.at, wrote = after, True
                if progress is not None:
                    progress(f"{len(sink.files):,} files with matches so far, {sink.total:,} matches")
                continue
            nul = data.find(b"\0", at)
            if nul < 0:
                if stream.more():
                    continue
                if at < len(data):
                    raise Unexpected(data[at : at + 200])
                return wrote
            file, wrote = File(to_name(os.fsdecode(data[at:nul])), sink, read), True
            stream.at = nul + 1
            continue
        if data.startswith(b"\n", at):  # the empty line after a file's last match line
            file.end(progress)
            file, stream.at = None, at + 1
            continue
        window = min(len(data), at + (DETAILED_PIECE if sink.detailed else PIECE))
        stop = data.find(b"\n\n", at, window + 1)  # the file's end, looked for in this piece only
        whole = data.rfind(b"\n", at, stop + 1 if stop >= 0 else window) + 1
        if whole <= at:  # one line longer than a piece (a line holds no line break), or none read whole
            whole = data.find(b"\n", at) + 1
        if whole <= at:
            if stream.more(to_line_end=True):
                continue
            if at < len(data):
                raise Unexpected(data[at : at + 200])
            file.end(progress)
            return wrote
        file.take(data, at, whole)
        stream.at = whole
