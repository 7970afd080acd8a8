"""The ripgrep engine: `rg --json`, parsed as it streams, stoppable at any moment.

Flags that make ripgrep's choices reproducible (and equal to the Python engine's):
`--no-config` (no user config file), `--no-ignore-global` (no per-user excludes),
`--no-require-git` (a .gitignore counts outside git repositories too), `--no-ignore-parent`
(nothing is read above the searched folder; the workspace folders between the root and a
searched folder come as one `--ignore-file`), and `--no-mmap` (binary files are read in
buffers, the same way every time). Binary files are skipped as ripgrep skips them, at their
first NUL byte; matches reported before it are dropped. With `count_binary`, `--binary`
reads them whole (NULs as line breaks) so those that match are reported and counted — which
costs reading every binary file to its end.

Cancellation kills the process from a watcher thread and reaps it: no rg is left behind.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import tempfile
import threading
from pathlib import Path

from ..errors import Cancelled, Refusal
from ..workspace import Text
from . import Collector, Match, Query, Target, shorten, strip_eol
from .ignore import ancestor_rules

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
    raw = base64.b64decode(field["bytes"])
    return raw.decode("utf-8", errors="replace"), raw


def split_lines(text: str) -> list[str]:
    parts = text.split("\n")
    if text.endswith("\n"):
        parts.pop()
    return [strip_eol(p) for p in parts]


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


class RipgrepEngine:
    name = "ripgrep"

    def __init__(self, rg: str, query: Query):
        self.rg = rg
        self.query = query

    def check(self) -> None:
        pass  # ripgrep itself refuses a bad pattern; its message is passed on

    def common_args(self) -> list[str]:
        q = self.query
        args = [self.rg, "--json", "--no-config", "--no-mmap", "--no-messages"]
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
        return args

    def search(self, target: Target, collector: Collector, cancelled, progress) -> None:
        root = target.root
        args = [*self.common_args(), "--no-require-git", "--no-ignore-global", "--no-ignore-parent"]
        args += [f"--glob={g}" for g in self.query.globs]
        rules = [r for rel in target.rels if (root / rel).is_dir() for r in ancestor_rules(root, rel)]
        ignore_file = None
        if rules:
            with tempfile.NamedTemporaryFile("w", suffix=".ignore", delete=False, encoding="utf-8") as f:
                f.write("\n".join(rules) + "\n")
                ignore_file = f.name
            args.append(f"--ignore-file={ignore_file}")
        args += ["--regexp", self.query.pattern, "--"]
        args += ["./" + rel if rel else "./" for rel in target.rels]
        try:
            self.run(args, root, collector, cancelled, progress)
        finally:
            if ignore_file:
                os.unlink(ignore_file)

    def run(self, args: list[str], root: Path, collector: Collector, cancelled, progress) -> None:
        with tempfile.TemporaryFile() as errors:
            try:
                proc = subprocess.Popen(
                    args, cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors
                )
            except OSError as exc:  # e.g. so many paths that the command line is over the OS's limit
                raise Refusal(
                    "search_failed",
                    f"ripgrep could not be started ({exc.strerror}); search fewer paths at once.",
                ) from None
            assert proc.stdout is not None  # stdout=PIPE
            stop = threading.Event()

            def watch() -> None:  # kill rg as soon as the caller cancels
                while not stop.is_set():
                    if cancelled():
                        proc.kill()
                        return
                    stop.wait(0.02)

            watcher = threading.Thread(target=watch, daemon=True)
            watcher.start()
            try:

                def to_path(p):
                    return root / p.removeprefix("./")

                q = self.query
                summary = self.parse(
                    proc.stdout,
                    to_path,
                    collector,
                    progress,
                    multiline=q.multiline,
                    count_binary=q.count_binary,
                )
            except BaseException:
                proc.kill()
                raise
            finally:
                stop.set()
                proc.stdout.close()
                proc.wait()
                watcher.join()
            if cancelled():
                raise Cancelled()
            errors.seek(0)
            message = clip(errors.read().decode("utf-8", errors="replace").strip())
            if "error parsing glob" in message:
                raise Refusal("invalid_glob", f"ripgrep refused a glob (ripgrep glob syntax):\n{message}")
            if proc.returncode == 2 and summary is None:
                raise Refusal(
                    "invalid_regex",
                    f"ripgrep refused the pattern {shorten(self.query.pattern)} (Rust regex syntax):\n{message}",
                )

    def search_text(self, path: Path, text: Text, collector: Collector) -> None:
        proc = subprocess.run(
            [*self.common_args(), "--regexp", self.query.pattern, "--", "-"],
            input=text.content.encode("utf-8", errors="surrogatepass"),
            capture_output=True,
            check=False,  # rg exits 1 when nothing matched, 2 on a bad pattern (refused below)
        )
        if proc.returncode == 2 and not proc.stdout:
            message = clip(proc.stderr.decode("utf-8", errors="replace").strip())
            raise Refusal(
                "invalid_regex",
                f"ripgrep refused the pattern {shorten(self.query.pattern)} (Rust regex syntax):\n{message}",
            )
        lines = proc.stdout.splitlines(keepends=True)
        q = self.query
        self.parse(
            lines,
            lambda p: path,
            collector,
            lambda m: None,
            multiline=q.multiline,
            count_binary=q.count_binary,
            from_editor=True,
        )

    @staticmethod
    def parse(
        stream,
        to_path,
        collector: Collector,
        progress,
        *,
        multiline: bool,
        count_binary: bool = False,
        from_editor: bool = False,
    ) -> dict | None:
        """Feed ripgrep's JSON lines to the collector; the summary's data, if it came."""
        matches: list[Match] = []
        context: dict[int, str] = {}
        count = 0
        summary = None
        path = Path()  # set by each file's "begin" record, which comes before its matches
        for raw in stream:
            if not collector.detailed and raw.startswith(MATCH_PREFIX):
                count += 1  # only counted: skip the JSON decoding
                continue
            message = json.loads(raw)
            kind, data = message["type"], message["data"]
            if kind == "match":
                count += 1
                matches.append(record(data))
                if count >= CHUNK:
                    collector.add(path, matches, context, count, from_editor=from_editor)
                    matches, context, count = [], {}, 0
            elif kind == "context":
                text, _ = data_text(data["lines"])
                for offset, line in enumerate(split_lines(text)):
                    context[data["line_number"] + offset] = line
            elif kind == "begin":
                matches, context, count = [], {}, 0
                path = to_path(data_text(data["path"])[0])
            elif kind == "end":
                if data["binary_offset"] is not None:
                    collector.add_binary(path, matched=count_binary and not multiline)
                else:
                    collector.add(path, matches, context, count, from_editor=from_editor)
                progress(f"{len(collector.files):,} files with matches so far, {collector.total:,} matches")
            elif kind == "summary":
                summary = data
        return summary
