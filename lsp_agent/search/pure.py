"""The pure-Python engine: ripgrep's rules and answers, for machines without `rg`.

Patterns are Rust regex syntax, translated by `rustre` (or refused when Python's `re` could
not run them identically); files are chosen by `ignore`; the records are ripgrep's: one
match per matching line (a multi-line match, with `multiline`, covers its lines, and
matches on touching lines merge, as ripgrep reports them), context lines around them.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from pathlib import Path

from ..errors import Cancelled, Refusal
from ..workspace import Text
from . import Collector, Match, Query, Target, decode, shorten, strip_eol
from .ignore import Overrides, Rules, walk
from .ripgrep import CHUNK
from .rustre import Invalid, Unsupported, needs_unicode_variant, translate


class PythonEngine:
    name = "python"

    def __init__(self, query: Query):
        self.query = query
        self._regex: dict[bool, re.Pattern] = {}

    def check(self) -> None:
        """Refuse a pattern or a glob before any file is read."""
        self.regex(False)
        try:
            Overrides.parse(list(self.query.globs))
        except ValueError as exc:
            raise Refusal("invalid_glob", f"Invalid glob (ripgrep glob syntax): {exc}.") from None

    def regex(self, unicode_text: bool) -> re.Pattern:
        q = self.query
        key = unicode_text and not q.fixed_strings and needs_unicode_variant(q.pattern)
        if key not in self._regex:
            try:
                if q.fixed_strings:
                    source = re.escape(q.pattern)
                else:
                    source = translate(q.pattern, multiline=q.multiline, unicode_text=key)
            except Invalid as exc:
                raise Refusal(
                    "invalid_regex", f"Invalid regex {shorten(q.pattern)} (Rust regex syntax): {exc}."
                ) from None
            except Unsupported as exc:
                raise Refusal(
                    "unsupported_regex",
                    f"The Python search engine cannot run {shorten(q.pattern)} exactly as ripgrep would: {exc}. "
                    "Rewrite the pattern without it, or install ripgrep (the `ripgrep` wheel) to use it.",
                ) from None
            flags = re.MULTILINE | (re.IGNORECASE if q.ignore_case else 0)
            self._regex[key] = re.compile(source, flags)
        return self._regex[key]

    def search(self, target: Target, collector: Collector, cancelled, progress) -> None:
        root = target.root
        for rel in target.rels:
            base = root / rel if rel else root
            if base.is_file():
                files = iter([rel])  # a file named explicitly is searched whatever the rules
            else:
                files = walk(root, rel, Rules(root, rel, list(self.query.globs)), cancelled)
            for file_rel in files:
                if cancelled():
                    raise Cancelled()
                path = root / file_rel
                if path in collector.skip:
                    continue
                collector.files_searched += 1
                progress(f"{collector.files_searched:,} files searched, {collector.total:,} matches")
                try:
                    data = path.read_bytes()
                except OSError:
                    continue
                self.search_bytes(path, data, collector)
            if cancelled():
                raise Cancelled()

    def search_text(self, path: Path, text: Text, collector: Collector) -> None:
        self.search_bytes(
            path, text.content.encode("utf-8", errors="surrogatepass"), collector, from_editor=True
        )

    def search_bytes(
        self, path: Path, data: bytes, collector: Collector, *, from_editor: bool = False
    ) -> None:
        if b"\x00" in data:
            # Binary: skipped. With count_binary (line mode) it is counted if it matches with
            # its NULs read as line breaks (ripgrep --binary --no-mmap); ripgrep's multi-line
            # reading of binary files follows other rules, so there they are never counted.
            if self.query.count_binary and not self.query.multiline:
                text = decode(data.replace(b"\x00", b"\n"))
                if self.regex(not text.isascii()).search(text):
                    collector.add_binary(path, matched=True)
            return
        content = decode(data)
        rx = self.regex(not content.isascii())
        if rx.search(content) is None:
            return
        starts = [0] + [m.end() for m in re.finditer("\n", content)]
        end_of_text = len(content)
        phantom = not content or content.endswith("\n")  # no line after the last "\n"
        line_count = len(starts) - 1 if phantom else len(starts)

        def line_end(n: int) -> int:  # offset of line n's "\n" (or the end of the text)
            return starts[n] - 1 if n < len(starts) else end_of_text

        spans: list[list[int]] = []  # [first line, last line, col, end col]
        pos = 0
        while pos <= end_of_text:
            m = rx.search(content, pos)
            if m is None:
                break
            s, e = m.span()
            if s == end_of_text and phantom:
                break
            first = bisect_right(starts, s)
            if self.query.multiline:
                last = bisect_right(starts, e - 1) if e > s else first
                if spans and first <= spans[-1][1] + 1:  # touching lines: one record
                    spans[-1][1] = max(spans[-1][1], last)
                else:
                    col = s - starts[first - 1]
                    spans.append([first, last, col, min(e, line_end(first)) - starts[first - 1]])
                pos = e if e > s else s + 1
            else:
                start = starts[first - 1]
                spans.append([first, first, s - start, min(e, line_end(first)) - start])
                pos = line_end(first) + 1  # one record per line: go on at the next line
        if not spans:
            return

        def line(n: int) -> str:
            return strip_eol(content[starts[n - 1] : line_end(n)])

        q = self.query
        matched = {n for a, b, _, _ in spans for n in range(a, b + 1)} if q.before or q.after else set()
        for chunk_start in range(0, len(spans), CHUNK):  # in parts, so details stop once too many
            chunk = spans[chunk_start : chunk_start + CHUNK]
            if not collector.detailed:
                collector.add(path, [], {}, len(spans) - chunk_start, from_editor=from_editor)
                return
            matches, context = [], {}
            for a, b, c, e in chunk:
                lines = tuple(line(n) for n in range(a, b + 1))
                matches.append(Match(a, lines, min(c, len(lines[0])), min(e, len(lines[0]))))
                for n in [*range(max(1, a - q.before), a), *range(b + 1, min(line_count, b + q.after) + 1)]:
                    if n not in matched:
                        context[n] = line(n)
            collector.add(path, matches, context, len(matches), from_editor=from_editor)
