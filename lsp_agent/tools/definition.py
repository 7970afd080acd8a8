"""definition: from a use (path, line, column) or a name, the definition(s) of that name.

From a use, the file's own definitions come first, then its imports where the syntax shows
them (Python from-imports and relative imports, JS/TS `import … from './x'`, Go
package-qualified names, Rust `use`), followed through re-exports; else every definition of
the name in the workspace, ranked: same file, same folder, nearest folders. Matching is by
name, not by type: `obj.save()` may mean any `save`, and the answer says when it guessed.
"""

from __future__ import annotations

import os
import re
import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from pathlib import Path
from weakref import WeakKeyDictionary

from ..budget import largest_fit, plural, size
from ..errors import Refusal
from ..paging import page
from ..search import Query, run_search, targets_of
from ..syntax import language_for, name_path_matcher, outline, walk
from ..syntax.imports import imported
from ..syntax.index import NO_HEAD, NameBlock, SymbolIndex, outlined
from ..syntax.outline import KINDS, TYPE_KINDS, Symbol, last_segment
from ..syntax.position import UseAt, use_at
from ..syntax.receivers import BUILTIN, IMPORTED, INSTANCE, SUPER, Receiver
from ..syntax.records import Entry, FileRecord
from ..syntax.references import (
    MEMBER_KINDS,
    RECEIVER_LANGUAGES,
    Signature,
    classify,
    family,
    header_lines,
    local_at,
    signature,
)
from ..workspace import Text, Workspace
from .precise import BY_NAME, PRECISION, Confirmed, confirmed, source_notes
from .registry import MAX_CHARS, POSITION, Context, tool

MAX_HOPS = 4  # re-exports followed from one import
MAX_CLASSES = 12  # classes looked through for a receiver's member (the class, its bases, theirs)
LOCAL_SCOPES = frozenset({"function", "method", "constructor"})
SIGNATURES_KEPT = 4096  # definitions whose signature lines are kept (a listing shows up to hundreds)
DOC_LINES = 8  # of the symbol's documentation (a SCIP index's hover text) in the answer

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {
            "type": "string",
            "minLength": 1,
            "description": "A name or name path (`get_object_or_404`, `Model/full_clean`), when there is no use to start from.",
        },
        **POSITION,
        "body": {
            "type": "boolean",
            "default": True,
            "description": "Show the definition's lines (paged like read); false: its signature only.",
        },
        "precision": PRECISION,
        "max_chars": MAX_CHARS,
    },
    "additionalProperties": False,
}

SUMMARY = (
    "Go to the definition of a name from a use (path, line, column) or by name: the language's server "
    "where one runs (by type), else through the file's imports, else by name ranked by nearness, marked "
    "as guesses. Answers the definition's lines (paged like read) or each candidate's signature. Use it to go from a "
    "name you are reading to what it names; find_symbol finds a definition you know the name of."
)


class Found:
    """A definition found: its file, the file's text and the outline's symbol."""

    def __init__(self, path: Path, text: Text, symbol: Symbol):
        self.path = path
        self._text, self._symbol = text, symbol

    @property
    def text(self) -> Text:
        return self._text

    @property
    def symbol(self) -> Symbol:
        return self._symbol

    @property
    def definition(self) -> Symbol | Entry:
        """What listing and ranking it needs: its name, kind, name path and lines."""
        return self.symbol

    def key(self) -> tuple:
        """What its signature depends on: the file, its text's version, where and what it is."""
        return self.path, self.text.version, self.symbol.start_line, self.symbol.name_path

    def is_local(self) -> bool:
        """Defined inside a function: not reachable from another file."""
        parent = self.symbol.name_path.rpartition("/")[0]
        return bool(parent) and any(
            s.name_path == parent and s.kind in LOCAL_SCOPES for s in walk(outline(self.path, self.text))
        )


