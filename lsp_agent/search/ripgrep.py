"""The engine: rg's output parsed as it streams, stoppable at any moment: its plain output
for the usual search (plain.py), `rg --json` for the rest (context lines, multiline, binary
files counted, a file searched through stdin).

The files are chosen by walk.py's flags (the one walker); `--no-mmap` reads binary files in
buffers, the same way every time. Binary files are skipped as ripgrep skips them, at their
first NUL byte; matches reported before it are dropped. With `count_binary`, `--binary`
reads them whole (NULs as line breaks) so those that match are reported and counted — which
costs reading every binary file to its end. Open buffers are searched through rg's stdin.

Cancellation kills the process from a watcher thread and reaps it: no rg is left behind.
"""

from __future__ import annotations

import errno
import json
import os
import re
import select
import stat
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

from .. import ahead
from ..errors import Cancelled, Refusal
from ..workspace import MAX_TEXT_BYTES, Beneath, Text, plain_relative, read_all
from .collector import Collector, quoted, strip_eol
from .model import FileMatches, Match, Progress, Query, Target
from .plain import Read, Unexpected, parse_plain, read_data
from .walk import Watcher, free_from_fifos, places, walk_args

MATCH_PREFIX = b'{"type":"match"'
CHUNK = 512  # matches handed to the collector at a time, so a huge file cannot pile up
MAX_ERROR = 1_000  # characters of rg's error message passed on (it quotes the whole pattern or glob)


