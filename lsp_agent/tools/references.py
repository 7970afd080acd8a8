"""references: every use of a name across the workspace, each with its role from the syntax
tree and its enclosing symbol — definitions first, then code, then comments and strings.

Matching is by name: ripgrep finds the lines holding the name as a whole word, the syntax
tree says what each use is. A name path with an owner (`Model/full_clean`) or a position on
an attribute narrows to what the syntax shows of a member: `obj.full_clean()` is kept, a
bare `full_clean` (a local of that name) is not. Over the budget the answer shortens like
search: one line per use, lines cut to a width, line numbers with roles, counts per file, a
summary; `offset`/`limit` page the one-line stage.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import wait
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from ..budget import (
    MIN_WIDTH,
    TOP_LEVEL,
    Stage,
    cut_line,
    first_stage,
    fits,
    largest_fit,
    page_end,
    page_size,
    per_file,
    plain,
    plural,
    showing,
    size,
    sizes_at,
    top_counts,
    widest_cut,
)
from ..config import Settings
from ..errors import Refusal
from ..search import FileMatches, Query, run_search, targets_of
from ..semantic.servers import family_of
from ..syntax import EXTENSIONS, enclosing_symbols, language_for, name_path_matcher, outline, walk
from ..syntax.languages import FILENAMES
from ..syntax.position import UseAt, use_at
from ..syntax.receivers import Receiver
from ..syntax.references import (
    CODE_ROLES,
    MEMBER_KINDS,
    OTHER,
    RECEIVER_LANGUAGES,
    ROLES,
    SHOWN,
    TEXT_ROLES,
    USE_TABLES,
    Use,
    classify,
    family,
    judge,
    local_at,
    occurrences,
    record_labels,
    super_calls,
    table_lines,
    table_places,
    table_stamp,
    word_lines,
    word_places,
)
from ..workspace import Text, Workspace
from .precise import (
    AHEAD,
    PRECISION,
    Confirmed,
    ahead,
    confirmed,
    here,
    result,
    semantic,
    server_expected,
    source_notes,
)
from .registry import MAX_CHARS, POSITION, Context, tool

SECTIONS = (
    ("definitions", {"definition"}),
    ("code", set(CODE_ROLES)),
    ("comments and strings", set(TEXT_ROLES)),
)
STAGES = (
    "one line per use",
    "lines cut to {width} characters",
    "line numbers with roles",
    "counts per file",
    "summary",
)

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {
            "type": "string",
            "minLength": 1,
            "description": "The name, or a name path whose owner narrows to members: `full_clean`, `Model/full_clean`.",
        },
        **POSITION,
        "roles": {
            "type": "array",
            "items": {"enum": list(ROLES)},
            "description": "Only uses with these roles ('text': files without a grammar).",
        },
        "paths": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Look only under these files or folders (default: the whole workspace).",
        },
        "offset": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "Page: skip this many uses.",
        },
        "limit": {"type": "integer", "minimum": 1, "description": "Page: show at most this many uses."},
        "precision": PRECISION,
        "max_chars": MAX_CHARS,
    },
    "additionalProperties": False,
}

SUMMARY = (
    "Every use of a name across the workspace (by `name`, or from a use at path+line+column), each "
    "with file, line, enclosing symbol and role (definition, import, call, type, comment, …). Definitions first, then code, then comments and "
    "strings; `roles` filters. Where the language's server runs, the uses it confirms by type come first, "
    "then by-name candidates. Over the budget it shortens like search. Use it before changing a definition, to find "
    "every call, import and subclass of it (rename renames them all); search finds text that is not a name."
)


@dataclass(frozen=True, slots=True)
class Reference:
    path: str  # as shown
    line: int
    column: int
    role: str
    symbol: str | None  # enclosing name path; None outside any definition (or no grammar)
    text: str  # the line, stripped
    # "definition": of the thing asked for; "receiver": the syntax shows the receiver is the
    # owner's class; "scope": a local's use, bound in its scope; "name": by name only, a candidate
    match: str = "name"
    source: str = "name"  # "name" (by-name match), or the language server that confirmed it
    # Not read yet: the file it is in (its text, column and symbol wait for `realized`; until
    # then it draws bare, with no symbol and no text: less than it will)
    origin: Origin | None = field(default=None, compare=False, repr=False)


def last_segment(name: str) -> tuple[str, str | None]:
    """(identifier, owner name path or None) of `Model/full_clean` or `Model.full_clean`."""
    body = name.strip("/")
    sep = "/" if "/" in body else "." if "." in body.strip(".") else None
    if sep is None:
        return body, None
    owner, _, last = body.rpartition(sep)
    return last, owner


@dataclass(frozen=True)
class Target:
    """What the syntax shows of the thing asked for, besides its name."""

    member: bool  # a method or field: a bare use in a receiver language is not it
    function: bool = False  # a top-level function: `obj.name` (obj not an import) is not it
    receiver: Receiver | None = None  # of the member use started from
    language: str | None = None  # of the file started from
    owner: str | None = None  # the class (name path) of the member definition started from


def name_at(at: UseAt) -> tuple[str, Target]:
    """The name at a use and what it is there: a member (reached through a dot or defined
    as a method), or a function (defined at the top level, or called bare)."""
    line = at.line
    uses = [u for u in classify(at.path, at.text, at.name, [line]) if u.column == at.column + 1]
    language = language_for(at.path)
    if not uses or uses[0].role in TEXT_ROLES:
        return at.name, Target(False, language=language)
    use = uses[0]
    if use.role == "definition":
        symbols = [s for s in walk(outline(at.path, at.text)) if s.name == at.name and s.start_line <= line]
        here = [s for s in symbols if s.selection[0] == line - 1] or symbols[-1:]
        kinds = {s.kind for s in symbols}
        member = bool(kinds) and kinds <= MEMBER_KINDS
        top = bool(symbols) and symbols[-1].kind == "function" and "/" not in symbols[-1].name_path
        # a member's definition names its class: the uses are judged against that one
        owner = here[0].name_path.rpartition("/")[0] if member and here else None
        return at.name, Target(
            member, function=top and language in RECEIVER_LANGUAGES, language=language, owner=owner or None
        )
    if use.qualified:
        return at.name, Target(True, receiver=use.receiver, language=language)
    return at.name, Target(
        False, function=language in RECEIVER_LANGUAGES and use.role == "call", language=language
    )


@dataclass
class Collected:
    refs: list[Reference]  # in answer order
    bare: int = 0  # bare uses of a local, left out
    other: int = 0  # definitions outside the owner, left out
    owner: str | None = None  # the class the receivers were judged against
    function: bool = False  # the uses were judged against a top-level function
    shown: int = 0  # uses whose receiver is the owner's class by the syntax (listed first)
    receivers: Counter = field(default_factory=Counter)  # left out: uses by other receivers
    elsewhere: Counter = field(default_factory=Counter)  # left out: uses by language
    local: str | None = None  # the uses are a local's, from its scope ("a parameter of f")
    cut: float | None = None  # the by-name uses were not matched within this many seconds
    since: float | None = None  # when the server's answer and the candidates were in (after_took)


@dataclass(frozen=True, slots=True)
class Hit:
    shown: str  # the file as shown
    file: FileUses
    use: Use
    nth: int  # FileUses.uses'
    count = 1  # uses it stands for

    @property
    def language(self) -> str | None:
        return self.file.language


@dataclass(frozen=True, slots=True)
class Unread:
    """A file of no grammar using the name, not read yet: its uses are read only where an
    answer keeps them (a name defined nowhere); elsewhere they are left out, counted as
    ripgrep counted them."""

    path: Path
    shown: str  # as the search showed it
    count: int  # ripgrep's matches of the name as a whole word
    language = None

    def read(self, ctx: Context, name: str, receivers: bool) -> list[Hit]:
        uses = file_uses(ctx, self.path, name, receivers)
        return [] if uses is None else [Hit(self.shown, uses, use, nth) for use, nth in uses.uses]


def gather(
    ctx: Context, name: str, paths: list[str] | None, receivers: bool = True, within: str | None = None
) -> list[Hit | Unread]:
    """Every whole-word use of `name` (in the files of the language family `within`, when
    given), but those of files of no grammar, which stay Unread: ripgrep finds the files, a
    file's use table in the index (when current) or one scan of its text the lines, classify
    says what each use is (from that table, receivers and all: nothing parsed). A file's uses
    are found while rg still walks the others, when it pauses (see Collector.idle_work); the
    files rg then reported whole are kept."""
    ws = ctx.workspace
    targets, _ = targets_of(ws, paths)
    found: dict[Path, FileUses | None] = {}
    word = re.fullmatch(r"\w+", name) is not None

    def waits(path: Path) -> bool:
        """Whether a file's uses can wait (Unread): it has no grammar and no open buffer, and
        the name is a word (ripgrep counts whole words as the scan of a text does, but for a
        `$` beside one; a name such as `$scope` it finds inside `$scopeProvider` too)."""
        return word and language_for(path) is None and ws.open_text(path) is None

    def ahead(file: FileMatches, _kept: bool) -> None:
        path = file.path
        if path not in found and not waits(path):
            found[path] = file_uses(ctx, path, name, receivers)

    # ripgrep only names the files (its lines are not decoded): the text says where the
    # whole-word uses are (`$` counts as a letter)
    pattern = rf"\b{re.escape(name)}\b" if word else re.escape(name)
    outcome = run_search(
        ws,
        Query(pattern, globs=family_globs(within) if within else ()),
        targets,
        keep_details=lambda *_: False,
        cancelled=ctx.cancel_event.is_set,
        progress=lambda message: ctx.progress(message),
        prefetch=ahead,
    )
    hits: list[Hit | Unread] = []
    for file in outcome.files:
        ctx.check_cancelled()
        if file.path not in found and waits(file.path):
            hits.append(Unread(file.path, file.shown, file.hits))
            continue
        uses = found[file.path] if file.path in found else file_uses(ctx, file.path, name, receivers)
        if uses is not None:
            hits += [Hit(file.shown, uses, use, nth) for use, nth in uses.uses]
    return hits


def read_all(ctx: Context, hits: list[Hit | Unread], name: str, receivers: bool) -> list[Hit | Unread]:
    """The hits with each Unread file's uses read, in their place (no Unread is left)."""
    read: list[Hit | Unread] = []
    for hit in hits:
        if isinstance(hit, Unread):
            ctx.check_cancelled()
            read += hit.read(ctx, name, receivers)
        else:
            read.append(hit)
    return read