class Indexed(Found):
    """A definition from the index, its entry and its file's record: the text is read and the
    outline's symbol made (what a signature or the body needs) when first asked for, since
    a listing shows a few of hundreds."""

    def __init__(self, ws: Workspace, path: Path, record: FileRecord, entry: Entry, row: int):
        self.path, self.record, self.entry, self.row = path, record, entry, row
        self._ws = ws
        self._read: Text | None = None
        self._outlined: Symbol | None = None

    @property
    def text(self) -> Text:
        if self._read is None:
            self._read = self._ws.text(self.path)
        return self._read

    @property
    def symbol(self) -> Symbol:
        if self._outlined is None:
            self._outlined = outlined(self.path, self.text, self.entry) or stand_in(self.entry)
        return self._outlined

    @property
    def definition(self) -> Symbol | Entry:
        return self.entry

    def key(self) -> tuple:  # the record is current: its version is the text's, unread
        return self.path, self.record.version, self.entry.start_line, self.entry.name_path

    def is_local(self) -> bool:
        """As Found.is_local, from the record's entries: the parent's kind without a parse."""
        parent, record = self.entry.container, self.record
        if not parent:
            return False
        containers, names = record.containers.split("\n"), record.names.split("\n")
        if "/" in record.names:  # a name holds "/": the parent's row may not be named its last segment
            rows: Iterable[int] = range(len(names))
        else:  # the rows named as the parent's last segment, found by list.index (in C)
            rows = same_items(names, parent.rpartition("/")[2])
        return any(
            KINDS[record.kinds[i]] in LOCAL_SCOPES
            and (f"{containers[i]}/{names[i]}" if containers[i] else names[i]) == parent
            for i in rows
        )


def same_items(items: list[str], item: str) -> Iterator[int]:
    """The indexes of `item` in `items`."""
    i = -1
    while True:
        try:
            i = items.index(item, i + 1)
        except ValueError:
            return
        yield i


def stand_in(entry: Entry) -> Symbol:
    """A symbol for an entry its file's outline lacks (the file changed since it was
    indexed): its columns those of the entry."""
    return Symbol(
        entry.kind,
        entry.name,
        entry.name_path,
        entry.start_line,
        entry.end_line,
        entry.range,
        entry.selection,
    )


def defined_in(path: Path, text: Text, name: str) -> list[Found]:
    """Definitions named `name` in a file, top-level ones first."""
    found = [s for s in walk(outline(path, text)) if s.name == name]
    found.sort(key=lambda s: s.name_path.count("/"))
    return [Found(path, text, s) for s in found]


def through_imports(ws: Workspace, path: Path, text: Text, name: str, qualifier: str | None):
    """(definitions, the import statements followed) for a name imported into `path`."""
    chain: list[str] = []
    for _ in range(MAX_HOPS):
        source = imported(ws, path, text, name, qualifier)
        if source is None:
            return [], chain
        chain.append(source.statement)
        for file in source.files:
            try:
                file_text = ws.text(file.resolve())
            except Refusal:
                continue
            if found := defined_in(file.resolve(), file_text, source.name):
                return found, chain
        if not source.files:
            return [], chain
        # not defined there: a re-export, followed from the first file
        path, name, qualifier = source.files[0].resolve(), source.name, None
        try:
            text = ws.text(path)
        except Refusal:
            return [], chain
    return [], chain


def workspace_definitions(ctx: Context, name: str, owner: str | None = None) -> list[Found]:
    """Every definition named `name` (inside `owner` when given) in the workspace: from the
    symbol index once built, else ripgrep picks the files holding the word and their
    outlines say which define it."""
    ws = ctx.workspace
    if ctx.index is not None and ctx.index.ready.is_set():
        return indexed_definitions(ctx, ctx.index, f"{owner}/{name}" if owner else name)
    targets, _ = targets_of(ws, None)
    pattern = rf"\b{re.escape(name)}\b" if re.fullmatch(r"\w+", name) else re.escape(name)
    outcome = run_search(ws, Query(pattern), targets, cancelled=ctx.cancel_event.is_set)
    matches = name_path_matcher(f"{owner}/{name}" if owner else name)
    found = []
    for file in outcome.files:
        if language_for(file.path) is None:
            continue
        ctx.check_cancelled()
        try:
            text = ws.text(file.path)
        except Refusal:
            continue
        found += [
            Found(file.path, text, s)
            for s in walk(outline(file.path, text))
            if s.name == name and matches(s.name_path)
        ]
    return found