def clip(message: str) -> str:
    """rg's error message, its middle cut when long: the start says what, the end says why."""
    if len(message) <= MAX_ERROR:
        return message
    return message[: MAX_ERROR // 2] + " … " + message[-MAX_ERROR // 2 :]


def data_text(field: dict) -> tuple[str, bytes]:
    """ripgrep's {"text": …} or {"bytes": base64} as (text, raw bytes)."""
    if "text" in field:
        text = field["text"]
        return text, b"" if text.isascii() else text.encode("utf-8", errors="surrogatepass")
    import base64

    raw = base64.b64decode(field["bytes"])
    return raw.decode("utf-8", errors="replace"), raw


def path_text(field: dict) -> str:
    """A path in ripgrep's JSON as the file system names it: bytes that are not UTF-8 kept
    as os.fsdecode keeps them (the plain output's names are read so too)."""
    if "text" in field:
        return field["text"]
    import base64

    return os.fsdecode(base64.b64decode(field["bytes"]))


def split_lines(text: str) -> list[str]:
    if text.find("\n") == len(text) - 1 and text:  # one line and its end, as most matches come
        return [strip_eol(text[:-1])]
    parts = text.split("\n")
    if text.endswith("\n"):
        parts.pop()
    return [strip_eol(p) for p in parts]


# A match line of a minified file can list millions of submatches (`.` over a 2 MB line:
# an 86 MB JSON line, over a GB decoded, held under the interpreter lock for seconds). Only
# the first submatch is used, so a long match message is cut after it before decoding.
LONG_MESSAGE = 64 * 1024
NEXT_SUBMATCH = b'},{"match":'  # cannot occur inside a JSON string: its quote would be escaped


def load(raw: bytes) -> dict:
    """One JSON line of `rg --json`, with the submatches after the first dropped."""
    if len(raw) > LONG_MESSAGE and raw.startswith(MATCH_PREFIX):
        start = raw.find(b',"submatches":[')
        cut = raw.find(NEXT_SUBMATCH, start) if start > 0 else -1
        if cut > 0:
            raw = raw[: cut + 1] + b"]}}"
    return decoded(raw)


SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # json.loads' own C scanner


def decoded(raw: bytes) -> dict:
    """json.loads(raw) for a line of rg's JSON (UTF-8, one value then its line end), in half
    the time: called for every match shown, its Python was most of the parsing."""
    try:
        text = raw.decode("utf-8")
        value, end = SCAN(text, 0)
    except (StopIteration, ValueError):
        return json.loads(raw)  # the error json.loads gives
    return value if not text[end:].strip(" \t\n\r") else json.loads(raw)


# Each file with matches brings a begin and an end record; in their usual shape (a path as
# plain text) only the fields used are read, without decoding the JSON, which was most of the
# parsing for a pattern matching once or twice in each of many files.
BEGIN = re.compile(rb'\{"type":"begin","data":\{"path":\{"text":"([^"\\]*)"\}\}\}\s*')
END = re.compile(
    rb'\{"type":"end","data":\{"path":\{"text":"[^"\\]*"\},"binary_offset":(null|\d+),'
    rb'"stats":\{"elapsed":\{[^{}]*\},(?:"\w+":\d+,)*"matched_lines":(\d+),"matches":(\d+)\}\}\}\s*'
)


def message_of(raw: bytes) -> dict:
    """One JSON line of `rg --json` as its dict: a begin or end record in its usual shape
    with only the fields used, anything else decoded whole."""
    if (begin := BEGIN.fullmatch(raw)) is not None:
        return {"type": "begin", "data": {"path": {"text": begin[1].decode("utf-8")}}}
    if (end := END.fullmatch(raw)) is not None:
        binary = None if end[1] == b"null" else int(end[1])
        stats = {"matched_lines": int(end[2]), "matches": int(end[3])}
        return {"type": "end", "data": {"binary_offset": binary, "stats": stats}}
    return load(raw)


def record(data: dict) -> Match:
    text, raw = data_text(data["lines"])
    lines = tuple(split_lines(text)) or ("",)
    col = end = 0
    if data["submatches"]:
        first = data["submatches"][0]
        col, end = first["start"], first["end"]
        if raw:  # byte offsets to character offsets
            col = len(raw[:col].decode("utf-8", errors="replace"))
            end = len(raw[:end].decode("utf-8", errors="replace"))
    width = len(lines[0])
    return Match(data["line_number"], lines, min(col, width), min(end, width))


LINE_NUMBER = re.compile(rb',"line_number":(\d+),')  # outside any string: there a quote is escaped


class Pending:
    """A file's match records not handed to the sink yet. `lazy` (one line a record: not
    multiline): handed by their line numbers, decoded only if the sink still keeps details
    once it has judged those lines."""

    def __init__(self, lazy: bool) -> None:
        self.lazy = lazy
        self.raws: list[bytes] = []
        self.lines: list[int] | None = [] if lazy else None

    def append(self, raw: bytes) -> None:
        self.raws.append(raw)
        if self.lines is not None:
            found = LINE_NUMBER.search(raw)
            if found is None:  # not in rg's usual shape: decoded at once, like the rest
                self.lines = None
            else:
                self.lines.append(int(found[1]))

    def matches(self) -> list[Match]:
        return [record(message_of(raw)["data"]) for raw in self.raws]

    def hand(
        self, sink: Collector, name: str, context: dict[int, str], count: int, from_editor: bool
    ) -> None:
        made = self.matches if self.lines is not None else self.matches()
        sink.add(name, made, context, count, from_editor=from_editor, lines=self.lines)


def under(base: str, name: str) -> str:
    """The absolute path of a file rg names under the folder it searched (`base`), as the
    string of the Path `base / name` (a very common pattern's thousands of files are joined
    as strings; a name with parts a Path would tidy, through a Path)."""
    name = name.removeprefix("./")
    if not plain_relative(name):
        return os.fspath(Path(base, name))
    return f"{base}{name}" if base.endswith("/") else f"{base}/{name}"


def itself(base: str, _name: str) -> str:
    return base  # rg read the file from stdin


def unreached_now(root: Path, names: list[str]) -> list[str]:
    """Those of `names` (files rg reported, in path order) not beneath `root` as its folders
    are now: opened for this test, after rg read the files. (A folder kept open from an
    earlier test could have been swapped for a link since, and rg read through the link.)"""
    with Beneath(root) as beneath:
        return beneath.unreached(names, os.fspath(root).rstrip("/") + "/")


def agrees(entry: FileMatches, data: bytes) -> bool:
    """Whether every line ripgrep showed of a file (its matches and context) is the line of
    `data` at that number."""
    text = Text.from_bytes(data)

    def line(n: int) -> str | None:
        return text.line(n).removesuffix("\r") if 1 <= n <= text.line_count else None

    for m in entry.matches:
        if any(line(m.line + k) != shown for k, shown in enumerate(m.lines)):
            return False
    return all(line(n) == shown for n, shown in entry.context.items())


def regex_refusal(pattern: str, message: str) -> Refusal:
    """rg refused the pattern: quoted as written, with rg's own error line and a hint."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    reason = next((line.removeprefix("error: ") for line in lines if line.startswith("error:")), None)
    if reason is None:
        reason = " ".join(line.removeprefix("rg: ") for line in lines) or "rejected"
    return Refusal(
        "invalid_regex",
        f"The pattern {quoted(pattern)} is not a valid regex (Rust regex syntax); ripgrep says: "
        f"{clip(reason)}. To search for the text as written, set fixed_strings=true.",
    )


OTHER_RECORD = re.compile(rb'^\{"type":"(?!match")', re.MULTILINE)  # a line of rg's JSON, not a match


END_RECORD = b'\n{"type":"end"'  # a file's last record, on a line of its own
BEGIN_PREFIX = b'{"type":"begin"'


def end_of(begin: bytes) -> bytes:
    """What the end record of the file a begin record opens starts with: in their usual shape,
    its path too (a longer needle has fewer false starts in rg's JSON: a very common pattern's
    27 MB are searched in 7 ms, not 11)."""
    found = BEGIN.fullmatch(begin)
    return END_RECORD if found is None else b'\n{"type":"end","data":{"path":{"text":"' + found[1] + b'"}'


class Lines:
    """rg's output line by line, from `data` and then, given `fd`, read from it in large
    chunks until its end; the match lines that come next can be skipped at once (without
    `context`, up to the file's end record, found as plain bytes)."""

    def __init__(self, data: bytes = b"", fd: int | None = None, *, context: bool = True):
        self.data, self.at, self.fd = data, 0, fd
        self.next_record = self.next_other if context else self.next_end
        self.end = END_RECORD  # what the end record of the file read now starts with (end_of)
        self.idle: Callable[[], bool] | None = None  # some work put off, done while rg writes nothing

    def next_other(self) -> int:
        """Where the next record that is not a match starts, or -1 (not read yet)."""
        found = OTHER_RECORD.search(self.data, self.at)
        return -1 if found is None else found.start()

    def next_end(self) -> int:
        """Where the next end record starts, or -1: with no context lines, only a file's
        matches come before its end, so a search for its bytes finds what the pattern
        would, many times faster."""
        if self.data.startswith(self.end[1:], self.at):
            return self.at
        found = self.data.find(self.end, max(self.at - 1, 0))
        return -1 if found < 0 else found + 1

    def more(self, *, to_line_end: bool = False) -> bool:
        """Read on, keeping what is not read yet; False at the end. `to_line_end`: read to a
        line break (a line longer than a chunk is joined once, not at each chunk)."""
        pieces = [self.data[self.at :]]
        while self.fd is not None:
            while self.idle is not None and not select.select([self.fd], [], [], 0)[0] and self.idle():
                pass  # rg has written nothing more yet: work put off is done meanwhile
            chunk = os.read(self.fd, READ)
            if not chunk:
                self.fd = None
                break
            pieces.append(chunk)
            if not to_line_end or b"\n" in chunk:
                break
        if len(pieces) == 1:
            return False
        self.data, self.at = b"".join(pieces), 0
        return True

    def __iter__(self) -> Lines:
        return self

    def __next__(self) -> bytes:
        end = self.data.find(b"\n", self.at)
        if end < 0:
            self.more(to_line_end=True)
            end = self.data.find(b"\n", self.at)
            if end < 0:  # the end of the output: a last line without its end, or none
                if self.at >= len(self.data):
                    raise StopIteration
                end = len(self.data) - 1
        start, self.at = self.at, end + 1
        line = self.data[start : self.at]
        if line.startswith(BEGIN_PREFIX):  # a file's records start: its end is looked for by its path
            self.end = end_of(line)
        return line

    def skip_matches(self, counting: bool = True) -> int:
        """Skip to the next record that is not a match (a JSON string holds no line break nor
        an unescaped quote, so a line that starts so is one); the number of lines skipped
        (not `counting`: no fewer than 0, for a caller that has it from the file's end record).
        A partial line at the end of what was read is kept for the next read."""
        skipped = 0
        while (found := self.next_record()) < 0:
            whole = self.data.rfind(b"\n", self.at) + 1  # the lines read whole
            skipped += self.data.count(b"\n", self.at, whole) if counting else 0
            self.at = max(whole, self.at)
            if not self.more():
                if self.at < len(self.data):  # a last line without its end
                    skipped, self.at = skipped + 1, len(self.data)
                return skipped
        skipped += self.data.count(b"\n", self.at, found) if counting else 0
        self.at = found
        return skipped


READ = 1 << 20
PIPE_SIZE = 1 << 20  # Linux's most for an unprivileged process (/proc/sys/fs/pipe-max-size)


def widen(fd: int) -> None:
    """A pipe that holds PIPE_SIZE bytes, not 64 KiB: rg writes on while a common pattern's
    JSON (tens of MB) is parsed, rather than stopping at every 64 KiB."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_SIZE)
    except (ImportError, OSError):  # another OS, or a lower limit: the pipe stays as it is
        pass


class Written(Lines):
    """The output of an rg started ahead, read from its memory file as rg writes it, at an
    offset of our own (rg's descriptor shares the file's), until rg has ended and all it
    wrote is read. While rg writes nothing, work put off is done (`idle`), else we sleep a
    little; a FIFO rg waits on is freed as the Watcher frees it; a cancelled call kills rg."""

    def __init__(self, started: ahead.Started, cancelled: Callable[[], bool], *, context: bool):
        super().__init__(context=context)
        self.started, self.cancelled = started, cancelled
        self.read_to = 0  # bytes of the file read so far
        self.returncode: int | None = None  # rg's, once it has ended and been reaped
        self.rounds = 0

    def more(self, *, to_line_end: bool = False) -> bool:
        pieces = [self.data[self.at :]]
        while True:
            if chunk := os.pread(self.started.out, READ, self.read_to):
                self.read_to += len(chunk)
                pieces.append(chunk)
                if not to_line_end or b"\n" in chunk:
                    break
            elif self.returncode is not None:  # ended, and all it wrote is read
                break
            elif (done := os.waitpid(self.started.pid, os.WNOHANG))[0]:
                self.returncode = os.waitstatus_to_exitcode(done[1])  # what it wrote last is read next
            elif self.cancelled():
                raise Cancelled()
            elif not (self.idle is not None and self.idle()):
                time.sleep(0.0005)
                self.rounds += 1
                if self.rounds % 1000 == 0:
                    free_from_fifos(self.started.pid)
        if len(pieces) == 1:
            return False
        self.data, self.at = b"".join(pieces), 0
        return True

    def stop(self) -> None:
        """rg killed and reaped if it has not ended (the call was cancelled or failed)."""
        if self.returncode is None:
            os.kill(self.started.pid, 9)
            os.waitpid(self.started.pid, 0)


# A small folder (a few hundred files) is searched faster by one rg thread than by several:
# their start and their sharing of the walk cost more than they save (rxjs's src, 260 files:
# 3 ms, not 5; Django's django/, 3,660 files: 1.5 times as long). What a folder is is told by
# its last search: under SMALL seconds with rg's threads (as a one-thread search's time
# divided by ONE_THREAD, what it would have taken with them).
SMALL = 0.008
ONE_THREAD = 0.7
PACE: dict[Path, float] = {}  # a folder's last search, as seconds with rg's threads


class RipgrepEngine:
    name = "ripgrep"

    def __init__(self, rg: str, query: Query):
        self.rg = rg
        self.query = query
        # the usual search: a folder's matches come as rg's plain output (plain.py), not JSON
        self.plain = not (query.multiline or query.before or query.after or query.count_binary)

    def check(self) -> None:
        pass  # ripgrep itself refuses a bad pattern; its message is passed on

    def match_args(self, plain: bool = False) -> list[str]:
        q = self.query
        args = [self.rg, "--no-config", "--no-mmap", *(ahead.PLAIN_FLAGS if plain else ["--json"])]
        if q.count_binary:
            args.append("--binary")
        if q.ignore_case:
            args.append("--ignore-case")
        if q.fixed_strings:
            args.append("--fixed-strings")
        if q.multiline:
            args.append("--multiline")
        if q.before:
            args.append(f"--before-context={q.before}")
        if q.after:
            args.append(f"--after-context={q.after}")
        return [*args, "--regexp", q.pattern]

    def search(
        self, target: Target, sink: Collector, cancelled: Callable[[], bool], progress: Progress
    ) -> None:
        """Search each of the target's paths as opened beneath its root (walk.places): a
        folder by an rg started in it, a file through rg's stdin. rg still walks a folder by
        names, so a subfolder swapped for a link while it walks could be followed: each file
        it reports is checked after (see `verify`), most in rg's pauses (Collector.reached)."""
        with places(target.root, target.rels) as opened:
            sink.check_beneath = partial(unreached_now, target.root)
            try:
                for place in opened:
                    self.search_place(target.root, place, sink, cancelled, progress)
            finally:
                sink.check_beneath, sink.unchecked = None, []

    def search_place(self, root: Path, place, sink: Collector, cancelled: Callable[[], bool], progress: Progress) -> None:  # fmt: skip
        """Search one of a target's paths, opened beneath its `root` (walk.Place)."""
        before = set(sink.done)
        if not place.folder:
            args = [*self.match_args(), "--", "-"]
            self.run(args, place.popen_args(), partial(itself, os.fspath(place.base)), sink, cancelled, progress)  # fmt: skip
            return
        known = before | set(sink.files)
        try:
            read = partial(read_data, sink.ws) if self.plain else None
            self.walk(place, sink, cancelled, progress, read)
        except Unexpected:  # rg's plain output not as this parser knows it: the folder again, as JSON
            for name in (sink.done | set(sink.files)) - known:
                sink.withdraw(name)
            self.walk(place, sink, cancelled, progress, None)
        self.verify(root, sink.done - before, sink, cancelled)

    def walk(self, place, sink: Collector, cancelled: Callable[[], bool], progress: Progress, read: Read | None) -> None:  # fmt: skip
        """Search a folder place: its output plain (files read by `read`) or, without, JSON;
        with the rg a one-shot started ahead if it is this one, else by one thread where the
        folder's last search was quick (see SMALL)."""
        flags, walked = self.match_args(read is not None), walk_args([""], self.query.globs)
        to_name = partial(under, os.fspath(place.base))
        started = ahead.take([*flags, *walked], place.fd) if ahead.STARTED else None
        if started is not None and self.take_over(started, to_name, sink, cancelled, read):
            return  # (it ran while the interpreter imported: no pace of its own)
        small = PACE.get(place.base, SMALL) < SMALL
        began = time.monotonic()
        self.run([*flags, *(["--threads=1"] if small else []), *walked], place.popen_args(), to_name, sink, cancelled, progress, read)  # fmt: skip
        if not self.query.globs:  # (a search of some of its files says little of the folder)
            PACE[place.base] = (time.monotonic() - began) / (ONE_THREAD if small else 1)

    def verify(self, root: Path, names: set[str], sink: Collector, cancelled: Callable[[], bool]) -> None:
        """Keep only what ripgrep reported of files that are beneath `root` after rg read
        them, opened without following a link; a file whose shown lines are not its text
        read that way (rg reached another file through a swapped link) is searched again
        through that descriptor. Lines the plain output's parser read itself, beneath the
        root, are not read again, nor tested again a file that passed in rg's pauses
        (Collector.reached)."""
        sink.made()
        above = os.fspath(root).rstrip("/") + "/"
        counted, shown = [], []
        for here in sorted(names):
            entry = sink.files.get(here)
            # its shown lines to read and compare: not where none is shown, nor where they
            # were read beneath the root already (plain.py), unless doubted
            if entry is None or (here not in sink.doubted and (not entry.matches or here in sink.read_here)):
                counted.append(here)
            else:
                shown.append(here)
        with Beneath(root) as beneath:  # in path order: each folder on the way opened once
            for here in beneath.unreached([n for n in counted if n not in sink.reached], above):
                sink.withdraw(here)
            for here in shown:
                try:
                    if not here.startswith(above):
                        raise ValueError(here)
                    fd = beneath.open(here[len(above) :])
                except (OSError, ValueError):
                    sink.withdraw(here)
                    continue
                self.confirm(here, fd, sink, cancelled)

    def confirm(self, name: str, fd: int, sink: Collector, cancelled: Callable[[], bool]) -> None:
        """verify's test of a file whose lines are shown (or doubted), opened beneath the root
        as `fd` (closed here)."""
        try:
            entry = sink.files[name]
            if (
                name in sink.doubted
                or not stat.S_ISREG(os.fstat(fd).st_mode)
                or not agrees(entry, read_all(fd, MAX_TEXT_BYTES))
            ):
                sink.withdraw(name)
                os.lseek(fd, 0, os.SEEK_SET)
                args = [*self.match_args(), "--", "-"]
                self.run(args, {"stdin": fd}, partial(itself, name), sink, cancelled, None)
        finally:
            os.close(fd)

    def run(
        self,
        args: list[str],
        where: dict,
        to_name: Callable[[str], str],
        sink: Collector,
        cancelled: Callable[[], bool],
        progress: Progress | None,
        read: Read | None = None,
    ) -> None:
        """Run rg with `args` (`where`: its cwd or stdin) and parse what it writes (plain
        where a `read` is given)."""
        import subprocess
        import tempfile

        with tempfile.TemporaryFile() as errors:
            where = {"stdin": subprocess.DEVNULL, **where}
            try:
                proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=errors, **where)
            except OSError as exc:
                way = (
                    "search fewer paths at once" if exc.errno == errno.E2BIG else f"check that {self.rg} runs"
                )
                raise Refusal(
                    "search_failed", f"ripgrep could not be started ({exc.strerror}); {way}."
                ) from None
            stdout = proc.stdout
            assert stdout is not None  # stdout=PIPE
            widen(stdout.fileno())
            watcher = Watcher(proc, cancelled)  # kills rg as soon as the caller cancels
            try:
                lines = Lines(fd=stdout.fileno(), context=bool(self.query.before or self.query.after))
                lines.idle = sink.idle_work
                ran = self.parse_output(lines, to_name, sink, progress, read)
            except BaseException:
                proc.kill()
                if cancelled():  # killed while writing: the half line it left is no error
                    raise Cancelled() from None
                raise
            finally:
                stdout.close()
                proc.wait()
                watcher.stop()
            if cancelled():
                raise Cancelled()
            errors.seek(0)
            self.check_errors(errors.read(), proc.returncode, ran, plain=read is not None)

    def parse_output(
        self,
        stream: Lines,
        to_name: Callable[[str], str],
        sink: Collector,
        progress: Progress | None,
        read: Read | None,
    ) -> bool:
        """Parse rg's output, plain where a `read` is given, else JSON: whether rg ran the
        search (JSON: its summary came; plain: it wrote anything)."""
        if read is not None:
            return parse_plain(stream, to_name, sink, read, progress)
        return self.parse(stream, to_name, sink, progress) is not None

    def check_errors(self, errors: bytes, returncode: int, ran: bool, *, plain: bool = False) -> None:
        """Refuse the call for what rg said on stderr: a bad glob, a bad pattern (plain
        output has no summary: rg that wrote nothing and ended in an error said why)."""
        message = errors.decode("utf-8", errors="replace").strip()
        if "error parsing glob" in message:
            raise Refusal("invalid_glob", f"ripgrep refused a glob (ripgrep glob syntax):\n{clip(message)}")
        if returncode == 2 and not ran and (message or not plain):
            raise regex_refusal(self.query.pattern, message)

    def take_over(
        self,
        started: ahead.Started,
        to_name: Callable[[str], str],
        sink: Collector,
        cancelled: Callable[[], bool],
        read: Read | None = None,
    ) -> bool:
        """Finish with the rg a one-shot command started ahead (ahead.py): parse what it
        writes as it writes it (see Written), the sink's work put off done while it writes
        nothing. False when it could not run (the search then starts its own)."""
        output = Written(started, cancelled, context=bool(self.query.before or self.query.after))
        output.idle = sink.idle_work
        try:
            ran = self.parse_output(output, to_name, sink, None, read)
            returncode = output.returncode
            assert returncode is not None  # the output's end is read once rg has ended
            if returncode == 127 and not output.read_to:  # exec failed: rg never exits so
                return False
            self.check_errors(os.pread(started.errors, 1 << 20, 0), returncode, ran, plain=read is not None)
            return True
        finally:
            output.stop()
            started.close()

    def search_text(self, path: Path, text: Text, sink: Collector) -> None:
        import subprocess

        try:
            proc = subprocess.run(
                [*self.match_args(), "--", "-"],
                input=text.content.encode("utf-8", errors="surrogatepass"),
                capture_output=True,
                check=False,  # rg exits 1 when nothing matched, 2 on a bad pattern (refused below)
            )
        except OSError as exc:
            raise Refusal("search_failed", f"ripgrep could not be started ({exc.strerror}).") from None
        if proc.returncode == 2 and not proc.stdout:
            raise regex_refusal(self.query.pattern, proc.stderr.decode("utf-8", errors="replace"))
        name = os.fspath(path)
        self.parse(proc.stdout.splitlines(keepends=True), lambda _: name, sink, None, from_editor=True)

    def parse(
        self,
        stream: Iterable[bytes],
        to_name: Callable[[str], str],
        sink: Collector,
        progress: Progress | None,
        *,
        from_editor: bool = False,
    ) -> dict | None:
        """Feed ripgrep's JSON lines to the sink; the summary's data, if it came."""
        matches = Pending(not self.query.multiline)
        context: dict[int, str] = {}
        count, uncounted = 0, False  # uncounted: match records skipped, as many as its end record says
        summary = None
        skip = getattr(stream, "skip_matches", None)
        name = ""  # set by each file's "begin" record, which comes before its matches
        again = False  # this file was reported already (reached through two searched paths)
        for raw in stream:
            if again and not raw.startswith(b'{"type":"end"'):
                continue
            if raw.startswith(MATCH_PREFIX):
                if not sink.detailed:  # only counted: no JSON decoded (nor lines counted where each is one)
                    count += 1 + (skip(not matches.lazy) if skip is not None else 0)
                    uncounted = skip is not None and matches.lazy
                    continue
                count += 1
                matches.append(raw)
                if count >= CHUNK:
                    matches.hand(sink, name, context, count, from_editor)
                    matches, context, count = Pending(matches.lazy), {}, 0
                continue
            message = message_of(raw)
            kind, data = message["type"], message["data"]
            if kind == "context":
                text, _ = data_text(data["lines"])
                for offset, line in enumerate(split_lines(text)):
                    context[data["line_number"] + offset] = line
            elif kind == "begin":
                matches, context, count, uncounted = Pending(matches.lazy), {}, 0, False
                name = to_name(path_text(data["path"]))
                again = name in sink.done and not from_editor
            elif kind == "end":
                if again:
                    again = False
                    continue
                sink.finished(name)
                if data["binary_offset"] is not None:
                    q = self.query
                    sink.add_binary(name, matched=q.count_binary and not q.multiline)
                else:
                    stats = data["stats"]
                    if uncounted:  # the file's match records are its matched lines, less those handed
                        count = stats["matched_lines"] - sink.records(name)
                    matches.hand(sink, name, context, count, from_editor)
                    sink.counted(name, stats["matched_lines"], stats["matches"], from_editor=from_editor)
                if progress is not None:
                    progress(f"{len(sink.files):,} files with matches so far, {sink.total:,} matches")
            elif kind == "summary":
                summary = data
        return summary