class FileUses:
    """A file's uses of a name, each with its rank among the name's words on its line where
    its column is not known yet (-1 where it is); the text they are in and their enclosing
    symbols are read when first asked for. A file whose index record is current (and
    settled: see SymbolIndex.current) gives its uses from the record's use table unread, so
    that only the files of a page are read, not every file using a common name."""

    __slots__ = ("_labels", "_text", "language", "name", "path", "record", "tabled", "uses")

    def __init__(self, path: Path, name: str, uses: list[tuple[Use, int]], text: Text | None, record, tabled: bool):  # fmt: skip
        self.path, self.name, self.language, self.uses = path, name, language_for(path), uses
        self.record, self.tabled, self._text = record, tabled, text  # tabled: the record is of the text
        self._labels: dict[int, str | None] = {}

    def text(self, ws: Workspace) -> Text | None:
        """The file's text (None: no longer readable)."""
        if self._text is None:
            try:
                self._text = ws.text(self.path)
            except Refusal:
                return None
        return self._text

    def lines(self, ws: Workspace, numbers: list[int]) -> dict[int, str]:
        """The text of each of the lines ("" past the end, or where the file is no longer
        readable): from its text where read, else from its bytes, only those lines decoded
        (as Text decodes them; a CR before the line break is kept, for the caller strips)."""
        if self._text is None and ws.open_text(self.path) is None:
            try:
                rows = ws.data(self.path).split(b"\n", max(numbers, default=0))  # no further than asked
            except Refusal:
                return dict.fromkeys(numbers, "")
            return {n: rows[n - 1].decode("utf-8", "replace") if n <= len(rows) else "" for n in numbers}
        text = self.text(ws)
        return {n: text.line(n) if text is not None and n <= text.line_count else "" for n in numbers}

    def labels(self, ws: Workspace, lines: list[int]) -> dict[int, str | None]:
        """The enclosing symbol of each line: from the record where its table is current
        (nothing parsed), else from the file's outline."""
        wanted = sorted(set(lines) - self._labels.keys())
        if wanted:  # a tabled record's labels need no text
            text = None if self.tabled or self.language is None else self.text(ws)
            self._labels |= labels(self.path, text, self.record if self.tabled else None, wanted)
        return {line: self._labels.get(line) for line in lines}

    def symbol(self, ws: Workspace, line: int) -> str | None:
        return self.labels(ws, [line])[line]


@dataclass(frozen=True, slots=True)
class Origin:
    file: FileUses
    nth: int  # the use's rank among the name's words on its line; -1: its column is known