def named(index: SymbolIndex, name_path: str, roots: list[Path]) -> list[tuple[Path, FileRecord, int, Entry]]:
    """What index.find(name_path) finds under `roots` (in another order: by file, then by
    line), with each entry's row in its record: the lines of the index's name blocks that
    hold the last segment, found by str.find (a few milliseconds over a monorepo's 9 MB of
    names, where a table of them took half a second to make on the first call)."""
    matches, last = name_path_matcher(name_path), last_segment(name_path)
    under = tuple(str(root).rstrip(os.sep) + os.sep for root in roots)
    found = []
    for block in index.names():
        split: dict[int, tuple[list[str], list[str]]] = {}
        for n, row in rows_named(block, last):
            path, record = block.files[n]
            if not str(path).startswith(under):
                continue
            if n not in split:
                split[n] = record.names.split("\n"), record.containers.split("\n")
            entry = record.entry(row, *split[n])
            if matches(entry.name_path):
                found.append((path, record, row, entry))
    return found


ROWS_KEPT = 64  # names whose rows each name block keeps (a name asked again is a look-up)
_ROWS: WeakKeyDictionary[NameBlock, OrderedDict[str, list[tuple[int, int]]]] = WeakKeyDictionary()
_ROWS_LOCK = threading.Lock()


def rows_named(block: NameBlock, last: str) -> list[tuple[int, int]]:
    """(file, row) in the block of each name whose last segment (after any "/") is `last`,
    in order; kept for the block's last ROWS_KEPT names (a block never changes: one whose
    files' names changed is a new one)."""
    with _ROWS_LOCK:
        kept = _ROWS.setdefault(block, OrderedDict())
        if (rows := kept.get(last)) is not None:
            kept.move_to_end(last)
            return rows
    rows = find_rows(block, last)
    with _ROWS_LOCK:
        kept[last] = rows
        while len(kept) > ROWS_KEPT:
            kept.popitem(last=False)
    return rows


def find_rows(block: NameBlock, last: str) -> list[tuple[int, int]]:
    """rows_named, found: the block's text is a newline, then each file's names one a line."""
    if not last or "\n" in last:
        return []
    text, starts = block.text, block.starts
    lines = []  # where each such line starts
    for before in ("\n", "/") if "/" in text else ("\n",):
        needle = f"{before}{last}\n"
        at = text.find(needle)
        while at >= 0:
            lines.append(at + 1 if before == "\n" else text.rfind("\n", 0, at) + 1)
            at = text.find(needle, at + len(needle) - 1)
        if text.endswith(needle[:-1]):  # the last line has no newline after it
            end = len(text) - len(last)
            lines.append(end if before == "\n" else text.rfind("\n", 0, end) + 1)
    found = []
    n, position, row = -1, 0, 0
    for start in sorted(lines):
        if start >= starts[n + 1]:  # a later file
            n = bisect_right(starts, start) - 1
            position, row = starts[n], 0
        row += text.count("\n", position, start)
        position = start
        found.append((n, row))
    return found


def indexed_definitions(ctx: Context, index: SymbolIndex, name_path: str) -> list[Found]:
    """The definitions `name_path` names, from the index's tables, no file read (records
    found stale are made again first, as find_symbol does)."""
    ws = ctx.workspace
    hits = named(index, name_path, ws.roots)
    records = {path: record for path, record, _, _ in hits}
    if stale := [path for path, record in records.items() if index.current(path) is not record]:
        for path in stale:
            index.update(path)
        hits = named(index, name_path, ws.roots)
    return [Indexed(ws, path, record, entry, row) for path, record, row, entry in hits]


