"""Outlines: the nested definitions of a file, and the innermost symbol around a line.

A language's query (grammars/<language>/, see languages.py) captures each definition as
`@definition.<kind>` with its `@name` (and optionally a `@scope`, such as a Go method's
receiver type, prefixed to the name path). Nesting comes from the ranges, so the queries
stay flat lists of "this node is a definition".
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from itertools import accumulate
from pathlib import Path

from ..workspace import Text
from .languages import GRAMMARS, grammar, language_for, query, query_source
from .parsing import MAX_PARSE_BYTES, PARSES, Parsed, parse_fresh

TYPE_CHECKING = False  # typing is imported by type checkers only: a one-shot command's milliseconds
if TYPE_CHECKING:
    from typing import Protocol

    import tree_sitter

OUTLINE_CACHE_SIZE = 4096  # files whose outline (not tree) is kept
# Definitions nested deeper than this are left out (their lines belong to the deepest symbol
# kept). Real code stays far below it; untrusted code nested thousands deep would otherwise
# overflow the recursion of every consumer (walks, JSON, the LSP serializer).
MAX_NESTING = 48

# Every kind a query may capture (`@definition.<kind>`), in a fixed order: the index stores
# a kind as its position here.
KINDS = (
    "class", "constant", "constructor", "enum", "function", "impl", "interface", "macro",
    "method", "module", "namespace", "object", "property", "record", "struct", "trait", "type",
    "variable",  # appended: the index's codes of the others stay
)  # fmt: skip
# A function directly inside one of these is a method.
TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "impl", "enum", "record", "object"})
# The capture suffix of a file-scoped namespace (`namespace App;` in C# and PHP): it holds
# everything up to the next such namespace or the end of the file.
FILE_NAMESPACE = "namespace.file"


@dataclass(slots=True)
class Symbol:
    """A definition in a file's outline."""

    kind: str  # class, function, method, interface, struct, enum, namespace, module, constant, …
    name: str
    name_path: str  # names from the outermost symbol down, joined by "/": "Message777/to_dict"
    start_line: int  # 1-based
    end_line: int  # 1-based, inclusive
    # 0-based (row, UTF-8 byte column) of the start and end, as tree-sitter reports them;
    # the LSP front door converts the columns to the negotiated position encoding.
    range: tuple[int, int, int, int]
    selection: tuple[int, int, int, int]  # the range of the name
    children: list[Symbol] = field(default_factory=list)
    # (the symbol of the text before an edit, rows added): made by moving that one down
    # or up, so a consumer may move what it made of it (the LSP front door: its JSON)
    shifted_from: tuple[Symbol, int] | None = field(default=None, compare=False, repr=False)

    def walk(self) -> Iterator[Symbol]:
        yield self
        for child in self.children:
            yield from child.walk()

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "name": self.name,
            "name_path": self.name_path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "children": [c.to_dict() for c in self.children],
        }


def walk(symbols: Iterable[Symbol]) -> Iterator[Symbol]:
    """Every symbol of an outline, parents before their children."""
    for symbol in symbols:
        yield from symbol.walk()


# Disjoint line ranges labelled with their innermost symbol, and where each starts (line_segments).
Segments = tuple[list[int], list[tuple[int, int, str | None]]]


@dataclass(slots=True)
class _Group:
    """A top-level definition with the definitions inside it (outer before inner), and the
    symbol made of them. The definitions' offsets are `byte_shift` and their rows `row_shift`
    short of where they are now: an edit before a group moves it without copying what it holds."""

    definitions: list[_Definition]
    symbol: Symbol
    byte_shift: int = 0
    row_shift: int = 0

    @property
    def start(self) -> int:
        return self.definitions[0].start + self.byte_shift

    @property
    def end(self) -> int:
        return self.definitions[0].end + self.byte_shift

    def placed(self) -> list[_Definition]:
        """The definitions where they are now."""
        if not self.byte_shift and not self.row_shift:
            return self.definitions
        return [_shifted(d, self.byte_shift, self.row_shift) for d in self.definitions]


@dataclass
class _Entry:
    """A file's outline as last made, kept to make the next version's from it."""

    version: str
    groups: list[_Group]  # what the symbols were made from, for the next version
    symbols: list[Symbol]  # the symbol of each group
    segments: Segments | None = None