def file_uses(ctx: Context, path: Path, name: str, receivers: bool) -> FileUses | None:
    """The uses of `name` in one file (None: unreadable, or none as a whole word): from its
    record's use table when the record is current and settled (the text unread), from its
    bytes when it has no grammar, else from its text (the table when of that text, else a
    scan and a parse)."""
    ws = ctx.workspace
    record = ctx.index.current(path, settled=True) if ctx.index is not None else None
    if record is not None and (places := record_places(path, record, name, receivers)) is not None:
        return FileUses(path, name, places, None, record, True) if places else None
    try:
        if language_for(path) is None and ws.open_text(path) is None:
            data = ws.data(path)
            if (words := word_places(data, name)) is not None:  # words only, found in the bytes
                texts = [(Use(line, 0, "text", False), nth) for line, nth in words]
                return FileUses(path, name, texts, None, None, False) if texts else None
            text = Text.from_bytes(data)
        else:
            text = ws.text(path)
    except Refusal:
        return None
    record, table = record_and_table(ctx, path, text)
    lines = table_lines(table, name) if table is not None else None
    if lines is None:
        lines = word_lines(text, name)
    if not lines:
        return None
    uses = classify(path, text, name, lines, table=table, receivers=receivers)
    return FileUses(path, name, [(u, -1) for u in uses], text, record, table is not None)


def record_places(path: Path, record, name: str, receivers: bool) -> list[tuple[Use, int]] | None:
    """table_places of a record's use table (None: it has none, or it cannot say), kept by
    version: a name asked again costs a dictionary's lookup, not the table's."""
    key = (path, record.version, name, "places", receivers)
    if (found := USE_TABLES.get(key)) is not None:
        return found
    table = record.table(table_stamp(record.language))
    places = table_places(table, name, receivers) if table is not None else None
    if places is not None:
        USE_TABLES.put(key, places)
    return places


def realized(ws: Workspace, refs: list[Reference], which: Callable[[Reference], bool] | None = None) -> list[Reference]:  # fmt: skip
    """`refs` with each one not read yet (of `which`, when given) given its line's text, its
    column and its symbol, each file read once."""
    waiting: dict[int, list[int]] = {}
    for i, r in enumerate(refs):
        if r.origin is not None and (which is None or which(r)):
            waiting.setdefault(id(r.origin.file), []).append(i)
    out = list(refs)
    for at in waiting.values():
        file = refs[at[0]].origin.file  # type: ignore[union-attr]
        symbols = file.labels(ws, [refs[i].line for i in at])
        contents = file.lines(ws, [refs[i].line for i in at])
        for i in at:
            r, nth = refs[i], refs[i].origin.nth  # type: ignore[union-attr]
            content = contents[r.line]
            column = r.column
            if nth >= 0:  # its rank among the line's occurrences (none: the file changed since)
                found = occurrences(content, file.name)
                column = found[nth] + 1 if nth < len(found) else 1
            out[i] = Reference(
                r.path, r.line, column, r.role, symbols[r.line], content.strip(), r.match, r.source
            )
    return out


def place(r: Reference) -> int:
    """Where a use is on its line, for ordering: its column, or its rank where not read yet."""
    return r.origin.nth if r.origin is not None and r.origin.nth >= 0 else r.column


def defined_as(hit: Hit, ws: Workspace, name: str) -> str:
    """The name path of the definition a definition use names."""
    defined = hit.file.symbol(ws, hit.use.line) or ""
    return defined if defined.endswith(name) else f"{defined}/{name}"


def owner_of(receiver: Receiver | None, definers: frozenset[str]) -> str | None:
    """The class whose member a use started from is, where its receiver shows one that defines
    the name (`self.x` in a class defining x; `super().x` in a class whose base defines it)."""
    if receiver is None or receiver.how not in ("instance", "super"):
        return None
    if receiver.how == "instance" and receiver.name in definers:
        return receiver.name
    return next((b for b in receiver.bases if b in definers and b != receiver.name), None)


CHECK_EVERY = 512  # uses judged between two checkpoints of collect (about 1 ms)


def checkpointed(ctx: Context, hits: list[Hit | Unread]) -> Iterator[Hit | Unread]:
    """The hits, with a checkpoint every CHECK_EVERY of them: a search cut beside the server
    stops there, not once every use is judged."""
    for n, hit in enumerate(hits):
        if not n % CHECK_EVERY:
            ctx.check_cancelled()
        yield hit


def collect(
    ctx: Context, name: str, owner: str | None, target: Target, paths: list[str] | None, within: bool = False
) -> Collected:
    """The uses of a name (inside `owner` when given) in answer order, and what was left out:
    uses in other languages than its definitions', bare uses of a member, uses on receivers
    of other classes (by the syntax), definitions outside the owner. `within`: only the
    target language's files are searched (beside its server), the others are not counted."""
    receivers = target.member or target.function
    hits = gather(ctx, name, paths, receivers, family(target.language) if within else None)
    # other classes' definitions and uses are left out, but kept as candidates where the owner
    # was inferred in a language whose type server counts an override or another
    # implementation of the same interface member as one symbol (tsserver; pyright does not)
    strict = family(target.language) not in LINKED_OVERRIDES  # by name path: no language, strict
    definitions = [h for h in hits if isinstance(h, Hit) and h.use.role == "definition"]
    defined = {id(h): defined_as(h, ctx.workspace, name) for h in definitions}
    definers = frozenset(d.rsplit("/", 2)[-2] for d in defined.values() if "/" in d)
    owner = owner or owner_of(target.receiver, definers)
    owned = name_path_matcher(f"{owner}/{name}") if owner else None
    wanted = [h for h in definitions if owned is None or owned(defined[id(h)])]
    languages = {family(target.language)} if target.language else {family(h.language) for h in wanted}
    if not languages:  # defined nowhere: every use is kept, those of files of no grammar too
        hits = read_all(ctx, hits, name, receivers)
    owner_class = re.split(r"[/.]", owner)[-1] if owner else None
    out = Collected([], owner=owner_class, function=target.function)
    ranked = []
    for hit in checkpointed(ctx, hits):
        if isinstance(hit, Unread) or (languages and family(hit.language) not in languages):
            out.elsewhere[hit.language or "no grammar"] += hit.count  # Unread: beside definitions
            continue
        use = hit.use
        rank = 1
        if use.role == "definition":
            outside = owned is not None and not owned(defined[id(hit)])
            if (outside and strict) or (target.function and "/" in defined[id(hit)].strip("/")):
                out.other += 1
                continue
            rank = 2 if outside else 1
        elif (
            target.member
            and hit.language in RECEIVER_LANGUAGES
            and not use.qualified
            and use.receiver is None
            and use.role in ("call", "use")
        ):
            out.bare += 1
            continue
        if use.role != "definition" and (target.member or target.function):
            verdict = judge(use, owner_class, definers, function=target.function)
            if verdict == OTHER and (strict or target.function or not another_class(use.receiver)):
                out.receivers[receiver_label(use.receiver)] += 1
                continue
            rank = {SHOWN: 0, OTHER: 2}.get(verdict, 1)
        origin = Origin(hit.file, hit.nth)  # read when a page shows it
        ranked.append((rank, Reference(hit.shown, use.line, use.column, use.role, None, "", match_of(use.role, rank), origin=origin)))  # fmt: skip
    if name == "constructor" and owner_class and "javascript" in languages:  # where it runs
        ranked += [(0, r) for r in constructor_calls(ctx, owner_class, paths, family(target.language) if within else None)]  # fmt: skip
    out.shown = sum(rank == 0 for rank, _ in ranked)
    ranked.sort(key=lambda x: (SECTION_OF[x[1].role], x[0], x[1].path, x[1].line, place(x[1]), ROLE_ORDER[x[1].role]))  # fmt: skip
    out.refs = [ref for _, ref in ranked]
    return out