def nearness(origin: Path | None) -> Callable[[Found], tuple]:
    """A sort key: same file, then same folder, then the fewest folders apart; top-level
    before nested."""
    folders = origin.parent.parts if origin is not None else ()

    def key(found: Found) -> tuple:
        depth = found.definition.name_path.count("/")
        tests = "test" in str(found.path).lower()
        if origin is None:
            return (tests, depth, len(found.path.parts), str(found.path))
        if found.path == origin:
            return (0, 0, depth, found.definition.start_line)
        theirs = found.path.parts[:-1]
        common = next(
            (n for n, (a, b) in enumerate(zip(folders, theirs, strict=False)) if a != b),
            min(len(folders), len(theirs)),
        )
        return (1, len(folders) - common + len(theirs) - common, tests, depth, str(found.path))

    return key


def location(display: Callable[[Path], str], f: Found) -> str:
    s = f.definition
    lines = str(s.start_line) if s.start_line == s.end_line else f"{s.start_line}-{s.end_line}"
    return f"{display(f.path)}:{lines}  {s.kind} {s.name_path}"


class Signatures:
    """The signature lines of the definitions listed lately, by (path, version of the text,
    first line, name path): each takes a read of its file (a parse where its record keeps
    no header end and doc line), and a listing shows up to hundreds."""

    def __init__(self, size: int = SIGNATURES_KEPT):
        self.size = size
        self._lines: OrderedDict[tuple, list[str]] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, f: Found) -> list[str]:
        key = f.key()
        with self._lock:
            if (kept := self._lines.get(key)) is not None:
                self._lines.move_to_end(key)
                return kept
        try:
            sig = recorded_signature(f) or signature(f.path, f.text, f.symbol)
        except Refusal:  # an indexed file unreadable since it was indexed: its location alone
            return []
        lines = [f"  {sig.one_line()}"] + ([f"  # {sig.doc}"] if sig.doc else [])
        with self._lock:
            self._lines[key] = lines
            while len(self._lines) > self.size:
                self._lines.popitem(last=False)
        return lines


SIGNATURES = Signatures()


def recorded_signature(f: Found) -> Signature | None:
    """The signature a parse would give (its bases left out), from the record's header end
    and doc line of the definition and the text's lines: no parse. None when the record
    keeps neither or was made from another text."""
    if not isinstance(f, Indexed) or not f.record.heads or f.text.version != f.record.version:
        return None
    head = f.record.heads[2 * f.row], f.record.heads[2 * f.row + 1]
    lines = header_lines(f.text, f.entry.start_line, None if head == NO_HEAD else head)
    return Signature(lines, f.record.doc(f.row), [])


def signature_lines(f: Found) -> list[str]:
    return SIGNATURES.of(f)


def from_use(ctx: Context, path: str, line: int, column: int) -> tuple[str, str, list[Found], str, bool]:
    """(identifier, as asked, the definitions found, how, whether it is a guess)."""
    at = use_at(ctx.workspace, path, line, column)
    found, how, guess = found_from_use(ctx, at)
    return at.name, f"{at.name} (from {ctx.workspace.display(at.path)}:{line})", found, how, guess