class _Outlines:
    def __init__(self, size: int = OUTLINE_CACHE_SIZE):
        self.size = size
        self._entries: OrderedDict[Path, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.counts = {"fresh": 0, "updated": 0}  # outlines made whole, and from the one before

    def entry(self, path: Path, text: Text) -> _Entry:
        with self._lock:
            earlier = self._entries.get(path)
            if earlier is not None and earlier.version == text.version:
                self._entries.move_to_end(path)
                return earlier
        language = language_for(path)
        entry = _Entry(text.version, [], [])
        if language is not None and (parsed := PARSES.parse(path, text, language)) is not None:
            entry.groups = _groups(parsed, earlier)
            entry.symbols = [group.symbol for group in entry.groups]
        with self._lock:
            self._entries[path] = entry
            self._entries.move_to_end(path)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return entry


OUTLINES = _Outlines()


def outline(path: Path, text: Text) -> list[Symbol]:
    """The nested symbols of `text` (the content of `path`), cached by (path, version).
    Empty for languages without a grammar. Callers must not modify the result."""
    return OUTLINES.entry(path, text).symbols


def fresh_definitions(language: str, data: bytes) -> list[_Definition]:
    """The definitions of `data` (UTF-8) parsed afresh, without the caches (for files read once)."""
    if len(data) > MAX_PARSE_BYTES:
        return []
    return definitions(Parsed(language, "", data, parse_fresh(PARSES.parser(language), data)))


def enclosing_symbol(path: Path, text: Text, line: int) -> str | None:
    """The name path of the innermost symbol holding 1-based `line`, or None."""
    return enclosing_symbols(path, text, [line])[line]


def enclosing_symbols(path: Path, text: Text, lines: Iterable[int]) -> dict[int, str | None]:
    """enclosing_symbol for many lines of one file: one outline, then a binary search per line."""
    around = enclosing_lookup(path, text)
    return {line: around(line) for line in lines}


def enclosing_lookup(path: Path, text: Text) -> Callable[[int], str | None]:
    """enclosing_symbol of any line, as a function that holds the outline's line ranges but
    not the text (a caller may keep it while the file is unchanged)."""
    entry = OUTLINES.entry(path, text)
    if entry.segments is None:
        entry.segments = line_segments(entry.symbols)
    return segment_lookup(entry.segments)


@dataclass(frozen=True, slots=True)
class LineSymbols:
    """What labels a file's match lines, without its text: the innermost symbol around any
    line, and the symbol whose name is on each line (the last in the outline, where several are)."""

    around: Callable[[int], str | None]
    named_on: dict[int, str]


def line_symbols(path: Path, text: Text) -> LineSymbols:
    """The LineSymbols of `text` (the content of `path`) from its outline (the index makes the
    same from a record: FileRecord.line_symbols)."""
    named_on = {s.selection[0] + 1: s.name_path for s in walk(outline(path, text))}
    return LineSymbols(enclosing_lookup(path, text), named_on)


if TYPE_CHECKING:  # a protocol for type checkers: nothing checks it at run time

    class Span(Protocol):
        """What line segments need of a symbol: an outline's Symbol, or what a record holds."""

        @property
        def start_line(self) -> int: ...
        @property
        def end_line(self) -> int: ...
        @property
        def name_path(self) -> str: ...
        @property
        def children(self) -> Sequence[Span]: ...


def line_segments(symbols: Sequence[Span]) -> Segments:
    """Disjoint line ranges, each labelled with its innermost symbol (None: no symbol), in
    order, and where each starts. Where siblings share a line, the line goes to the first of them."""
    out: list[tuple[int, int, str | None]] = []

    def fill(children: Sequence[Span], lo: int, hi: int, label: str | None) -> None:
        cursor = lo
        for child in children:
            first, last = max(child.start_line, cursor), min(child.end_line, hi)
            if first > last:
                continue
            if cursor < first and label is not None:
                out.append((cursor, first - 1, label))
            fill(child.children, first, last, child.name_path)
            cursor = last + 1
        if cursor <= hi and label is not None:
            out.append((cursor, hi, label))

    fill(symbols, 1, 1 << 62, None)
    return [s[0] for s in out], out


def segment_lookup(found: Segments) -> Callable[[int], str | None]:
    """The label of any line: a binary search of the segments."""
    starts, labelled = found

    def around(line: int) -> str | None:
        i = bisect_right(starts, line) - 1
        return labelled[i][2] if i >= 0 and line <= labelled[i][1] else None

    return around


# --- building an outline from query matches -------------------------------------------


def _text(data: bytes, node: tree_sitter.Node) -> str:
    return " ".join(data[node.start_byte : node.end_byte].decode("utf-8", "replace").split())


def last_line(start_row: int, end: tuple[int, int]) -> int:
    """1-based last line of a range; a range ending at column 0 ends on the line before."""
    return end[0] if end[1] == 0 and end[0] > start_row else end[0] + 1


# C and C++ declarators hold a function's name under pointers, references and qualifiers.
FUNCTION_NAMES = frozenset({"identifier", "field_identifier", "destructor_name", "operator_name"})


def _function_name(node: tree_sitter.Node | None, data: bytes) -> tuple[tree_sitter.Node, str | None] | None:
    """(name node, scope) of a C/C++ declarator that declares a function, else None:
    `const T& ns::Widget::name()` gives (name, "ns/Widget")."""
    while node is not None and node.type in ("pointer_declarator", "reference_declarator"):
        node = node.child_by_field_name("declarator") or node.named_children[-1]
    if node is None or node.type != "function_declarator":
        return None  # a variable, a field, a function pointer
    node = node.child_by_field_name("declarator")
    scopes = []
    while node is not None and node.type == "qualified_identifier":
        scope = node.child_by_field_name("scope")
        if scope is not None:  # `::f` has none
            if scope.type == "template_type":  # Box<T>::get is a member of Box
                scope = scope.child_by_field_name("name") or scope
            scopes.append(_text(data, scope))
        node = node.child_by_field_name("name")
    if node is not None and node.type == "template_function":
        node = node.child_by_field_name("name")
    if node is None or node.type not in FUNCTION_NAMES:
        return None
    return node, "/".join(scopes) or None


@dataclass(slots=True)  # not frozen, which makes one 8 times slower (a cold index makes millions)
class _Definition:
    """One definition the query found, before nesting; never modified once made (an edit
    makes moved copies)."""

    start: int  # byte offsets: from its first leading decorator or attribute, to its end
    end: int
    kind: str
    name: str
    scope: str | None  # name path written before the name (a Go receiver, C++ qualifiers)
    start_point: tuple[int, int]
    end_point: tuple[int, int]
    selection: tuple[int, int, int, int]  # the points of the name
    rank: tuple[int, int]  # lower wins among captures of one name: widest, then first pattern


def _order(d: _Definition) -> tuple[int, int]:
    return d.start, -d.end  # outer before inner


def build(parsed: Parsed) -> list[Symbol]:
    """The outline of a parsed text: its query's definitions, nested by their ranges."""
    return _nest(definitions(parsed))


def definitions(parsed: Parsed) -> list[_Definition]:
    """The definitions of a parsed text, outer before inner."""
    found = sorted(_definitions(parsed), key=_order)
    if any(d.kind == FILE_NAMESPACE for d in found):
        found = sorted(_extend_file_namespaces(found, parsed.data), key=_order)
    return found


def _groups(parsed: Parsed, earlier: _Entry | None) -> list[_Group]:
    """The outline of a parsed text in top-level groups. After an incremental parse from
    the text `earlier` outlined, from its groups: only those the edit (or a change of syntax
    it made) reaches are queried again, those after it move, those before it stay."""
    if earlier is not None and parsed.change is not None and parsed.change.previous == earlier.version:
        updated = _update(parsed, earlier.groups)
        if updated is not None:
            OUTLINES.counts["updated"] += 1
            return updated
    OUTLINES.counts["fresh"] += 1
    return _grouped(definitions(parsed))


def _grouped(found: list[_Definition]) -> list[_Group]:
    return [_Group(group, _nest(group)[0]) for group in _top_level_groups(found)]


def _definitions(parsed: Parsed, within: tuple[int, int] | None = None) -> Iterable[_Definition]:
    """One definition per name: the widest capture of a name wins (a decorated definition
    over the bare one it wraps), then the earliest pattern (struct before plain type).
    With `within`, only those of the query's matches in that byte range (some may cross it)."""
    import tree_sitter

    compiled, own = _outline_query(parsed.language)
    cursor = tree_sitter.QueryCursor(compiled)
    if within is not None:
        cursor.set_byte_range(*within)
        matches = cursor.matches(parsed.tree.root_node)
    else:
        matches = _matches(parsed, cursor)
    around = _Around()
    for _, captures in matches:
        around.add(captures)
    found: dict[int, tuple[int, _Definition]] = {}  # by the start of the name
    for pattern, captures in matches:
        resolved = _definition(pattern, captures, parsed.data, around) if pattern < own else None
        if resolved is not None:
            name_start, definition = resolved
            old = found.get(name_start)
            if old is None or definition.rank < old[1].rank:
                found[name_start] = (name_start, definition)
    return (d for _, d in found.values())


class _Around:
    """What a definition needs of the nodes around it: its leading siblings (captured by the
    same query walk) and whether it is inside a function's body (from the function
    definitions' ranges). Asking tree-sitter for a node's parent or sibling walks down from
    the root, and a query pattern waiting for a block's child keeps a state per open block:
    per definition, either is quadratic in nested code."""

    def __init__(self) -> None:
        self.leading: dict[int, tree_sitter.Node] = {}  # a node's id -> the leading node before it
        self._bodies: list[tuple[int, int]] = []  # (start, end) bytes of function definitions
        self._starts: list[int] = []
        self._reach: list[int] = []  # the furthest end of the bodies starting up to each

    def add(self, captures: dict[str, list[tree_sitter.Node]]) -> None:
        if (before := captures.get("leading")) and (after := captures.get("next")):
            self.leading[after[0].id] = before[0]
        for node in captures.get("definition.function", ()):
            if node.type == "function_definition":
                self._bodies.append((node.start_byte, node.end_byte))

    def in_function(self, node: tree_sitter.Node) -> bool:
        if len(self._starts) != len(self._bodies):
            self._bodies.sort()
            self._starts = [start for start, _ in self._bodies]
            self._reach = list(accumulate((end for _, end in self._bodies), max))
        i = bisect_right(self._starts, node.start_byte) - 1
        return i >= 0 and self._reach[i] >= node.end_byte


@cache
def _outline_query(language: str) -> tuple[tree_sitter.Query, int]:
    """The definitions query with patterns for what _Around holds appended, and how many
    patterns are the definitions' own."""
    import tree_sitter

    source, own = query_source(language), query(language).pattern_count
    extra = [f"(({kind}) @leading . (_) @next)" for kind in sorted(GRAMMARS[language].leading)]
    if not extra:
        return query(language), own
    return tree_sitter.Query(grammar(language), "\n".join([source, *extra])), own


def _matches(parsed: Parsed, cursor: tree_sitter.QueryCursor) -> list:
    """The query's matches over the whole tree. For a language with opaque node types, the
    subtrees of those (unless they hold a syntax error, where anything can nest) are not
    visited, and the query runs at each node where one of its patterns can start: the same
    matches, without walking every expression of the file."""
    skipping = _skipping(parsed.language)
    if skipping is None:
        return cursor.matches(parsed.tree.root_node)
    starts, opaque = skipping
    cursor.set_max_start_depth(0)  # matches starting at the node queried
    found = []
    walker = parsed.tree.walk()
    while True:
        node = walker.node
        assert node is not None
        kind = node.type
        if kind in starts:
            found += cursor.matches(node)
        if (kind not in opaque or node.has_error) and walker.goto_first_child():
            continue
        while not walker.goto_next_sibling():
            if not walker.goto_parent():
                return found


@cache
def _skipping(language: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """(the node types where a pattern of the query starts, the opaque node types with
    supertypes expanded) of a language declaring opaque types; None for one that does not,
    or whose query has a pattern starting anywhere (a wildcard, an alternation, a group)."""
    if not GRAMMARS[language].opaque:
        return None
    source, compiled = query_source(language).encode(), query(language)
    starts = set()
    for n in range(compiled.pattern_count):
        head = re.match(rb"\((\w+)", source[compiled.start_byte_for_pattern(n) :])
        if head is None or head[1] == b"_":
            return None
        starts.add(head[1].decode())
    types, opaque = grammar(language), set()
    supertypes = set(types.supertypes)  # (node_kind_is_supertype answers True for any kind)
    pending = list(GRAMMARS[language].opaque)
    while pending:
        name = pending.pop()
        number = types.id_for_node_kind(name, True)
        if number in supertypes:
            pending += [types.node_kind_for_id(n) or "" for n in types.subtypes(number)]
        else:
            opaque.add(name)
    return frozenset(starts), frozenset(opaque)


def _definition(
    pattern: int, captures: dict[str, list[tree_sitter.Node]], data: bytes, around: _Around
) -> tuple[int, _Definition] | None:
    """The definition one query match captures (and where its name starts), or None when
    it is not one."""
    node = kind = None
    for capture, nodes in captures.items():
        if capture.startswith("definition."):
            node, kind = nodes[0], capture[len("definition.") :]
            break
    if node is None or kind is None:
        return None
    if declarators := captures.get("declarator"):
        if node.type == "declaration" and around.in_function(node):
            return None  # a prototype inside a function body is not a definition
        if (resolved := _function_name(declarators[0], data)) is None:
            return None
        name, scope = resolved
    elif names := captures.get("name"):
        name = names[0]
        scopes = captures.get("scope")
        scope = "/".join(_text(data, s) for s in scopes) if scopes else None
    else:
        return None
    first = node
    while (before := around.leading.get(first.id)) is not None:
        first = before
    return name.start_byte, _Definition(
        first.start_byte, node.end_byte, kind, _text(data, name), scope, _point(first.start_point),
        _point(node.end_point), (*name.start_point, *name.end_point), (first.start_byte - node.end_byte, pattern),
    )  # fmt: skip


def _point(point: tree_sitter.Point) -> tuple[int, int]:
    return point[0], point[1]


def _update(parsed: Parsed, old: list[_Group]) -> list[_Group] | None:
    """The groups after an edit, from those before it. A group strictly holding the edit and
    every range whose syntax changed is made again from inside (_renew); else the groups
    these touch (and, where definitions take in leading siblings, the next one) are queried
    again, from the end of the group before them to the start of the group after them. The
    groups after move by the edit, those before stay. None where that cannot hold: a
    definition found crosses the span queried (the edit changed what holds what), or a
    file-scoped namespace spans the file: query it all."""
    assert parsed.change is not None
    if any(d.kind == FILE_NAMESPACE for g in old for d in g.definitions[:1]):
        return None  # it spans what follows it, wherever the edit is: an edit past it grows it
    edit, changed = parsed.change.edit, parsed.change.changed
    start, old_end, new_end = edit["start_byte"], edit["old_end_byte"], edit["new_end_byte"]
    delta = new_end - old_end
    # the span touched, in the old text's offsets (a changed range inside the edit's new
    # text maps to the edit's old span)
    lo = min([start, *(a for a, _ in changed)])
    hi = max([old_end, *(b - delta for _, b in changed if b >= new_end)])
    first = bisect_left([g.end for g in old], lo)  # the first group ending at lo or after
    last = bisect_right([g.start for g in old], hi)  # the groups before it start at hi or before
    if last - first == 1 and (renewed := _renewed(parsed, old[first], (lo, hi))) is not None:
        return [*old[:first], renewed, *(_moved_group(g, edit, delta) for g in old[last:])]
    if GRAMMARS[parsed.language].leading:
        last = min(len(old), last + 1)  # an attribute typed before a group belongs to it
    before, after = old[:first], old[last:]
    span = (before[-1].end if before else 0, after[0].start + delta if after else len(parsed.data))
    inside = _definitions_within(parsed, span)
    if inside is None:
        return None
    return before + _grouped(inside) + [_moved_group(g, edit, delta) for g in after]


def _renewed(parsed: Parsed, group: _Group, touched: tuple[int, int]) -> _Group | None:
    """A group after an edit whose touched span (old offsets) it strictly holds, or None."""
    found = group.placed()
    if len(found) == 1 or not (found[0].start < touched[0] and touched[1] < found[0].end):
        return None
    renewed = _renew(parsed, found, group.symbol, [], touched)
    return None if renewed is None else _Group(*renewed)


def _renew(
    parsed: Parsed,
    found: list[_Definition],
    symbol: Symbol,
    chain: list[_Definition],
    touched: tuple[int, int],
) -> tuple[list[_Definition], Symbol] | None:
    """A definition (found[0], with those inside it; `symbol` made of them) strictly holding
    the touched span, after the edit, made as _update makes the top level: the child holding
    the span strictly made again from inside, or the children it touches queried again and
    those after moved; the children before and their symbols kept. `chain`: the definitions
    around it, moved by the edit. None where that cannot hold."""
    assert parsed.change is not None
    edit = parsed.change.edit
    delta = edit["new_end_byte"] - edit["old_end_byte"]
    top = found[0]
    kids = list(_top_level_groups(found[1:]))
    if len(kids) != len(symbol.children) or len(chain) + 1 >= MAX_NESTING:
        return None  # some were cut at MAX_NESTING
    moved_top = replace(top, end=top.end + delta, end_point=_moved_point(top.end_point, edit), rank=(top.rank[0] - delta, top.rank[1]))  # fmt: skip
    around = [*chain, moved_top]
    lo, hi = touched
    first = bisect_left([k[0].end for k in kids], lo)
    last = bisect_right([k[0].start for k in kids], hi)
    deeper = None
    if last - first == 1 and len(kids[first]) > 1 and kids[first][0].start < lo and hi < kids[first][0].end:
        deeper = _renew(parsed, kids[first], symbol.children[first], around, touched)
    if deeper is not None:
        middle, made = deeper[0], [deeper[1]]
    else:
        if GRAMMARS[parsed.language].leading:
            last = min(len(kids), last + 1)
        span = (kids[first - 1][0].end if first else top.start, kids[last][0].start + delta if last < len(kids) else moved_top.end)  # fmt: skip
        inside = _definitions_within(parsed, span, around)
        if inside is None:
            return None
        middle, made = inside, _nest_under(around, inside)
    after = _moved_kids(kids[last:], symbol.children[last:], around, edit)
    end = moved_top.end_point
    renewed = Symbol(
        symbol.kind, symbol.name, symbol.name_path, symbol.start_line, last_line(top.start_point[0], end),
        (*top.start_point, *end), symbol.selection, [*symbol.children[:first], *made, *after[1]],
    )  # fmt: skip
    return [moved_top, *(d for kid in kids[:first] for d in kid), *middle, *after[0]], renewed


def _moved_kids(
    kids: list[list[_Definition]], symbols: list[Symbol], around: list[_Definition], edit: dict
) -> tuple[list[_Definition], list[Symbol]]:
    """Children after an edit (inside `around`), where it puts them, and their symbols: the
    same or with rows shifted where they start on a later line than the edit's end."""
    delta = edit["new_end_byte"] - edit["old_end_byte"]
    (row, _), (new_row, _) = edit["old_end_point"], edit["new_end_point"]
    moved: list[_Definition] = []
    made: list[Symbol] = []
    for kid, symbol in zip(kids, symbols, strict=True):
        placed = [_moved(d, edit, delta) for d in kid]
        moved += placed
        if kid[0].start_point[0] > row:
            made.append(_shift_rows(symbol, new_row - row) if new_row != row else symbol)
        else:
            made += _nest_under(around, placed)
    return moved, made


def _nest_under(chain: list[_Definition], found: list[_Definition]) -> list[Symbol]:
    """The symbols of definitions inside the innermost of `chain` (each inside the one
    before), as _nest makes them there."""
    symbols = _nest(chain + found)
    for _ in chain:
        symbols = symbols[-1].children
    return symbols


def _definitions_within(
    parsed: Parsed, span: tuple[int, int], around: list[_Definition] | None = None
) -> list[_Definition] | None:
    """The definitions inside a span of a parsed text, outer before inner, leaving out those
    `around` it (each must be found again as it is there); None when one found crosses the
    span's bounds, or is a file-scoped namespace."""
    lo, hi = span
    around = around or []
    inside, again = [], 0
    for d in _definitions(parsed, span):
        if d.end <= lo or d.start >= hi:
            continue
        if d in around:
            again += 1
            continue
        if d.start < lo or d.end > hi or d.kind == FILE_NAMESPACE:
            return None
        if any(d.start == a.start or d.selection == a.selection for a in around):
            return None  # one around it changed
        inside.append(d)
    if again != len(around):
        return None
    return sorted(inside, key=_order)


def _moved_group(group: _Group, edit: dict, delta: int) -> _Group:
    """A group after an edit (it starts at or after its end), where the edit puts it: the
    same symbol when its points stay, its symbol's rows shifted when it starts on a later
    line than the edit's end, made again when it starts on that line (its columns move)."""
    (old_row, _), (new_row, _) = edit["old_end_point"], edit["new_end_point"]
    rows = new_row - old_row
    if group.definitions[0].start_point[0] + group.row_shift > old_row:
        if not rows:
            return _Group(group.definitions, group.symbol, group.byte_shift + delta, group.row_shift)
        return _Group(
            group.definitions,
            _shift_rows(group.symbol, rows),
            group.byte_shift + delta,
            group.row_shift + rows,
        )
    moved = [_moved(d, edit, delta) for d in group.placed()]
    return _Group(moved, _nest(moved)[0])


def _shift_rows(symbol: Symbol, rows: int) -> Symbol:
    (a, b, c, d), (e, f, g, h) = symbol.range, symbol.selection
    symbol.shifted_from = None  # one step back at most: a chain would hold every version
    return Symbol(
        symbol.kind, symbol.name, symbol.name_path, symbol.start_line + rows, symbol.end_line + rows,
        (a + rows, b, c + rows, d), (e + rows, f, g + rows, h), [_shift_rows(c, rows) for c in symbol.children],
        (symbol, rows),
    )  # fmt: skip


def _shifted(d: _Definition, delta: int, rows: int) -> _Definition:
    (a, b), (c, e), (f, g, h, i) = d.start_point, d.end_point, d.selection
    return _Definition(
        d.start + delta, d.end + delta, d.kind, d.name, d.scope, (a + rows, b), (c + rows, e),
        (f + rows, g, h + rows, i), d.rank,
    )  # fmt: skip


def _moved_point(point: tuple[int, ...], edit: dict) -> tuple[int, int]:
    """A point at or after the end of an edit, where the edit puts it."""
    (old_row, old_col), (new_row, new_col) = edit["old_end_point"], edit["new_end_point"]
    row, col = point
    if row == old_row:
        return new_row, new_col + col - old_col
    return row + new_row - old_row, col


def _moved(d: _Definition, edit: dict, delta: int) -> _Definition:
    """A definition after an edit, where the edit puts it."""
    if edit["old_end_point"][0] == edit["new_end_point"][0] < d.start_point[0]:  # points stay
        return _Definition(d.start + delta, d.end + delta, d.kind, d.name, d.scope, d.start_point, d.end_point, d.selection, d.rank)  # fmt: skip
    name = (*_moved_point(d.selection[:2], edit), *_moved_point(d.selection[2:], edit))
    return _Definition(
        d.start + delta, d.end + delta, d.kind, d.name, d.scope, _moved_point(d.start_point, edit),
        _moved_point(d.end_point, edit), name, d.rank,
    )  # fmt: skip


def _nest(definitions: list[_Definition]) -> list[Symbol]:
    """Symbols from definitions sorted outer before inner, each inside the nearest one
    whose range holds it."""
    roots: list[Symbol] = []
    made: list[Symbol] = []
    for d, kind, prefix, parent in nested(definitions):
        symbol = Symbol(
            kind=kind,
            name=d.name,
            name_path=prefix + d.name,
            start_line=d.start_point[0] + 1,
            end_line=last_line(d.start_point[0], d.end_point),
            range=(*d.start_point, *d.end_point),
            selection=d.selection,
        )
        (made[parent].children if parent >= 0 else roots).append(symbol)
        made.append(symbol)
    return roots


def nested(definitions: list[_Definition]) -> Iterator[tuple[_Definition, str, str, int]]:
    """The outline of definitions sorted outer before inner, without making its symbols:
    (definition, kind, prefix, parent) of each one kept, in order, where each is inside the
    nearest one whose range holds it (its parent, numbered from 0 in this order; -1: none)
    and its name path is the prefix (empty, or ending with "/") followed by its name."""
    # (end byte, number, kind, name path, start byte) of the open ancestors
    stack: list[tuple[int, int, str, str, int]] = []
    kept = 0
    for d in definitions:
        # one of the same range is a sibling: `var a, b int` defines two names in one spec
        while stack and (not d.end <= stack[-1][0] or (d.start, d.end) == (stack[-1][4], stack[-1][0])):
            stack.pop()
        if len(stack) >= MAX_NESTING:
            continue
        _, parent, parent_kind, parent_path, _ = stack[-1] if stack else (0, -1, "", None, 0)
        kind = d.kind
        if kind == FILE_NAMESPACE:
            kind = "namespace"
        elif kind == "function" and (d.scope or parent_kind in TYPE_KINDS):
            kind = "method"  # also a Go method (receiver) or a C++ member defined outside its class
        prefix = f"{parent_path}/" if parent_path is not None else ""
        if d.scope:
            prefix += f"{d.scope}/"
        yield d, kind, prefix, parent
        stack.append((d.end, kept, kind, prefix + d.name, d.start))
        kept += 1


def _top_level_groups(definitions: list[_Definition]) -> Iterator[list[_Definition]]:
    """Definitions (sorted outer before inner) in runs of a top-level one and those inside it."""
    group: list[_Definition] = []
    for d in definitions:
        if group and (d.end > group[0].end or (d.start, d.end) == (group[0].start, group[0].end)):
            yield group
            group = []
        group.append(d)
    if group:
        yield group


def _extend_file_namespaces(found: list[_Definition], data: bytes) -> list[_Definition]:
    """A file-scoped namespace statement covers what follows it, up to the next one."""
    marks = [i for i, d in enumerate(found) if d.kind == FILE_NAMESPACE]
    out = list(found)
    for n, i in enumerate(marks):
        end = found[marks[n + 1]].start if n + 1 < len(marks) else len(data)
        end = len(data[:end].rstrip())  # not the blank lines before the next namespace
        point = (data.count(b"\n", 0, end), end - (data.rfind(b"\n", 0, end) + 1))
        out[i] = replace(found[i], end=end, end_point=point)
    return out


# --- finding symbols by name path -------------------------------------------------------


def last_segment(pattern: str) -> str:
    """What the last name of every name path `pattern` matches ends with (or, with
    substring, contains): its part after the last "/", or after the last "." when it has no "/"."""
    body = pattern.strip("/")
    if "/" not in body and "." in body.strip("."):
        return body.split(".")[-1]
    return body.split("/")[-1]


def name_path_matcher(pattern: str, *, substring: bool = False):
    """A predicate on name paths for `pattern`:

    - `to_dict` matches any symbol named to_dict, `Message/to_dict` any to_dict directly in
      a Message (trailing segments), `/Message/to_dict` only the top-level Message's;
    - "." separates segments too when the pattern has no "/" (`Message.to_dict`), while a
      name that itself holds dots (a C# namespace `Shop.Billing`) still matches whole;
    - with `substring`, the last segment only needs to contain the pattern's last segment,
      ignoring case.
    """
    absolute = pattern.startswith("/")
    body = pattern.strip("/")
    choices = [body.split("/")]
    if "/" not in body and "." in body.strip("."):
        choices.append(body.split("."))

    def match_segments(segments: list[str], wanted: list[str]) -> bool:
        if len(segments) < len(wanted) or (absolute and len(segments) != len(wanted)):
            return False
        tail = segments[len(segments) - len(wanted) :]
        if tail[:-1] != wanted[:-1]:
            return False
        if substring:
            return wanted[-1].lower() in tail[-1].lower()
        return tail[-1] == wanted[-1]

    def matches(name_path: str) -> bool:
        segments = name_path.split("/")
        return any(match_segments(segments, wanted) for wanted in choices)

    return matches


def find_in_file(
    path: Path, text: Text, name_path: str, *, substring: bool = False, kinds: Iterable[str] | None = None
) -> list[Symbol]:
    """The symbols of `text` (the content of `path`) that `name_path` names, in file order."""
    matches = name_path_matcher(name_path, substring=substring)
    return [s for s in walk(outline(path, text)) if matches(s.name_path) and (not kinds or s.kind in kinds)]