def constructor_calls(ctx: Context, cls: str, paths: list[str] | None, within: str | None) -> list[Reference]:
    """Where a JavaScript or TypeScript class's constructor runs, by the syntax: `new cls(…)`,
    and `super(…)` in the classes that extend it (tsserver counts both among the constructor's
    references; no word names it). Its subclasses name it, so its own uses find them. A class
    is known by its name, as receivers are: any class of that name is taken for it."""
    refs, heirs = [], dict[Path, tuple[str, FileUses, list[int]]]()
    for hit in gather(ctx, cls, paths, False, within):
        if not isinstance(hit, Hit) or family(hit.language) != "javascript":
            continue
        if hit.use.role == "call" and not hit.use.qualified:  # `new cls(…)`: a class is called through new
            refs.append(Reference(hit.shown, hit.use.line, hit.use.column, "call", None, "", "receiver", origin=Origin(hit.file, hit.nth)))  # fmt: skip
        elif hit.use.role == "inheritance":
            heirs.setdefault(hit.file.path, (hit.shown, hit.file, []))[2].append(hit.use.line)
    for path, (shown, file, lines) in heirs.items():
        text = file.text(ctx.workspace)
        if text is None:
            continue
        read = FileUses(path, "super", [], text, None, False)  # the calls' text and symbols
        refs += [
            Reference(shown, line, column, "call", None, "", "receiver", origin=Origin(read, -1))
            for line, column in super_calls(path, text, cls, lines)
        ]
    return refs


def match_of(role: str, rank: int) -> str:
    """What tied a use to the asked symbol: its receiver, its name, or it is the definition."""
    if role == "definition":
        return "name" if rank == 2 else "definition"
    return "name" if rank else "receiver"


LINKED_OVERRIDES = frozenset({"javascript"})  # the family: TypeScript, TSX, JavaScript


@lru_cache(maxsize=32)
def family_globs(searched: str) -> tuple[str, ...]:
    """ripgrep globs choosing the files of a language family, by extension (any case, as
    language_for reads them) and file name."""
    anycase = lambda ext: "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in ext)  # noqa: E731
    names = [f"*{anycase(ext)}" for ext, language in EXTENSIONS.items() if family(language) == searched]
    return (*names, *(name for name, language in FILENAMES.items() if family(language) == searched))


def another_class(receiver: Receiver | None) -> bool:
    """Whether a receiver is an instance of a class (or `super()`), not a builtin value or a
    module: a class the syntax cannot tell apart from an override of the one asked for."""
    return receiver is not None and receiver.how in ("instance", "super")


def receiver_label(receiver: Receiver | None) -> str:
    if receiver is None:
        return "a bare name"
    if receiver.how == "super":
        return f"super() in {receiver.name}"
    return receiver.name or "an object"


def left_out_notes(c: Collected, name: str) -> list[str]:
    """What the syntax of receivers and languages showed, and left out."""
    notes = []
    if c.shown:
        notes.append(f"first: {plural(c.shown, 'use')} whose receiver is a {c.owner} by the syntax")
    if c.receivers:
        top = ", ".join(f"{label} {n:,}" for label, n in c.receivers.most_common(5))
        more = f", {len(c.receivers) - 5:,} more" if len(c.receivers) > 5 else ""
        if c.function:
            notes.append(
                f"left out: {plural(c.receivers.total(), 'member use')} (obj.{name}, obj no import), not the top-level function ({top}{more})"
            )
        else:
            whose = f"not {c.owner}'s" if c.owner else "not this one"
            notes.append(
                f"left out: {plural(c.receivers.total(), 'use')} on receivers whose `{name}` is {whose} by the syntax ({top}{more}); references name={name} lists every use by name"
            )
    if c.elsewhere:
        top = ", ".join(f"{language} {n:,}" for language, n in c.elsewhere.most_common(4))
        notes.append(
            f"left out: {plural(c.elsewhere.total(), 'use')} in files of other languages than the definitions' ({top}); search finds them"
        )
    return notes


ROLE_ORDER = {role: n for n, role in enumerate(ROLES)}
GUESS_WINDOW = 64  # uses read first to guess a page's size: a page of one-line uses holds about this many
SECTION_OF = {role: n for n, (_, roles) in enumerate(SECTIONS) for role in roles}


def answer_order(r: Reference) -> tuple:
    """Confirmed by type first, then sections (definitions, code, text), the uses whose
    receiver the syntax shows first, then place."""
    return (
        r.source == "name",
        SECTION_OF[r.role],
        r.match == "name",
        r.path,
        r.line,
        place(r),
        ROLE_ORDER[r.role],
    )


def starts_of(ctx: Context, at: UseAt | None, refs: list[Reference]) -> list[tuple[Path, int, int]]:
    """Where to ask the server: the use asked from, else each definition found by name."""
    if at is not None:
        return [(at.path, at.line, at.column + 1)]
    definitions = realized(ctx.workspace, [r for r in refs if r.role == "definition"])
    return [(ctx.workspace.resolve(r.path), r.line, r.column) for r in definitions]


def local_uses(ctx: Context, at: UseAt) -> Collected | None:
    """The uses of a local variable or parameter, from its binding's scope: those of the name
    in its file that the syntax resolves to the same binding (exact, no search); None when
    the name at `at` is no local."""
    if at.qualifier is not None or (local := local_at(at.path, at.text, at.line, at.column)) is None:
        return None
    shown = ctx.workspace.display(at.path)
    lines = [n for n in range(1, at.text.line_count + 1) if at.name in at.text.line(n)]
    symbols = enclosing_symbols(at.path, at.text, lines)
    refs = []
    for use in classify(at.path, at.text, at.name, lines):
        if use.role in TEXT_ROLES or local_at(at.path, at.text, use.line, use.column - 1) != local:
            continue
        content = at.text.line(use.line)
        byte = len(content[: use.column - 1].encode("utf-8", "surrogatepass"))
        role = "definition" if (use.line - 1, byte) == local.range[:2] else use.role
        refs.append(
            Reference(shown, use.line, use.column, role, symbols.get(use.line), content.strip(), "scope")
        )
    refs.sort(key=answer_order)
    return Collected(
        refs, local=f"{'a parameter' if local.kind == 'parameter' else 'a local'} of {local.function}"
    )