def found_from_use(ctx: Context, at: UseAt) -> tuple[list[Found], str, bool]:
    """(definitions, how they were found, whether it is a guess) of the name at a use: the
    definition itself, the file's imports, the receiver's class where the syntax shows it
    (its bases for `super()`), else by name — members only for `obj.x`, no members for a
    bare name in a receiver language — ranked by nearness."""
    ws = ctx.workspace
    uses = [u for u in classify(at.path, at.text, at.name, [at.line]) if u.column == at.column + 1]
    use = uses[0] if uses else None
    if use is not None and use.role == "definition":
        itself = [f for f in defined_in(at.path, at.text, at.name) if f.symbol.selection[0] == at.line - 1]
        if itself:
            return itself, "the definition itself", False
    receiver = use.receiver if use is not None else None
    if receiver is None and at.qualifier is None and (local := local_definition(at)) is not None:
        return local
    bare = receiver is None and at.qualifier is None and language_for(at.path) in RECEIVER_LANGUAGES
    chain: list[str] = []
    if receiver is None or receiver.how == IMPORTED:
        own = [f for f in defined_in(at.path, at.text, at.name) if not (bare and is_member(f))]
        if at.qualifier is None and own:
            return own, "defined in the same file", False
        found, chain = through_imports(ws, at.path, at.text, at.name, at.qualifier)
        if found:
            return found, "through " + " → ".join(f"`{c}`" for c in chain), False
    if receiver is not None and receiver.how == BUILTIN:
        return [], f"`{at.name}` of a builtin {receiver.name}, which the workspace does not define", False
    if receiver is not None and receiver.how in (INSTANCE, SUPER):  # the file's own classes first: no search
        found = in_hierarchy(ws, at, defined_in(at.path, at.text, at.name), receiver)
        if found is not None:
            return found
    here = family(language_for(at.path))
    everywhere = [f for f in workspace_definitions(ctx, at.name) if family(language_for(f.path)) == here]
    everywhere.sort(key=nearness(at.path))
    if receiver is not None and receiver.how in (INSTANCE, SUPER):
        found = in_hierarchy(ws, at, everywhere, receiver)
        if found is not None:
            return found
    everywhere = [f for f in everywhere if f.path == at.path or not f.is_local()]
    pool = everywhere
    if bare:
        pool = [f for f in everywhere if not is_member(f)]
        how = "by name: a bare name, so no methods"
    elif receiver is not None and receiver.how != IMPORTED:
        skip = receiver.name if receiver.how == SUPER else None
        pool = [f for f in everywhere if is_member(f) and owner_name(f) != skip]
        how = "by name: a member (`obj.x`), so no top-level functions"
    else:
        how = "by name"
    if chain:
        how = f"`{chain[-1]}` names no file in the workspace; " + how
    return pool, how + ", ranked by nearness (same file, same folder, nearest folders)", True


def local_definition(at: UseAt) -> tuple[list[Found], str, bool] | None:
    """A bare Python name's parameter or local of the functions around it, as from_use answers."""
    local = local_at(at.path, at.text, at.line, at.column)
    if local is None:
        return None
    where = f"{'a parameter' if local.kind == 'parameter' else 'a local'} of {local.function}"
    named = [f for f in defined_in(at.path, at.text, at.name) if f.symbol.selection == local.range]
    if named:  # a nested def or class: its own symbol
        return named, f"{where}, line {named[0].symbol.start_line}", False
    kind = "parameter" if local.kind == "parameter" else "variable"
    rows = local.range[0] + 1, local.range[2] + 1
    symbol = Symbol(kind, at.name, f"{local.function}/{at.name}", *rows, local.range, local.range)
    return [Found(at.path, at.text, symbol)], f"{where}, line {rows[0]}", False


def in_hierarchy(ws: Workspace, at: UseAt, everywhere: list[Found], receiver: Receiver):
    """(the member, how) of the receiver's class or the nearest of its bases that defines the
    name, each class found in its file, through that file's imports or by name; None if none."""
    start = [receiver.name] if receiver.how == INSTANCE else list(receiver.bases)
    queue = [(at.path, at.text, cls) for cls in start]
    seen: set[tuple[Path, str]] = set()
    while queue and len(seen) < MAX_CLASSES:
        path, text, cls = queue.pop(0)
        if (path, cls) in seen:
            continue
        seen.add((path, cls))
        classes = [f for f in defined_in(path, text, cls) if f.symbol.kind in TYPE_KINDS]
        classes = classes or [
            f for f in through_imports(ws, path, text, cls, None)[0] if f.symbol.kind in TYPE_KINDS
        ]
        members = [f for f in everywhere if is_member(f) and owner_name(f) == cls]
        if not classes and receiver.how == INSTANCE and cls == receiver.name:
            queue += [(at.path, at.text, base) for base in receiver.bases]
        for c in classes[:1]:
            members = [
                f
                for f in everywhere
                if f.path == c.path and f.definition.name_path == f"{c.symbol.name_path}/{at.name}"
            ]
            queue += [(c.path, c.text, base) for base in signature(c.path, c.text, c.symbol).bases]
        if members:
            whose = (
                "the receiver's class"
                if cls == receiver.name and receiver.how == INSTANCE
                else f"a base of {receiver.name}"
            )
            return members, f"a member of {cls}, {whose} by the syntax", False
    return None


