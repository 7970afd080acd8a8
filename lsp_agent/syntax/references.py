"""The role of each use of a name, from the syntax tree: definition, import, inheritance,
call, attribute (member access), type use, other code, comment or string.

A language's references query (lsp_agent/grammars/<language>.references.scm) marks
containers — `@import`, `@inherit`, `@type`: every name inside one has that role — the
callee of each call (`@call`: the last name of the callee expression is the one called) and
each name reached through a dot or arrow (`@member`). Definitions come from the outline;
comments and strings from the node types around a name. Matching is by name only: nothing
here knows types, so `x.save()` is a use of every `save`.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from ..workspace import Text, blake2b
from .languages import language_for, references_query
from .outline import Symbol, outline, walk
from .parsing import PARSES, Parsed
from .receivers import (
    BUILTIN,
    CLASS_NODES,
    IMPORTED,
    INSTANCE,
    SUPER,
    Local,
    Receiver,
    class_body_receiver,
    imported_names,
    known_parents,
    local_binding,
    member_parts,
    module_names,
    receiver_of,
)
from .uses import UseTable

# Roles in the order an answer lists them: definitions, code, then comments and strings.
ROLES = (
    "definition",
    "import",
    "inheritance",
    "call",
    "attribute",
    "type",
    "use",
    "comment",
    "string",
    "text",
)
CODE_ROLES = frozenset({"import", "inheritance", "call", "attribute", "type", "use"})
TEXT_ROLES = frozenset({"comment", "string", "text"})  # "text": a file without a grammar
# Captures of a references query, strongest first: a name inside an import is an import even
# if it is also called there.
CONTAINERS = (("import", "import"), ("inherit", "inheritance"), ("call", "call"), ("type", "type"))
# Languages whose import paths name what they import (Go's `import "a/metrics"` binds metrics).
PATH_IMPORTS = frozenset({"go"})
USE_TABLES_SIZE = 16384  # (file, name) pairs whose uses are kept
# Nodes whose text is a string, and nodes inside a string that hold code again.
STRING_MARKS = ("string", "char_literal", "heredoc", "template_literal")
CODE_IN_STRING = ("interpolation", "template_substitution", "string_interpolation", "format_expression")


@dataclass(frozen=True, slots=True)
class Use:
    """One use of a name in a file."""

    line: int  # 1-based
    column: int  # 1-based character column of the name's first character
    role: str
    qualified: bool  # reached through a dot, arrow or `::` (`obj.name`), or a definition's own name
    receiver: Receiver | None = None  # of a member use: what the syntax shows of `obj` in `obj.name`


def root_of(parsed: Parsed) -> Any:
    """The root node of a parsed tree (typed loosely: tree-sitter ships no type hints)."""
    tree: Any = parsed.tree
    return tree.root_node


@lru_cache(maxsize=256)
def word_pattern(name: str) -> re.Pattern:
    """The name as a whole word: not inside a longer identifier (`$` counts as a letter, as
    in JavaScript)."""
    return re.compile(r"(?<![\w$])" + re.escape(name) + r"(?![\w$])")


def occurrences(line: str, name: str) -> list[int]:
    """0-based character columns of `name` as a whole word in `line` (word_pattern's
    matches, found as the literal and then checked: a look-behind first is slow to search)."""
    found, size = [], len(name)
    at = line.find(name) if name else -1
    while at >= 0:
        end = at + size
        if (at == 0 or not WORDISH.match(line, at - 1)) and not WORDISH.match(line, end):
            found.append(at)
            at = line.find(name, end)
        else:
            at = line.find(name, at + 1)
    return found


WORDISH = re.compile(r"[\w$]")  # a character word_pattern does not let a name touch
ASCII_WORDISH = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")


def word_places(data: bytes, name: str) -> list[tuple[int, int]] | None:
    """(1-based line, rank among the line's uses) of each whole-word use of `name` in a
    file's bytes, as word_lines and occurrences find them in its text, without decoding it
    (but for a character other than ASCII next to a use); None where the bytes cannot say (a
    name that is not ASCII word characters: then decode)."""
    if not name or not name.isascii() or not all(c in ASCII_WORDISH for c in name.encode()):
        return None
    after = re.compile(re.escape(name.encode()) + rb"(?![\w$])")
    places, row, counted, last, nth = list[tuple[int, int]](), 1, 0, 0, 0
    for match in after.finditer(data):
        start, end = match.span()
        if end < len(data) and data[end] >= 0x80 and _wordish_from(data, end):
            continue
        before = data[start - 1] if start else 10
        if before in ASCII_WORDISH or (before >= 0x80 and _wordish_before(data, start)):
            continue
        row += data.count(b"\n", counted, start)
        counted = start
        nth = nth + 1 if row == last else 0
        places.append((row, nth))
        last = row
    return places


def _wordish_from(data: bytes, at: int) -> bool:
    """Whether the character starting at byte `at` (not ASCII) is one a name cannot touch;
    bytes that are not UTF-8 read as the replacement character, as Text decodes them."""
    size = 2 if data[at] < 0xE0 else 3 if data[at] < 0xF0 else 4
    try:
        return WORDISH.match(data[at : at + size].decode("utf-8")) is not None
    except UnicodeDecodeError:
        return False


def _wordish_before(data: bytes, at: int) -> bool:
    """_wordish_from of the character ending before byte `at`."""
    start = at - 1
    while start > max(at - 4, 0) and 0x80 <= data[start] < 0xC0:
        start -= 1
    try:
        return WORDISH.match(data[start:at].decode("utf-8")) is not None
    except UnicodeDecodeError:
        return False


def word_lines(text: Text, name: str) -> list[int]:
    """The 1-based lines holding `name` as a whole word (word_pattern's matches): those
    whose uses classify finds. The name is looked for as a literal (fast in C; a pattern
    starting with a look-behind is tried at every character), each match then checked."""
    content, lines = text.content, list[int]()
    if not name:
        return lines
    after = re.compile(re.escape(name) + r"(?![\w$])")
    row, counted = 1, 0  # the line at offset `counted`
    for match in after.finditer(content):
        start = match.start()
        if start and WORDISH.match(content, start - 1):
            continue
        row += content.count("\n", counted, start)
        counted = start
        if not lines or lines[-1] != row:
            lines.append(row)
    return lines


def _byte_column(line: str, column: int) -> int:
    return len(line[:column].encode("utf-8", "surrogatepass"))


def _captures(parsed: Parsed, rows: tuple[int, int]) -> dict[str, list]:
    import tree_sitter

    found = references_query(parsed.language)
    if found is None:
        return {}
    cursor = tree_sitter.QueryCursor(found)
    cursor.set_point_range((rows[0], 0), (rows[1] + 1, 0))
    return cursor.captures(root_of(parsed))


@dataclass(frozen=True, slots=True)
class Marks:
    """A file's references captures as byte ranges, for a lookup per ancestor of a name
    (one pass over the captures, then each use costs its depth, not the captures' count)."""

    containers: dict[tuple[int, int], str]  # range -> the strongest container role there
    callees: frozenset[tuple[int, int]]
    members: frozenset[tuple[int, int]]

    @classmethod
    def of(cls, captures: dict[str, list]) -> Marks:
        containers: dict[tuple[int, int], str] = {}
        for capture, role in reversed(CONTAINERS):  # the strongest written last
            if capture != "call":
                containers.update(((n.start_byte, n.end_byte), role) for n in captures.get(capture, ()))
        callees = frozenset((n.start_byte, n.end_byte) for n in captures.get("call", ()))
        return cls(
            containers, callees, frozenset((n.start_byte, n.end_byte) for n in captures.get("member", ()))
        )

    def fold(self, outer: Said, node) -> Said:
        """What a path says once `node` (inside all of it) is entered: the innermost comment,
        string or code-in-string decides the text role; the strongest container role wins."""
        text = outer[0]
        kind = node.type
        if "comment" in kind:
            text = ("comment", True)
        elif any(mark in kind for mark in CODE_IN_STRING):
            text = (None, True)
        elif any(mark in kind for mark in STRING_MARKS):
            text = ("string", True)
        return text, _stronger(outer[1], self.containers.get((node.start_byte, node.end_byte)))


STRENGTH = {role: n for n, (_, role) in enumerate(CONTAINERS)}
# What a node's ancestors say of it: ((text role, whether one decided it), strongest role)
Said = tuple[tuple[str | None, bool], str | None]
NOTHING_SAID: Said = ((None, False), None)


def _stronger(role: str | None, other: str | None) -> str | None:
    if role is None or (other is not None and STRENGTH[other] < STRENGTH[role]):
        return other
    return role


def _text_role(node) -> str | None:
    """'comment' or 'string' when the name is inside one (and not in code within a string)."""
    while node is not None:
        kind = node.type
        if "comment" in kind:
            return "comment"
        if any(mark in kind for mark in CODE_IN_STRING):
            return None
        if any(mark in kind for mark in STRING_MARKS):
            return "string"
        node = node.parent
    return None


def region(path: Path, text: Text, line: int, column: int, end: int) -> str | None:
    """'code', 'comment' or 'string': where the text at 1-based `line`, 0-based character
    columns column..end lies; None for a file without a grammar."""
    language = language_for(path)
    parsed = PARSES.parse(path, text, language) if language is not None else None
    if parsed is None:
        return None
    content = text.line(line)
    start = (line - 1, _byte_column(content, column))
    stop = (line - 1, _byte_column(content, max(end, column + 1)))
    node = root_of(parsed).named_descendant_for_point_range(start, stop)
    return _text_role(node) or "code"


class _UseTables:
    """The uses of a name in a file, kept by (path, version, name, lines): a name asked again
    (a repeated or paged references call) costs a lookup instead of a parse. (Also a use
    table's places of a name, tools.references.record_places: list[tuple[Use, int]].)"""

    def __init__(self, size: int = USE_TABLES_SIZE):
        self.size = size
        self._tables: OrderedDict[tuple, list] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> list | None:
        with self._lock:
            found = self._tables.get(key)
            if found is not None:
                self._tables.move_to_end(key)
            return found

    def put(self, key: tuple, uses: list) -> None:
        with self._lock:
            self._tables[key] = uses
            while len(self._tables) > self.size:
                self._tables.popitem(last=False)


USE_TABLES = _UseTables()


def classify(
    path: Path,
    text: Text,
    name: str,
    lines: Iterable[int],
    *,
    table: Table | None = None,
    receivers: bool = True,
) -> list[Use]:
    """Every whole-word use of `name` on the given lines of a file, each with its role (a
    keyword spelled like the name, `from` in `import x from "y"`, is not a use). From
    `table`, the file's use table (its index record's, made from this text), receivers
    and all: then nothing is parsed."""
    wanted = sorted(set(lines))
    key = (path, text.version, name, tuple(wanted))
    if (found := USE_TABLES.get(key)) is not None:  # with receivers: right for either
        return list(found)
    if table is not None:
        short = key if receivers else (*key, "no receivers")
        if (found := USE_TABLES.get(short)) is None and (found := table_uses(table, text, name, wanted, receivers)) is not None:  # fmt: skip
            USE_TABLES.put(short, found)
        if found is not None:
            return list(found)
    found = _classify(path, text, name, wanted)
    USE_TABLES.put(key, found)
    return list(found)


def _classify(path: Path, text: Text, name: str, wanted: list[int]) -> list[Use]:
    language = language_for(path)
    parsed = PARSES.parse(path, text, language) if language is not None else None
    uses = []
    if parsed is None:
        for n in wanted:
            uses += [Use(n, c + 1, "text", False) for c in occurrences(text.line(n), name)]
        return uses
    named = [s for s in walk(outline(path, text)) if s.name == name]
    definitions = {s.selection[:2] for s in named}
    owners = {s.name_path.rsplit("/", 2)[-2] for s in named if "/" in s.name_path}  # classes defining it here
    marks = Marks.of(_captures(parsed, (wanted[0] - 1, wanted[-1] - 1)) if wanted else {})
    imported, modules = imported_names(parsed), module_names(parsed)
    size = len(name.encode("utf-8", "surrogatepass"))
    ancestry = Ancestry(root_of(parsed), marks)
    starts = _row_starts(text, parsed.data)
    with known_parents(ancestry.parents):  # the receiver checks climb the cursor's path
        for n in wanted:
            line = text.line(n)
            for column in occurrences(line, name):
                start = (n - 1, _byte_column(line, column))
                token, node = ancestry.locate(starts[n - 1] + start[1], starts[n - 1] + start[1] + size)
                if not token.is_named and token.start_byte == starts[n - 1] + start[1]:
                    continue  # a keyword or operator, not a name
                use = _use(node, ancestry, start, n, column, definitions, parsed.language in PATH_IMPORTS)
                if use.qualified and use.role not in TEXT_ROLES and use.role != "definition":
                    use = replace(use, receiver=receiver_of(parsed, node, imported, modules))
                elif use.role in ("call", "use") and owners:
                    found = class_body_receiver(parsed, node)
                    if found is not None and found.name in owners:
                        use = replace(use, receiver=found)
                uses.append(use)
    return uses


def _row_starts(text: Text, data: bytes) -> list[int]:
    """The UTF-8 byte offset of each line of `text` in `data` (its encoding)."""
    if text.content.isascii():
        return text._line_index().starts
    starts, offset = [], 0
    for line in text.lines(1, text.line_count):
        starts.append(offset)
        offset += len(line.encode("utf-8", "surrogatepass"))
        offset += _terminator(data, offset)
    return starts


class Ancestry:
    """What the ancestors of nodes asked for in document order say of them (Marks.fold), from
    one tree cursor kept between them: it climbs out of the last node's path only as far as
    needed and descends to the next, folding each node entered into what its parent's path
    said. A file's uses then cost the nodes on their paths once; walking up from each use
    (and asking a node for its parent walks down from the root) is quadratic in nested code."""

    def __init__(self, root, marks: Marks) -> None:
        self.marks = marks
        self.cursor = root.walk()
        self.path = [root]  # the cursor's node and its ancestors, outermost first
        self.said = [marks.fold(NOTHING_SAID, root)]  # what each path's prefix says
        self.parents: dict[int, Any] = {}  # of every node the cursor entered, by node id

    def locate(self, start: int, end: int) -> tuple[Any, Any]:
        """(the smallest node holding bytes start..end, the smallest named one), as
        descendant_for_point_range and named_descendant_for_point_range find them (the
        first child holding the range, at each level), from the cursor: it is left at the
        named one."""
        path, said, cursor = self.path, self.said, self.cursor
        while len(path) > 1 and not (path[-1].start_byte <= start and end <= path[-1].end_byte):
            cursor.goto_parent()
            path.pop(), said.pop()
        while cursor.goto_first_child_for_byte(start) is not None:
            child = cursor.node
            if not (child.start_byte <= start and end <= child.end_byte):
                cursor.goto_parent()
                break
            self._enter(child)
        smallest = path[-1]
        while len(path) > 1 and not path[-1].is_named:
            cursor.goto_parent()
            path.pop(), said.pop()
        return smallest, path[-1]

    def _enter(self, child) -> None:
        self.parents[child.id] = self.path[-1]
        self.path.append(child)
        self.said.append(self.marks.fold(self.said[-1], child))

    def of(self, node) -> tuple[Said, list]:
        """What `node` and its ancestors say, and those nodes (outermost first)."""
        path, said, cursor = self.path, self.said, self.cursor
        while len(path) > 1 and not _holds(path[-1], node):
            cursor.goto_parent()
            path.pop(), said.pop()
        while path[-1] != node and cursor.goto_first_child_for_byte(node.start_byte) is not None:
            if not _holds(cursor.node, node):
                cursor.goto_parent()
                break
            self._enter(cursor.node)
        if path[-1] == node:
            return said[-1], path
        lineage = list(_parents(node))[::-1]  # an empty node, where byte ranges cannot tell the branch
        found = NOTHING_SAID
        for ancestor in lineage:
            found = self.marks.fold(found, ancestor)
        return found, lineage


def _holds(outer, inner) -> bool:
    return outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte


def _parents(node):
    while node is not None:
        yield node
        node = node.parent


def _use(node, ancestry: Ancestry, start, line: int, column: int, definitions, path_imports: bool) -> Use:
    """The role of the name `node` (at point `start`), from what its ancestors say."""
    marks = ancestry.marks
    name_end = node.end_byte
    member = (node.start_byte, name_end) in marks.members
    said, lineage = ancestry.of(node)
    (text_role, _), strongest = said
    for ancestor in reversed(lineage):  # those ending where the name ends: a callee's last name
        if ancestor.end_byte != name_end:
            break
        key = (ancestor.start_byte, name_end)
        if key not in marks.containers and key in marks.callees:
            strongest = _stronger(strongest, "call")  # `a.b.f` calls f, not a or b
    if text_role == "string" and strongest == "import" and path_imports:
        return Use(line, column + 1, "import", False)  # a module path: Go's `import "a/b"`
    if text_role is not None:
        return Use(line, column + 1, text_role, False)
    if start in definitions:
        return Use(line, column + 1, "definition", True)
    if strongest is not None:
        return Use(line, column + 1, strongest, member)
    if "type_identifier" in node.type:
        return Use(line, column + 1, "type", member)
    return Use(line, column + 1, "attribute" if member else "use", member)


def local_at(path: Path, text: Text, line: int, column: int) -> Local | None:
    """The function-local binding (a parameter, an assignment) of the bare name at 1-based
    `line`, 0-based character `column`; None when it is not one (see receivers.local_binding)."""
    language = language_for(path)
    parsed = PARSES.parse(path, text, language) if language is not None else None
    if parsed is None:
        return None
    content = text.line(line)
    start = (line - 1, _byte_column(content, column))
    node = root_of(parsed).named_descendant_for_point_range(start, (start[0], start[1] + 1))
    if node is None or node.type != "identifier" or member_parts(node) is not None:
        return None
    return local_binding(parsed, node)


# --- what the syntax shows of a member use's target ------------------------------------------

# Languages where a method or field is only ever reached through a receiver (`self.x`,
# `this.x`, `s.x`): there a bare name is not the member. (In Java, C++ or C# a method calls
# its siblings by their bare name.)
RECEIVER_LANGUAGES = frozenset({"python", "javascript", "typescript", "tsx", "go", "rust"})
MEMBER_KINDS = frozenset({"method", "property", "constructor"})
# Judgements of a member use against the class asked for, best first.
SHOWN, CANDIDATE, OTHER = "shown", "candidate", "other"
# Languages of one family: a name defined in one is used from the others.
FAMILIES = {"typescript": "javascript", "tsx": "javascript", "cpp": "c"}


def family(language: str | None) -> str | None:
    return FAMILIES.get(language, language) if language else None


def judge(use: Use, owner: str | None, definers: frozenset[str], function: bool = False) -> str:
    """Whether a use is of the member `owner`'s (a class name) by its receiver: SHOWN (an
    instance of owner or of a class naming it as a base, `super()` in such a class),
    OTHER (an instance of another class defining the name, `super()` inside owner itself,
    a builtin value) or CANDIDATE (the syntax does not say). With `function`, the target is
    a top-level function: only a bare use or one through an imported name can be it.
    `definers`: the classes that define the name."""
    receiver = use.receiver
    if receiver is None:
        return CANDIDATE
    if function:
        return CANDIDATE if receiver.how == IMPORTED else OTHER
    if receiver.how == IMPORTED and receiver.module:
        return OTHER  # `os.path`, `m.x` with `import * as m`: a module's name, no class's member
    if receiver.how == BUILTIN:
        return OTHER if receiver.name != owner else SHOWN
    if owner is None or receiver.how not in (INSTANCE, SUPER):
        return CANDIDATE
    if owner in receiver.bases:
        return SHOWN
    if receiver.how == SUPER:
        if receiver.name == owner or (set(receiver.bases) & definers) - {owner}:
            return OTHER
        return CANDIDATE
    if receiver.name == owner:
        return SHOWN
    return OTHER if receiver.name in definers else CANDIDATE


# --- signatures -----------------------------------------------------------------------------

MAX_SIGNATURE_LINES = 12
BODY_FIELDS = ("body",)


def definition_node(parsed: Parsed, symbol: Symbol | Any):
    """The syntax node of a symbol: the widest node around its name that ends where it ends."""
    node = root_of(parsed).named_descendant_for_point_range(symbol.selection[:2], symbol.selection[2:])
    end = symbol.range[2:]
    while node is not None and tuple(node.end_point) < end:
        node = node.parent
    return node


def _body(node):
    inner = node.child_by_field_name("definition")  # a Python decorated definition
    target = inner if inner is not None else node
    for name in BODY_FIELDS:
        if (body := target.child_by_field_name(name)) is not None:
            return body
    return None


def _header_end(node, body) -> tuple[int, int]:
    """Where a header ends: after the last part before the body that is not a comment (a
    comment between `class A:` and its first statement is not part of the header)."""
    parent = body.parent
    last = None
    for child in parent.children:
        if child.start_byte >= body.start_byte:
            break
        if "comment" not in child.type:
            last = child
    if last is None or (
        parent != node
        and node.child_by_field_name("definition") is None
        and parent.start_byte < node.start_byte
    ):
        return tuple(body.start_point)
    if last.type == ":":  # Python's colon ends the header; shown without it
        return tuple(last.start_point)
    return tuple(last.end_point)


def _first_doc_line(parsed: Parsed, node, body) -> str | None:
    """The first line of a docstring (Python) or of the comment just above the definition."""
    data = parsed.data
    if body is not None and parsed.language == "python" and body.named_children:
        first = body.named_children[0]
        if (
            first.type == "expression_statement"
            and first.named_children
            and first.named_children[0].type == "string"
        ):
            raw = data[first.start_byte : first.end_byte].decode("utf-8", "replace")
            for line in raw.strip().strip("rbuRBU").strip("\"'").splitlines():
                if line.strip():
                    return line.strip()
            return None
    before = node.prev_named_sibling
    if before is not None and "comment" in before.type and before.end_point[0] >= node.start_point[0] - 1:
        raw = data[before.start_byte : before.end_byte].decode("utf-8", "replace")
        for line in raw.splitlines():
            line = line.strip().lstrip("/*#!-").strip().removesuffix("*/").strip()
            if line:
                return line
    return None


@dataclass(frozen=True)
class Signature:
    lines: list[str]  # the header lines, from the first decorator to the body (not included)
    doc: str | None  # the first line of its docstring or leading comment
    bases: list[str]  # the names a class inherits from

    def one_line(self) -> str:
        """The header on one line: `def f(\\n    a,\\n)` reads `def f(a)`."""
        text = " ".join(" ".join(self.lines).split())
        return re.sub(r",? ([)\]}])", r"\1", re.sub(r"([(\[{]) ", r"\1", text))


def signature(path: Path, text: Text, symbol: Symbol) -> Signature:
    """A symbol's header (decorators, name, parameters, bases, return type), its doc line
    and bases. A symbol without a body (a constant, a field) shows its first line."""
    language = language_for(path)
    parsed = PARSES.parse(path, text, language) if language is not None else None
    if parsed is None or (node := definition_node(parsed, symbol)) is None:
        return Signature(header_lines(text, symbol.start_line, None), None, [])
    body = _body(node)
    lines = header_lines(text, symbol.start_line, _header_at(node, body, symbol))
    return Signature(lines, _first_doc_line(parsed, node, body), _bases(parsed, node))


NO_BODY = -1  # a header end's column for a definition without a body: its lines to its name's


def header_end(parsed: Parsed, symbol: Symbol | Any) -> tuple[int, int] | None:
    """Where a symbol's header ends (0-based row and UTF-8 column, or NO_BODY), None when
    no node is the symbol's: what header_lines needs to show it without a parse (the index
    keeps it per definition, for overview)."""
    node = definition_node(parsed, symbol)
    return None if node is None else _header_at(node, _body(node), symbol)


def header_and_doc(parsed: Parsed, symbol: Symbol | Any) -> tuple[tuple[int, int], str | None] | None:
    """(header_end, the doc line signature shows) from one look for the symbol's node, None
    when there is none: what the index keeps per definition."""
    node = definition_node(parsed, symbol)
    if node is None:
        return None
    body = _body(node)
    return _header_at(node, body, symbol), _first_doc_line(parsed, node, body)


def _header_at(node, body, symbol: Symbol | Any) -> tuple[int, int]:
    return (symbol.selection[0], NO_BODY) if body is None else _header_end(node, body)


def header_lines(text: Text, start_line: int, end: tuple[int, int] | None) -> list[str]:
    """The header of a definition from its first line to `end` (see header_end; None: the
    first line only), blank lines and the body's opener left out."""
    first_line = text.line(start_line).rstrip()
    if end is None:
        return [first_line]
    row, col = end
    if col == NO_BODY:
        header = text.lines(start_line, min(row, start_line - 1 + MAX_SIGNATURE_LINES - 1) + 1)
    else:
        header = text.lines(start_line, row + 1)
        head_bytes = header[-1].encode("utf-8", "surrogatepass")[:col]
        header[-1] = head_bytes.decode("utf-8", "replace")
        if not header[-1].strip():
            header.pop()
    header = [line.rstrip() for line in header if line.strip()]
    if header:
        header[-1] = header[-1].removesuffix("{").removesuffix(":").rstrip()
    if len(header) > MAX_SIGNATURE_LINES:
        header = [*header[: MAX_SIGNATURE_LINES - 1], header[MAX_SIGNATURE_LINES - 1] + " …"]
    return header or [first_line]


def _bases(parsed: Parsed, node) -> list[str]:
    """The names inside the inheritance parts of a definition's header (`class A(B, m.C)`:
    B and C), from the references query's @inherit containers."""
    import tree_sitter

    found = references_query(parsed.language)
    if found is None:
        return []
    cursor = tree_sitter.QueryCursor(found)
    cursor.set_byte_range(node.start_byte, node.end_byte)
    names = []
    for container in cursor.captures(node).get("inherit", ()):
        if not (node.start_byte <= container.start_byte and container.end_byte <= node.end_byte):
            continue
        if _body(node) is not None and container.start_byte >= _body(node).start_byte:
            continue  # a nested class's bases
        stack = [container]
        while stack:
            current = stack.pop()
            if current.type == "keyword_argument":
                continue  # metaclass=…
            if not current.named_children and "identifier" in current.type:
                names.append(parsed.data[current.start_byte : current.end_byte].decode("utf-8", "replace"))
            stack += reversed(current.named_children)
    # `m.Base` is a use of Base: keep the last name of each dotted chain
    return _last_names(names, parsed, node)


def _last_names(names: list[str], parsed: Parsed, node) -> list[str]:
    header = parsed.data[node.start_byte : (_body(node) or node).start_byte].decode("utf-8", "replace")
    return [n for n in names if not re.search(r"(?<![\w$])" + re.escape(n) + r"\s*(\.|::)\s*\w", header)]


# --- use tables: every name of a file classified in one pass, kept with its index record ----

TOKEN = re.compile(r"[\w$]+")  # a word as word_pattern bounds it: a name's uses are its words
ROLE_CODES = {role: n for n, role in enumerate(ROLES)}
QUALIFIED = 0x10  # a code's bit for Use.qualified; its low bits are the role's place in ROLES
NO_USE = 0xFF  # a keyword spelled like a name
TEXT_CLASSES = ("comment", "code", "string")  # what a node says of the text in it (Marks.fold)


TABLE_VERSION = b"5"  # of use_table's classification: a new one makes every table again


@cache
def table_stamp(language: str) -> bytes:
    """What a language's use tables depend on besides the text (the references query, the
    grammar's version, how they are made): a table saved under another stamp is made again."""
    from .languages import GRAMMARS, grammars_folder, installed_version

    entry = GRAMMARS[language]
    version = installed_version(entry.package)  # without importlib.metadata's imports (11 ms)
    source = "\n".join(grammars_folder().joinpath(*q.split("/")).read_text("utf-8") for q in entry.references)
    made = b"\0".join([TABLE_VERSION, version.encode(), source.encode("utf-8")])
    return blake2b(made, digest_size=8).digest()


def role_code(use: Use) -> int:
    return ROLE_CODES[use.role] | (QUALIFIED if use.qualified else 0)


def _text_class(kind: str) -> str | None:
    """What Marks.fold makes of a node of this kind: its checks, in its order."""
    if "comment" in kind:
        return "comment"
    if any(mark in kind for mark in CODE_IN_STRING):
        return "code"
    if any(mark in kind for mark in STRING_MARKS):
        return "string"
    return None


_LEXICONS: dict[str, Any] = {}
_LEXICONS_LOCK = threading.Lock()


def _lexicon(language: str):
    """A query of `language` capturing the nodes that name (kinds holding "identifier") and
    those that say what their text is (comments, strings, code in strings); None when the
    grammar has no such kinds or the query does not compile."""
    with _LEXICONS_LOCK:
        if language not in _LEXICONS:
            _LEXICONS[language] = _make_lexicon(language)
        return _LEXICONS[language]


def _make_lexicon(language: str):
    import tree_sitter

    from .languages import grammar

    lang = grammar(language)
    groups: dict[str, set[str]] = {g: set() for g in ("name", "keyword", *TEXT_CLASSES)}
    for kind_id in range(lang.node_kind_count):
        kind = lang.node_kind_for_id(kind_id)
        if not kind or not lang.node_kind_is_visible(kind_id):
            continue
        if not lang.node_kind_is_named(kind_id):
            if TOKEN.fullmatch(kind) and not kind[0].isdigit():
                groups["keyword"].add(f'"{kind}"')
        elif (found := _text_class(kind)) is not None:
            groups[found].add(f"({kind})")
        elif "identifier" in kind:
            groups["name"].add(f"({kind})")
    source = "\n".join(f"[{' '.join(sorted(ks))}] @{g}" for g, ks in groups.items() if ks)
    try:
        return tree_sitter.Query(lang, source) if groups["name"] else None
    except Exception:  # a kind the query language cannot name (a supertype): no table
        return None


def use_table(parsed: Parsed, text: Text, definitions: dict[str, set[tuple[int, int]]], owners: dict[str, set[str]] | None = None) -> TableParts | None:  # fmt: skip
    """The uses of every word of a file with their codes and receivers (see uses.pack_table),
    classified as _classify does one name, in one pass: the references captures and the
    lexicon's nodes of the whole file swept in order. A word that is a naming node's or a
    keyword's whole text, or inside a comment or string with no node below it, costs a few
    lookups; any other takes _classify's way. `definitions`: where each name's definitions
    start (rows and UTF-8 columns); `owners`: the classes defining each name here (the last
    segment of its containers). None without a lexicon."""

    import tree_sitter

    lexicon = _lexicon(parsed.language)
    if lexicon is None:
        return None
    owners = owners or {}
    root = root_of(parsed)
    marks = Marks.of(_captures(parsed, (0, max(text.line_count, 1))))
    found = tree_sitter.QueryCursor(lexicon).captures(root)
    leaves = {(n.start_byte, n.end_byte): n.type for n in found.get("name", ()) if n.child_count == 0}
    keywords = {(n.start_byte, n.end_byte) for n in found.get("keyword", ())}
    callees: dict[int, list[int]] = {}
    for start, end in marks.callees:
        if (start, end) not in marks.containers:
            callees.setdefault(end, []).append(start)
    at = _Sweep(_spans(found, marks)).at
    ancestry = Ancestry(root, marks)
    path_imports = parsed.language in PATH_IMPORTS
    receivers = _Receivers(parsed, ancestry, owners)
    order: dict[str, list[tuple[int, int, int]]] = {}
    offset, data = 0, parsed.data  # offset: UTF-8 bytes before the line
    with known_parents(ancestry.parents):  # the receiver checks climb the cursor's path
        for row, line in enumerate(text.lines(1, text.line_count)):
            ascii_line = line.isascii()
            for match in TOKEN.finditer(line):
                word, column = match.group(), match.start()
                if word[0].isdigit():
                    continue
                byte = column if ascii_line else _byte_column(line, column)
                s = offset + byte
                e = s + (len(word) if ascii_line else len(word.encode("utf-8", "surrogatepass")))
                text_role, strongest, in_leaf = at(s, e)
                if (kind := leaves.get((s, e))) is not None and text_role is None:
                    code = _leaf_code(
                        kind, s, e, strongest, marks, callees, (row, byte) in definitions.get(word, ())
                    )
                elif (s, e) in keywords:
                    code = NO_USE
                elif in_leaf and text_role is not None:
                    code = _text_code(text_role, strongest, path_imports)
                else:
                    code = _slow_code(ancestry, (row, byte), (s, e), row + 1, column, definitions.get(word, set()), (text_role, strongest), path_imports)  # fmt: skip
                order.setdefault(word, []).append((row, code, receivers.of(word, code, s, e)))
            offset += len(line) if ascii_line else len(line.encode("utf-8", "surrogatepass"))
            offset += _terminator(data, offset)
    return _grouped(order, receivers.written)


def _grouped(order: dict[str, list[tuple[int, int, int]]], written: list[str]) -> TableParts:
    """use_table's answer from each word's (row, code, receiver) uses, in order of first use."""
    from array import array

    counts, rows, codes, ids = array("I"), array("I"), bytearray(), array("I")
    for uses in order.values():
        counts.append(len(uses))
        for row, code, receiver in uses:
            rows.append(row)
            codes.append(code)
            ids.append(receiver)
    return list(order), counts, rows, bytes(codes), "\n".join(written), ids


# a use table's parts (uses.pack_table): the words, their counts, the rows and codes of their
# uses, the file's receivers (one a line, see _Receivers) and each use's (0: none, else its line + 1)
TableParts = tuple[list[str], Any, Any, bytes, str, Any]
CODE_ROLE_NAMES = ("call", "use")


class _Receivers:
    """The receivers of a file's uses as _classify finds them, each written once (Receiver
    fields apart by \x1f, the bases by \x1e): a member use's (`obj.name`), a bare name's in a
    Python class body defining it."""

    def __init__(self, parsed: Parsed, ancestry: Ancestry, owners: dict[str, set[str]]) -> None:
        self.parsed, self.ancestry, self.owners = parsed, ancestry, owners
        self.imported, self.modules = imported_names(parsed), module_names(parsed)
        self.ids: dict[Receiver, int] = {}
        self.written: list[str] = []

    def of(self, word: str, code: int, start: int, end: int) -> int:
        if code == NO_USE:
            return 0
        role, qualified = ROLES[code & 0x0F], bool(code & QUALIFIED)
        if qualified and role not in TEXT_ROLES and role != "definition":
            node = self.ancestry.locate(start, end)[1]
            found = receiver_of(self.parsed, node, self.imported, self.modules)
        elif role in CODE_ROLE_NAMES and word in self.owners:
            found = class_body_receiver(self.parsed, self.ancestry.locate(start, end)[1])
            found = found if found is not None and found.name in self.owners[word] else None
        else:
            return 0
        if found is None:
            return 0
        if (known := self.ids.get(found)) is None:
            known = self.ids[found] = len(self.written) + 1
            self.written.append(
                f"{found.how}\x1f{found.name}\x1f{int(found.module)}\x1f" + "\x1e".join(found.bases)
            )
        return known


def read_receiver(line: str) -> Receiver:
    """One line of _Receivers.written, read back."""
    how, name, module, bases = line.split("\x1f")
    return Receiver(how, name, tuple(bases.split("\x1e")) if bases else (), module == "1")


def _terminator(data: bytes, at: int) -> int:
    """The length of the line terminator at byte `at` (Text's lines carry none)."""
    if data[at : at + 2] == b"\r\n":
        return 2
    return 1 if at < len(data) else 0


# start and end byte, text class, container role, whether the node is a leaf
Span = tuple[int, int, str | None, str | None, bool]


def _spans(found: dict[str, list], marks: Marks) -> list[Span]:
    """The nodes that say something of the text inside them, outermost first at a start."""
    spans: list[Span] = [(s, e, None, role, False) for (s, e), role in marks.containers.items()]
    for group in TEXT_CLASSES:
        spans += [(n.start_byte, n.end_byte, group, None, n.child_count == 0) for n in found.get(group, ())]
    spans.sort(key=lambda span: (span[0], -span[1]))
    return spans


TEXT_OF = {"comment": "comment", "code": None, "string": "string"}


class _Sweep:
    """What the spans around each of a file's words say (Marks.fold's text role and the
    strongest container, and whether the innermost span is a leaf), the words asked for in
    order: a stack of the open spans."""

    def __init__(self, spans: list[Span]) -> None:
        self.spans, self.next = spans, 0
        self.stack: list[tuple[int, str | None, str | None, bool]] = [(1 << 62, None, None, False)]

    def at(self, start: int, end: int) -> tuple[str | None, str | None, bool]:
        stack, spans = self.stack, self.spans
        while stack[-1][0] <= start:
            stack.pop()
        while self.next < len(spans) and spans[self.next][0] <= start:
            s, e, text, role, leaf = spans[self.next]
            self.next += 1
            while stack[-1][0] <= s:
                stack.pop()
            if e > start:
                top = stack[-1]
                stack.append((e, top[1] if text is None else TEXT_OF[text], _stronger(top[2], role), leaf))
        while stack[-1][0] < end:  # a span ending inside the word holds no part of its path
            stack.pop()
        return stack[-1][1], stack[-1][2], stack[-1][3]


def _leaf_code(kind: str, start: int, end: int, strongest, marks: Marks, callees, defined: bool) -> int:
    """_use of a word that is a naming node's whole text, outside comments and strings."""
    member = (start, end) in marks.members
    if any(s <= start for s in callees.get(end, ())):
        strongest = _stronger(strongest, "call")  # a callee ending where the name ends
    if defined:
        return ROLE_CODES["definition"] | QUALIFIED
    if strongest is not None:
        role = strongest
    elif "type_identifier" in kind:
        role = "type"
    else:
        role = "attribute" if member else "use"
    return ROLE_CODES[role] | (QUALIFIED if member else 0)


def _text_code(text_role: str, strongest: str | None, path_imports: bool) -> int:
    if text_role == "string" and strongest == "import" and path_imports:
        return ROLE_CODES["import"]  # a module path: Go's `import "a/b"`
    return ROLE_CODES[text_role]


def _slow_code(ancestry: Ancestry, start, span: tuple[int, int], line: int, column: int, definitions, said, path_imports: bool) -> int:  # fmt: skip
    """The code of any other word, as _classify finds it (a comment's or string's words
    from what the spans say)."""
    token, node = ancestry.locate(*span)
    if not token.is_named and token.start_byte == span[0]:
        return NO_USE
    if said[0] is not None:
        return _text_code(said[0], said[1], path_imports)
    return role_code(_use(node, ancestry, start, line, column, definitions, path_imports))


Table = UseTable  # a record's use table (uses.pack_table)
NameUses = tuple[Any, bytes, Any]  # UseTable.find's: the rows, codes and receivers of a word's uses


def table_lines(table: Table, name: str) -> list[int] | None:
    """The 1-based lines where a file's use table has words `name` (those classify answers
    for); None when the table cannot say (not a word, or a damaged table)."""
    found = _name_uses(table, name)
    return None if found is None else sorted({row + 1 for row in found[0]})


def _name_uses(table: Table, name: str) -> NameUses | None:
    """The uses of `name` in a use table (empty: it has none); None when the table cannot say
    (not a word, or a damaged table)."""
    if not TOKEN.fullmatch(name) or name[0].isdigit():
        return None
    return table.find(name)


def table_uses(table: Table, text: Text, name: str, lines: Iterable[int], receivers: bool = False) -> list[Use] | None:  # fmt: skip
    """classify's uses of `name` on the given lines from a file's use table (with their
    receivers when asked); None when the table cannot answer (not a word, a damaged table, or
    a line's words are not the table's: then the file is classified from its tree)."""
    if (words := _words(table, name, receivers)) is None:
        return None
    on_row: dict[int, list[tuple[int, Receiver | None]]] = {}
    for row, _, code, receiver in words:
        on_row.setdefault(row, []).append((code, receiver))
    uses = []
    for n in sorted(set(lines)):
        columns = occurrences(text.line(n), name)
        found = on_row.get(n - 1, [])
        if len(columns) != len(found):
            return None
        uses += [
            Use(n, c + 1, ROLES[code & 0x0F], bool(code & QUALIFIED), receiver)
            for c, (code, receiver) in zip(columns, found, strict=True)
            if code != NO_USE
        ]
    return uses


def table_places(table: Table, name: str, receivers: bool = False) -> list[tuple[Use, int]] | None:
    """table_uses without the text: each use of `name` with column 0 (not known) and its
    rank among the table's words `name` on its line, which is the rank of its column among
    occurrences() of that line in the text the table was made from; None when the table
    cannot answer (not a word, or a damaged table)."""
    if (words := _words(table, name, receivers)) is None:
        return None
    return [
        (Use(row + 1, 0, ROLES[code & 0x0F], bool(code & QUALIFIED), receiver), nth)
        for row, nth, code, receiver in words
        if code != NO_USE
    ]


# The codes a table may hold: NO_USE, or a role's place in ROLES with the QUALIFIED bit or not.
TABLE_CODES = bytes([NO_USE, *(r | q for r in range(len(ROLES)) for q in (0, QUALIFIED))])


def _words(table: Table, name: str, receivers: bool) -> list[tuple[int, int, int, Receiver | None]] | None:
    """(row, rank among the name's words on that row, code, receiver) of each of a word's
    uses in a use table (in order); of the receivers written, only those of these uses are
    read back, and only when asked for. None when the table cannot say (not a word) or does
    not hold together (a code or receiver no table is made with): the file is then read."""
    if (found := _name_uses(table, name)) is None:
        return None
    rows, codes, ids = found
    if codes.translate(None, TABLE_CODES):
        return None
    lines = table.receivers() if receivers else []
    if lines is None or (receivers and ids and max(ids) > len(lines)):
        return None
    read: dict[int, Receiver] = {}
    words = []
    row, nth = -1, 0
    try:
        for k, at in enumerate(rows):
            nth = nth + 1 if at == row else 0
            row, code = at, codes[k]
            rid = ids[k] if receivers and code != NO_USE else 0
            receiver = (read.get(rid) or read.setdefault(rid, read_receiver(lines[rid - 1]))) if rid else None
            words.append((row, nth, code, receiver))
    except (ValueError, IndexError):  # a receiver's line no table writes
        return None
    return words


HERITAGE = re.compile(r"\s*extends\s+([\w$.]+)")  # a JavaScript or TypeScript class's base, by name


def super_calls(path: Path, text: Text, base: str, lines: Iterable[int]) -> list[tuple[int, int]]:
    """(1-based line, column) of each `super(…)` call in a JavaScript or TypeScript class whose
    heritage, on one of `lines`, extends `base` (by its last name): where `base`'s
    constructor runs, though no word names it. A class inside such a class calls its own base."""
    language = language_for(path)
    parsed = PARSES.parse(path, text, language) if language is not None else None
    if parsed is None:
        return []
    wanted, found = set(lines), []
    stack = [root_of(parsed)]
    while stack:
        node = stack.pop()
        heritage = next((c for c in node.named_children if c.type == "class_heritage"), None)
        if node.type in CLASS_NODES and heritage is not None and wanted.intersection(range(heritage.start_point[0] + 1, heritage.end_point[0] + 2)):  # fmt: skip
            named = HERITAGE.match(heritage.text.decode("utf-8", "replace"))
            if named and named.group(1).rsplit(".", 1)[-1] == base:
                found += _super_calls_in(node, text)
        stack.extend(node.named_children)
    return sorted(found)


def _super_calls_in(cls: Any, text: Text) -> list[tuple[int, int]]:
    found, stack = [], list(cls.named_children)
    while stack:
        node = stack.pop()
        if node.type in CLASS_NODES:
            continue
        function = node.child_by_field_name("function") if node.type == "call_expression" else None
        if function is not None and function.type == "super":
            row, byte = function.start_point
            line = text.line(row + 1)
            found.append(
                (row + 1, len(line.encode("utf-8", "surrogatepass")[:byte].decode("utf-8", "replace")) + 1)
            )
        stack.extend(node.named_children)
    return found


def record_labels(record: Any, lines: list[int]) -> dict[int, str | None]:
    """The enclosing name path of each of the sorted 1-based `lines`, as the record's
    line_symbols().around says (outline.line_segments: the innermost definition, the first of
    siblings sharing a line), in one pass over its definitions without building the segments:
    each is clipped to the lines its parent left after its earlier siblings; the deepest clipped
    one holding a line names it."""
    from .outline import last_line

    labels: dict[int, str | None] = dict.fromkeys(lines)
    if not lines or not record.kinds:
        return labels
    ranges, found = record.ranges, dict[int, int]()  # line -> the definition labelling it
    # open definitions: (range, last line it may label, the next line its children may take);
    # a clipped-away one keeps nothing (its children neither: line_segments does not enter it)
    stack: list[list] = [[(-1, -1, 1 << 62, 0), 1 << 62, 1]]
    low, high = lines[0], lines[-1]
    for i in range(len(record.kinds)):
        here = tuple(ranges[8 * i : 8 * i + 4])
        row, end = here[0], here[2:]
        if row >= high:  # this one and all after it (they start no earlier) label later lines only
            break
        # one of the same range is a sibling (`var a, b int`), as outline.nested has it
        while len(stack) > 1 and (not end <= stack[-1][0][2:] or here == stack[-1][0]):
            stack.pop()
        parent = stack[-1]
        first, last = max(row + 1, parent[2]), min(last_line(row, end), parent[1])
        if first > last:
            stack.append([here, 0, 1])  # nothing left to it or inside it
            continue
        parent[2] = last + 1
        stack.append([here, last, first])
        if first > high or last < low:
            continue
        for line in lines[bisect_left(lines, first) : bisect_right(lines, last)]:
            found[line] = i
    if found:  # the names split only as far as the last definition labelling a line
        most = max(found.values()) + 1
        names, containers = record.names.split("\n", most), record.containers.split("\n", most)
        for line, i in found.items():
            labels[line] = f"{containers[i]}/{names[i]}" if containers[i] else names[i]
    return labels