def typed_uses(ctx: Context, identifier: str, owner, target: Target, paths, at: UseAt | None, precision):
    """collect's uses merged with the server's, and the server's answer: from a use the
    server is asked at once, while the names are matched; by name, at their definitions. A
    local's uses come from its scope alone."""
    if at is not None and paths is None and (scoped := local_uses(ctx, at)) is not None:
        typed = confirmed(ctx, "references", starts_of(ctx, at, []), precision)
        scoped.refs = merge_confirmed(ctx, scoped.refs, typed, identifier)
        return scoped, typed
    if at is None:
        collected = collect(ctx, identifier, owner, target, paths)
        typed = confirmed(ctx, "references", starts_of(ctx, at, collected.refs), precision)
    else:
        collected, typed = both_at_once(ctx, identifier, owner, target, paths, at, precision)
        collected.since = time.monotonic()
    collected.refs = merge_confirmed(ctx, collected.refs, typed, identifier)
    return collected, typed


# Once the server has answered, the by-name candidates may take what is left of ANSWER_WITHIN
# times its time (the question's own: its requests and their locations read), less what the
# answer does after them (merging, roles and enclosing symbols, the page: what the last answer
# of that language in these roots did after its candidates, AFTER_TOOK, and at least
# AFTER_CANDIDATES), so that the answer stays within ANSWER_WITHIN times the server's. In a
# small workspace (or one whose index is not known) they get at least CANDIDATES_FLOOR: there
# the by-name search's own start (a ripgrep run, a few parses) is all of it, and a small
# project's candidates always come, whichever finishes first.
ANSWER_WITHIN = 1.5
AFTER_CANDIDATES = 0.001
CANDIDATES_FLOOR = 0.25
SMALL_WORKSPACE = 100  # files in the index
# In a workspace of SMALL_WORKSPACE files or more, the server is given QUICK_SERVER alone
# first: the by-name search beside it would slow it down (two cores, one interpreter, ripgrep's
# threads), and the server's time is what the answer's is held to. A server that answers within
# it (tsserver; basedpyright now and then) is followed by the search only when what is left of
# the answer's time is no less than the last by-name search for that language in these roots
# took (one cut: CUT_BACKOFF times what it had had); else the candidates are left out, the
# answer says so, and that time is cut by SKIPPED_DECAY, so that a search is tried again
# before long. A server that does not answer within it is asked while the names are matched
# from then on: the search starts QUICK_SERVER later than beside it, which is its whole cost
# to a slow server's answer.
QUICK_SERVER = 0.02
SKIPPED_DECAY = 0.8
CUT_BACKOFF = 2.0  # a search cut is taken to need this many times what it had (then skipped a few times)
BY_NAME_TOOK: dict[tuple, float] = {}  # (roots, language family) -> the last by-name search's time (at least)
TIMES = threading.Lock()  # (written from the call's thread and the by-name search's)
AFTER_TOOK: dict[tuple, float] = {}  # (roots, language family) -> the last answer's work after its candidates


def after_candidates(searched: tuple) -> float:
    """What an answer keeps of its time for its work after the candidates (after_took)."""
    with TIMES:
        return max(AFTER_CANDIDATES, AFTER_TOOK.get(searched, 0.0))


def after_took(ctx: Context, at: UseAt, since: float) -> None:
    """An answer's work after its candidates (from `since`) for the next one to keep time for."""
    with TIMES:
        AFTER_TOOK[searched_in(ctx, at.path)] = time.monotonic() - since


def searched_in(ctx: Context, path: Path) -> tuple:
    """What the times kept here are kept by: the roots and the language family of `path`."""
    return (tuple(ctx.workspace.roots), family_of(path))


def seconds(took: float) -> str:
    """A time as said in a note: "0.26 s", or under 0.1 s in milliseconds ("4 ms")."""
    return f"{took:.2f} s" if took >= 0.1 else f"{took * 1000:.0f} ms"


def candidates_floor(ctx: Context) -> float:
    small = ctx.index is None or len(ctx.index.files) < SMALL_WORKSPACE
    return CANDIDATES_FLOOR if small else 0.0


def quick_here(ctx: Context, path: Path, precision: str | None) -> bool:
    """Whether this process's own server for `path` answered references within QUICK_SERVER
    last time (a worker's is the serving process's: asked over its pipe, from a thread)."""
    if ctx.semantic_source is not None:
        return False
    return semantic(ctx, precision).answers_within(path, "textDocument/references", QUICK_SERVER)


def both_at_once(ctx: Context, identifier: str, owner, target: Target, paths, at: UseAt, precision):
    """The server's uses and the by-name ones, the server alone first (see QUICK_SERVER);
    by-name candidates still being matched when the answer's time is up (ANSWER_WITHIN the
    server's) are left out, and the answer says so."""
    started = time.monotonic()
    within, floor = server_expected(ctx, at.path, precision), candidates_floor(ctx)
    # a server that answered within QUICK_SERVER last time is asked on this thread: the search
    # would wait for its answer anyway, and a thread's hops there and back (0.5 ms) are saved
    quick = within and not floor and quick_here(ctx, at.path, precision)
    pending = (here if quick else ahead)(ctx, "references", starts_of(ctx, at, []), precision)
    stop = threading.Event()
    quiet = replace(ctx, report=None, step_aside=None, cancel_event=stop)
    searched = searched_in(ctx, at.path)
    searching: list[float] = []  # when the by-name search began

    def by_name_search() -> Collected:
        searching.append(time.monotonic())
        collected = collect(quiet, identifier, owner, target, paths, within)
        with TIMES:  # (a search stopped raised Cancelled)
            BY_NAME_TOOK[searched] = time.monotonic() - searching[0]
        return collected

    alone = within and not floor and wait([pending], timeout=QUICK_SERVER).done
    by_name = None if alone else AHEAD.submit(by_name_search)
    try:
        typed = result(ctx, pending)
        if within and not typed.answered:  # the server was expected: search every file after all
            stop.set()
            return collect(ctx, identifier, owner, target, paths), typed
        if typed.answered:
            began, spent = (typed.began, typed.took) if typed.took else (started, time.monotonic() - started)
            # the answer's time counts from when the call came in (its way here is spent),
            # and to its way back from a worker (as long as its pipe took it here)
            came = max(began - ctx.arrived, 0.0) if ctx.arrived is not None else 0.0
            after = after_candidates(searched)
            allowed = max(ANSWER_WITHIN * spent - after - came - ctx.way_back, spent + floor)
            left = began + allowed - time.monotonic()
            if by_name is None:
                with TIMES:
                    last = BY_NAME_TOOK.get(searched, 0.0)
                    skipped = left < last
                    if skipped:
                        BY_NAME_TOOK[searched] = last * SKIPPED_DECAY
                if skipped:
                    return Collected([], owner=target.owner, cut=allowed), typed
                by_name = AHEAD.submit(by_name_search)
            if not wait([by_name], timeout=max(left, 0.0)).done:
                by_name.cancel()  # (one still waiting for a thread never starts)
                if searching:  # it takes longer than it had here: CUT_BACKOFF times that, say
                    with TIMES:  # (cut after less than it took before: that says nothing new)
                        ran = time.monotonic() - searching[0]
                        BY_NAME_TOOK[searched] = max(BY_NAME_TOOK.get(searched, 0.0), ran * CUT_BACKOFF)
                return Collected([], owner=target.owner, cut=allowed), typed
        # (asked alone only beside an expected server: answered, or returned above)
        assert by_name is not None
        while not wait([by_name], timeout=0.2).done:
            ctx.progress("matching the name")
        return by_name.result(), typed
    finally:
        stop.set()  # a cut or cancelled by-name search stops at its next checkpoint