def is_member(f: Found) -> bool:
    return f.definition.kind in MEMBER_KINDS


def owner_name(f: Found) -> str | None:
    parts = f.definition.name_path.split("/")
    return parts[-2] if len(parts) > 1 else None


def symbol_at(ws: Workspace, path: Path, line: int, name: str) -> Found:
    """The outline symbol a server's location names, or a one-line stand-in for what the
    outline has no symbol for (an assignment, a parameter)."""
    text = ws.text(path)
    symbols = [s for s in walk(outline(path, text)) if s.selection[0] == line - 1]
    named = [s for s in symbols if s.name == name] or symbols
    if named:
        return Found(path, text, named[0])
    start = (line - 1, 0, line - 1, len(text.line(line).encode("utf-8")))
    return Found(path, text, Symbol("variable", name, name, line, line, start, start))


def typed_definition(ctx: Context, at: UseAt, precision: str | None) -> tuple[list[Found], str, Confirmed]:
    """(the server's definitions in the workspace, how it was found, its answer)."""
    typed = confirmed(ctx, "definition", [(at.path, at.line, at.column + 1)], precision)
    if not typed.answered:
        return [], "", typed
    found = [symbol_at(ctx.workspace, loc.path, loc.line, at.name) for loc in typed.locations]
    return found, f"by type, from {typed.server}", typed


def typed_from_use(ctx: Context, path: str, line: int, column: int, precision: str | None):
    """from_use with the server first: (identifier, as asked, definitions, how, whether it is a
    guess, its answer). The syntax source answers only when the server found nothing, inside the
    workspace or out."""
    at = use_at(ctx.workspace, path, line, column)
    found, how, typed = typed_definition(ctx, at, precision)
    if found or typed.dropped:
        return at.name, f"{at.name} (from {ctx.workspace.display(at.path)}:{line})", found, how, False, typed
    identifier, asked, found, how, guess = from_use(ctx, path, line, column)
    if typed.answered:
        how = f"{typed.server} found no definition; {how}"
    return identifier, asked, found, how, guess, typed


def from_name(ctx: Context, name: str) -> tuple[str, str, list[Found], str, bool]:
    identifier, _, owner_part = name.strip("/").replace(".", "/").rpartition("/")[::-1]
    found = workspace_definitions(ctx, identifier, owner_part or None)
    found.sort(key=nearness(None))
    return identifier, name, found, "by name (top-level and non-test definitions first)", True


def documentation_lines(documentation: list[str], budget: int) -> tuple[str, ...]:
    """The symbol's documentation as `doc:` lines (code fences left out): at most DOC_LINES
    lines and a fifth of the budget, the last saying how many more the answer's
    semantic.documentation holds; none under a budget of 1,000."""
    lines = [
        line for d in documentation for line in d.splitlines() if line.strip() and not line.startswith("```")
    ]
    room, shown = budget // 5, list[str]()
    for line in lines[:DOC_LINES]:
        entry = f"doc: {line[:200]}"
        if budget < 1000 or size([*shown, entry, "doc: [99 more lines]"]) > room:
            break
        shown.append(entry)
    if shown and len(shown) < len(lines):
        shown.append(f"doc: [{len(lines) - len(shown)} more lines in semantic.documentation]")
    return tuple(shown)


def body_stage(
    display: Callable[[Path], str],
    head: str,
    best: Found,
    others: list[Found],
    budget: int,
    notes: tuple[str, ...] = (),
) -> dict | None:
    """The one definition's lines, paged like read (None when they do not fit); notes that
    are `doc:` lines are shown as they are."""
    s = best.definition
    head = "\n".join([head, *(n if n.startswith("doc: ") else f"note: {n}" for n in notes)])
    answer = page(
        best.text, display(best.path), start=s.start_line, max_chars=max(budget - len(head) - 1, 200),
        first=s.start_line, last=s.end_line, part=f"{s.kind} {s.name_path}",
        notes=[f"also {location(display, f)}" for f in others[:3]], then=f" symbol=/{s.name_path}",
    )  # fmt: skip
    shown = "\n".join([head, answer["text"]])
    if len(shown) > budget:
        return None
    nxt = answer.get("next") and {
        "path": display(best.path),
        "symbol": "/" + s.name_path,
        **answer["next"],
    }
    return {"text": shown, "next": nxt or None, "stage": "body"}