def merge_confirmed(ctx: Context, refs: list[Reference], found: Confirmed, name: str) -> list[Reference]:
    """Mark the by-name uses the server confirmed, add the ones it found that matching by
    name left out (a bare use, a renamed import), in answer order."""
    if not found.answered:
        return refs
    ws = ctx.workspace
    shown_as = {path: ws.display(path) for path in {loc.path for loc in found.locations}}
    served = set(shown_as.values())
    refs = realized(ws, refs, lambda r: r.path in served)  # their columns are compared
    keys = {(shown_as[loc.path], loc.line, loc.column) for loc in found.locations}
    merged = [replace(r, source=found.server) if (r.path, r.line, r.column) in keys else r for r in refs]
    seen = {(r.path, r.line, r.column) for r in refs}
    added: dict[Path, list] = {}
    for loc in found.locations:
        if (shown_as[loc.path], loc.line, loc.column) not in seen:
            added.setdefault(loc.path, []).append(loc)
    for path, locations in added.items():  # each file read, classified and outlined once
        text = found.texts[path] if path in found.texts else ws.text(path)
        lines = [loc.line for loc in locations]
        roles, symbols = roles_and_symbols(ctx, path, text, name, lines)
        shown = shown_as[path]
        merged += [
            Reference(shown, loc.line, loc.column, roles.get((loc.line, loc.column), "use"),
                      symbols.get(loc.line), text.line(loc.line).strip(), source=found.server)
            for loc in locations
        ]  # fmt: skip
    merged.sort(key=answer_order)
    return merged


def roles_and_symbols(ctx: Context, path: Path, text: Text, name: str, lines: list[int]) -> tuple[dict, dict]:
    """({(line, column): role}, {line: enclosing symbol}) of `name` on `lines`: from the file's
    index record and use table when they are current (nothing parsed), else parsed."""
    record, table = record_and_table(ctx, path, text)
    uses = classify(path, text, name, lines, table=table, receivers=False)
    tabled = record if table is not None else None
    return {(u.line, u.column): u.role for u in uses}, labels(path, text, tabled, sorted(set(lines)))


def record_and_table(ctx: Context, path: Path, text: Text):
    """The file's index record and use table when they are of this text, else None each."""
    record = ctx.index.record_of(path, text) if ctx.index is not None else None
    return record, record.table(table_stamp(record.language)) if record is not None else None


def labels(path: Path, text: Text | None, tabled, lines: list[int]) -> dict[int, str | None]:
    """The enclosing symbol of each of the sorted `lines`: from `tabled`, the file's record
    when its table is current (nothing parsed), else from the file's outline (none without a
    grammar, or without the text)."""
    if tabled is not None:
        return record_labels(tabled, lines)
    return enclosing_symbols(path, text, lines) if text is not None and language_for(path) else {}


def provenance(typed: Confirmed, refs: list[Reference], cut: bool = False) -> list[str]:
    """The notes that say which source answered, and what that means for the reader."""
    if not typed.answered:
        first = "matched by name, not by type: a use of another thing with this name is listed too"
        return [first, *source_notes(typed, "definitions")]
    sure = sum(r.source != "name" for r in refs)
    first = f"{plural(sure, 'use')} confirmed by type, from {typed.server}; " + (
        f"{plural(len(refs) - sure, 'more use')} by name only, not confirmed: candidates (an untyped "
        "receiver's use is real, another thing's is not)"
        if len(refs) > sure
        else ("by name not matched in time" if cut else "no other use by name")
    )
    return [first, *source_notes(typed, "definitions")]


def label(ref: Reference) -> str:
    if ref.origin is not None:  # not read yet: drawn bare
        return ""
    return ref.symbol or (TOP_LEVEL if has_grammar(ref.path) else "")


@lru_cache(maxsize=4096)
def has_grammar(path: str | Path) -> bool:
    """language_for, asked once per file: each draw of a budget's bisection labels every line."""
    return language_for(path) is not None


def sections(refs: list[Reference]):
    """(title, uses) of each section; with a semantic source the confirmed ones come first,
    apart from the by-name candidates; among those, the uses whose receiver the syntax shows
    is the owner's class come first."""
    servers = sorted({r.source for r in refs} - {"name"})
    groups = [(f"by type, from {s}: ", s) for s in servers] + [("by name, not confirmed: ", "name")]
    for prefix, source in groups if servers else [("", "name")]:
        for title, roles in SECTIONS:
            chosen = [r for r in refs if r.role in roles and r.source == source]
            if source == "name" and title == "code" and any(r.match == "receiver" for r in chosen):
                yield prefix + "code, by the receiver's class", [r for r in chosen if r.match == "receiver"]
                chosen, title = [r for r in chosen if r.match != "receiver"], "code, by name"
            if source == "name" and title == "definitions" and any(r.match == "name" for r in chosen):
                if mine := [r for r in chosen if r.match == "definition"]:
                    yield prefix + title, mine
                chosen, title = [r for r in chosen if r.match == "name"], "definitions of other classes"
            if chosen:
                yield prefix + title, chosen


def by_file(refs: list[Reference]) -> dict[str, list[Reference]]:
    files: dict[str, list[Reference]] = {}
    for r in refs:
        files.setdefault(r.path, []).append(r)
    return files


def use_line(r: Reference, width: int | None = None) -> str:
    where = f" {name}" if (name := label(r)) else ""
    return f"{r.line} {r.role}{where}: {cut_line(r.text, width)}"


def one_line(refs: list[Reference], width: int | None = None) -> list[str]:
    out = []
    for title, chosen in sections(refs):
        out.append(f"── {title}")
        for path, file_refs in by_file(chosen).items():
            out.append(path)
            out += [use_line(r, width) for r in file_refs]
    return out


def prefix_sizes(refs: list[Reference]) -> list[int]:
    """size(one_line(refs[:n])) for each n, added up: each use's line, its file's line once
    per section, each section's title once. A guess (page_size checks it): the titles are
    the whole list's, and a section whose uses are not in path order draws its files apart."""
    titles = {id(r): title for title, chosen in sections(refs) for r in chosen}
    sizes, total, seen = [0], -1, set[object]()
    for r in refs:
        title = titles.get(id(r))
        if title is not None:  # every use is in a section; none is drawn twice
            total += (len(f"── {title}") + 1) * (title not in seen) + (len(r.path) + 1) * (
                (title, r.path) not in seen
            )
            total += len(use_line(r)) + 1
            seen.update((title, (title, r.path)))
        sizes.append(total)
    return sizes


def text_width(text: str, width: int) -> int:
    """The characters of cut_line(text, width)."""
    return len(plain(text)) if len(text) <= width else width


def numbers(refs: list[Reference]) -> list[str]:
    out = []
    for title, chosen in sections(refs):
        out.append(f"── {title}")
        for path, file_refs in by_file(chosen).items():
            out.append(
                path
                + ": "
                + ", ".join(f"{r.line} {r.role}" + (f" {label(r)}" if label(r) else "") for r in file_refs)
            )
    return out


def role_counts(refs: list[Reference]) -> str:
    counts = Counter(r.role for r in refs)
    return ", ".join(f"{counts[role]} {role}" for role in ROLES if counts[role])


def counts(refs: list[Reference]) -> list[str]:
    out = []
    for title, chosen in sections(refs):
        out.append(f"── {title}")
        out += per_file({path: role_counts(file_refs) for path, file_refs in by_file(chosen).items()})
    return out


def summary(refs: list[Reference]) -> list[str]:
    folders = Counter(r.path.rsplit("/", 1)[0] if "/" in r.path else "." for r in refs)
    return [f"by role: {role_counts(refs)}", f"by folder: {top_counts(folders)}"]


def asked_for(ctx: Context, name: str | None, path: str | None, line: int | None, column: int):
    """(identifier, owner or None, what the syntax shows of the target, the name as the header
    shows it, the use asked from or None)."""
    if name is not None:
        identifier, owner = last_segment(name)
        return identifier, owner, Target(owner is not None), name, None
    if path is not None and line is not None:
        at = use_at(ctx.workspace, path, line, column)
        identifier, target = name_at(at)
        return identifier, target.owner, target, f"{identifier} (from {path}:{line})", at
    raise Refusal(
        "no_name",
        "Give name= (`full_clean`, `Model/full_clean`), or path=, line= (and column=) of a use.",
    )


def notes_of(identifier: str, c: Collected, roles: list[str] | None, hidden: int) -> list[str]:
    notes = ["matched by name, not by type: a use of another thing with this name is listed too"]
    if c.bare:
        notes.append(
            f"left out: {plural(c.bare, 'bare use')} of a local `{identifier}` (a member is reached through a receiver: obj.{identifier})"
        )
    if c.other:
        where = f"outside {c.owner}" if c.owner else "in classes (members, not the function)"
        notes.append(f"left out: {plural(c.other, 'definition')} of `{identifier}` {where}")
    notes += left_out_notes(c, identifier)
    if roles:
        notes.append(f"roles: {', '.join(roles)} ({plural(hidden, 'other use')} not shown)")
    return notes