def listing_stages(
    display: Callable[[Path], str], head: str, found: list[Found], budget: int, notes: tuple[str, ...] = ()
) -> dict:
    """Each candidate's location and signature, as many as fit; else locations alone."""
    shown = [n if n.startswith("doc: ") else f"note: {n}" for n in notes]
    lines = [head + " · stage: signatures", *shown]

    def more(n: int) -> list[str]:
        if n == len(found):
            return []
        return [
            f"[{len(found) - n} more not shown: narrow with a name path (Owner/name) or start from a use]"
        ]

    # The most candidates whose lines and the line saying how many more fit, counted up: each
    # candidate's signature takes a read of its file, and a budget holds a few of hundreds.
    chars, n = size(lines), 0
    for f in found:
        block = [location(display, f), *signature_lines(f)]
        chars += size(block) + 1
        if chars + sum(len(line) + 1 for line in more(n + 1)) > budget:
            break
        lines += block
        n += 1
    if n:
        return {"text": "\n".join(lines + more(n)), "next": None, "stage": "signatures"}
    locations = [head + " · stage: locations", *shown, *(location(display, f) for f in found)]
    top = 1 + len(shown)  # the head and its notes
    k = largest_fit(
        0, len(found), lambda k: k == 0 or size([*locations[: k + top], "[99999 more]"]) <= budget
    )
    if k == 0:
        raise Refusal("budget_too_small", f"max_chars={budget} is too small for this answer.")
    lines = locations[: k + top] + ([f"[{len(found) - k} more not shown]"] if k < len(found) else [])
    return {"text": "\n".join(lines), "next": None, "stage": "locations"}


@tool("definition", "Go to definition", SUMMARY, SCHEMA)
def definition(
    ctx: Context,
    *,
    name: str | None = None,
    path: str | None = None,
    line: int | None = None,
    column: int = 1,
    body: bool = True,
    precision: str | None = None,
    max_chars: int,
) -> dict:
    ws = ctx.workspace
    display = cache(ws.display)  # for this answer: a file holds several candidates
    typed = Confirmed(unavailable=BY_NAME)
    if path is not None and line is not None:
        identifier, asked, found, how, guess, typed = typed_from_use(ctx, path, line, column, precision)
    elif name is not None:
        identifier, asked, found, how, guess = from_name(ctx, name)
    else:
        raise Refusal("no_name", "Give path=, line= (and column=) of a use, or name=.")
    if guess and found:
        how += f" · a guess: {'the only definition by that name' if len(found) == 1 else f'{len(found)} definitions by that name'}"
    notes = tuple(source_notes(typed, "uses")) + documentation_lines(typed.documentation, max_chars)
    fields = {
        **typed.fields(),
        "source": typed.server if how.startswith("by type") else "syntax",
        "name": identifier,
        "guess": guess,
        "definitions": [
            {"path": display(f.path), "name_path": f.definition.name_path, "kind": f.definition.kind,
             "start_line": f.definition.start_line, "end_line": f.definition.end_line,
             "name_line": f.definition.selection[0] + 1}
            for f in found[:200]
        ],
    }  # fmt: skip
    if not found:
        where = "outside the workspace" if typed.dropped else "not found in the workspace"
        text = f"definition of {asked} · {where} ({how})"
        text += "".join(f"\n{n}" if n.startswith("doc: ") else f"\nnote: {n}" for n in notes)
        return {"text": text, "next": None, **fields}
    counted = "definition" if how.startswith("by type") else "candidate"
    head = f"definition of {asked} · {plural(len(found), counted)} · {how}"
    one = len(found) == 1 or not guess
    if (
        body
        and one
        and (answer := body_stage(display, head, found[0], found[1:], max_chars, notes)) is not None
    ):
        return answer | fields
    return listing_stages(display, head, found, max_chars, notes) | fields