@dataclass
class Uses:
    """The ladder of a references answer: the chosen uses, the page asked for, its notes.
    Uses not read yet (see Reference.origin) are read as a drawing needs them: the page's and
    the next one's, not every use of a common name."""

    asked: str
    chosen: list[Reference]
    notes: list[str]
    offset: int
    end: int
    budget: int
    workspace: Workspace | None = None  # where the uses not read yet are read

    def __post_init__(self) -> None:
        self.files = len({r.path for r in self.chosen})

    @property
    def page(self) -> list[Reference]:
        return self.window(self.offset, self.end)

    def window(self, start: int, stop: int) -> list[Reference]:
        """chosen[start:stop], each use read."""
        part = self.chosen[start:stop]
        if self.workspace is not None and any(r.origin is not None for r in part):
            part = self.chosen[start:stop] = realized(self.workspace, part)
        return part

    def render(self, start: int, stop: int, stage: str, body: list[str], more: str | None) -> list[str]:
        total, files = len(self.chosen), self.files
        head = f"references {self.asked} · {plural(total, 'use')} in {plural(files, 'file')}{showing(start, stop, total)} · stage: {stage}"
        return [head, *(f"note: {n}" for n in self.notes), *([more] if more else []), *body]

    def page_size(self, start: int, most: int) -> int:
        """The most uses from `start` whose one-line page fits, its "more" line included."""
        more = f"more: the next page with offset={len(self.chosen)} limit={len(self.chosen)}"

        def draw(n: int) -> list[str]:
            return self.render(start, start + n, STAGES[0], one_line(self.window(start, start + n)), more)

        return page_size(draw, most, self.budget, self.guess(start, most, more))

    def guess(self, start: int, most: int, more: str) -> int | None:
        """page_size's answer from the uses' line sizes added up, not drawn (checked by it).
        The uses are read in growing windows until their lines alone pass the budget, each
        window as large as the last one's sizes say will pass it (and a fifth more)."""
        n = min(most, GUESS_WINDOW)
        while True:
            sizes = prefix_sizes(self.window(start, start + n))
            if n == most or sizes[-1] > self.budget:
                break
            n = min(most, max(2 * n, self.budget * n * 6 // (5 * max(sizes[-1], 1))))

        def fits_page(n: int) -> bool:
            if n >= len(sizes):  # past the window, whose lines alone passed the budget
                return False
            return size(self.render(start, start + n, STAGES[0], [], more)) + 1 + sizes[n] <= self.budget

        return largest_fit(1, most, fits_page)

    def next_pages(self) -> tuple[dict | None, dict]:
        """(the page after this one, this page as one line per use)."""
        after = {"offset": self.end, "limit": self.page_size(self.end, len(self.chosen) - self.end)}
        return (after if self.end < len(self.chosen) else None), {
            "offset": self.offset,
            "limit": self.page_size(self.offset, self.end - self.offset),
        }

    def stages(self, after: dict | None, this: dict) -> list[Stage]:
        offset, end = self.offset, self.end
        bare = self.chosen[offset:end]  # as it stands: counts and the summary need no use read

        def full(page: list[Reference]) -> list[str]:
            more = f"more: the next page with offset={end} limit={after['limit']}" if after else None
            return self.render(offset, end, STAGES[0], one_line(page), more)

        def shortened(stage: str, body: list[str]) -> list[str]:
            more = f"more: one line per use with offset={offset} limit={this['limit']}"
            more += f"; after this page, offset={end}" if end < len(self.chosen) else ""
            return self.render(offset, end, stage, body, more)

        def cut_stage(page: list[Reference]) -> list[str] | None:
            def draw(width: int) -> list[str]:
                return shortened(STAGES[1].format(width=width), one_line(page, width))

            widest = max(len(r.text) for r in page)
            width = widest_cut(draw, widest, self.budget, width_guess(draw, page, widest, self.budget))
            return None if width is None else draw(width)

        def read(floor: Callable[[list[Reference]], list[str]], draw: Callable[[list[Reference]], list[str] | None], each: int) -> Stage:  # fmt: skip
            """A stage drawn from the page read, unless its drawing with the uses not read
            yet drawn bare (`floor`: no wider a cut than any this stage makes) passes the
            budget: read, it would pass it too. Before that drawing, a sum: each use draws at
            least its line number, role and `each` characters more."""

            def stage() -> list[str] | None:
                if any(r.origin is not None for r in bare):
                    least = sum(len(str(r.line)) + len(r.role) + each for r in bare)
                    if least > self.budget or not fits(floor(bare), self.budget):
                        return None
                return draw(self.window(offset, end))

            return stage

        return [
            read(full, full, len(" : \n")),
            read(
                lambda page: shortened(STAGES[1].format(width=MIN_WIDTH), one_line(page, MIN_WIDTH)),
                cut_stage,
                len(" : \n"),
            ),
            read(
                lambda page: shortened(STAGES[2], numbers(page)),
                lambda page: shortened(STAGES[2], numbers(page)),
                len(" "),  # "12 call" (then ", " or the line's end)
            ),
            lambda: shortened(STAGES[3], counts(bare)),
            lambda: shortened(STAGES[4], summary(bare)),
        ]


def widths_at(texts: list[str]):
    """width -> sum(text_width(t, width) for t in texts), each asked in log time."""
    return sizes_at([len(t) for t in texts], [len(plain(t)) for t in texts])


def width_guess(draw, page: list[Reference], widest: int, budget: int) -> int | None:
    """widest_cut's answer from one drawing: a width changes only the uses' texts and the
    digits of the stage's name, so the others' size is what that drawing leaves (checked by it)."""
    if widest <= MIN_WIDTH:
        return None
    top, drawn = widest - 1, [r.text for _, chosen in sections(page) for r in chosen]
    widths = widths_at(drawn)
    rest = size(draw(top)) - widths(top) - len(str(top))

    def fits_width(n: int) -> bool:
        width = MIN_WIDTH + n - 1
        return n == 0 or rest + len(str(width)) + widths(width) <= budget

    n = largest_fit(0, widest - MIN_WIDTH, fits_width)
    return MIN_WIDTH + n - 1 if n else MIN_WIDTH - 1


def asked_at(arguments: dict) -> tuple[str, int, int] | None:
    """(path, line, column) of a call from a use; None for one by name."""
    path, line, column = arguments.get("path"), arguments.get("line"), arguments.get("column", 1)
    if arguments.get("name") is not None or not isinstance(path, str) or not isinstance(line, int):
        return None
    return path, line, column if isinstance(column, int) else 1


def asks_first(ctx: Context, arguments: dict) -> list[tuple[Settings, str, tuple]]:
    """From a use, the call asks the server first for the references at its name (starts_of),
    whatever else it does: that question, where a source answers it at once."""
    if (asked := asked_at(arguments)) is None:
        return []
    source = semantic(ctx, arguments.get("precision"))
    at = use_at(ctx.workspace, *asked)
    if source.settings.precision == "syntax" or not source.at_once(at.path):
        return []
    return [(source.settings, "locations", ("references", *starts_of(ctx, at, [])[0]))]


def stays(ctx: Context, arguments: dict) -> bool:
    """From a use, beside a server whose last answer came within QUICK_SERVER: the call is
    mostly that server's answer (the by-name search after it has what is left of ANSWER_WITHIN
    its time, if it runs at all), and a worker's hops there and back (about 1.5 ms) would be
    a third of it. Such a call runs in the serving process."""
    asked = asked_at(arguments)
    return asked is not None and quick_here(
        ctx, ctx.workspace.named_text(asked[0])[0], arguments.get("precision")
    )


@tool("references", "Find references", SUMMARY, SCHEMA, asks_first=asks_first, stays=stays)
def references(
    ctx: Context,
    *,
    name: str | None = None,
    path: str | None = None,
    line: int | None = None,
    column: int = 1,
    roles: list[str] | None = None,
    paths: list[str] | None = None,
    offset: int = 0,
    limit: int | None = None,
    precision: str | None = None,
    max_chars: int,
) -> dict:
    identifier, owner, target, asked, at = asked_for(ctx, name, path, line, column)
    collected, typed = typed_uses(ctx, identifier, owner, target, paths, at, precision)
    found = collected.refs
    chosen = [r for r in found if roles is None or r.role in roles]
    end = page_end(offset, limit, len(chosen), "use")
    notes = notes_of(identifier, collected, roles, len(found) - len(chosen))
    notes[:1] = provenance(typed, chosen, cut=collected.cut is not None)
    if collected.cut is not None:
        notes.insert(
            1,
            f"left out: the by-name candidates, not matched within {seconds(collected.cut)} "
            f"(the answer keeps within {ANSWER_WITHIN:g} times the server's time); precision=syntax lists every use by name",
        )
    if collected.local and not typed.answered:
        notes[:1] = [f"{collected.local}: its uses in its scope, as the syntax binds them (exact, no search)"]
    uses = Uses(asked, chosen, notes, offset, end, max_chars, ctx.workspace)
    page = page_of(uses) if chosen else None
    fields = {
        "name": identifier,
        "total": len(chosen),
        "files": len({r.path for r in chosen}),
        "by_role": dict(Counter(r.role for r in chosen)),
        "by_source": dict(Counter(r.source for r in chosen)),
        "references": [
            {
                "path": r.path,
                "line": r.line,
                "column": r.column,
                "role": r.role,
                "symbol": r.symbol,
                "match": r.match,
                "source": r.source,
            }
            for r in uses.window(offset, min(end, offset + 500))
        ],
        **typed.fields(),
    }
    if at is not None and collected.since is not None and typed.answered:
        after_took(ctx, at, collected.since)
    if page is None:
        text = f"references {asked} · no uses found" + "".join(f"\nnote: {n}" for n in notes)
        return {"text": text, "stage": STAGES[0], "next": None, **fields}
    return {**page, **fields}


def page_of(uses: Uses) -> dict:
    """The budgeted page: the first stage that fits, and where the next page starts (apart,
    so that the precision bench can time the rendering on its own)."""
    after, this = uses.next_pages()
    try:
        index, lines = first_stage(uses.stages(after, this), uses.budget)
    except Refusal:  # none fits: the least budget said is the one of the page read
        uses.window(uses.offset, uses.end)
        index, lines = first_stage(uses.stages(after, this), uses.budget)
    stage = lines[0].rsplit("stage: ", 1)[1]
    return {"text": "\n".join(lines), "stage": stage, "next": after if index == 0 else this}
