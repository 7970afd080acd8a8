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
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..workspace import Text
from .languages import language_for, references_query
from .outline import Symbol, outline, walk
from .parsing import PARSES, Parsed
from .receivers import (
    BUILTIN,
    IMPORTED,
    INSTANCE,
    SUPER,
    Local,
    Receiver,
    class_body_receiver,
    imported_names,
    local_binding,
    member_parts,
    module_names,
    receiver_of,
)

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


def word_pattern(name: str) -> re.Pattern:
    """The name as a whole word: not inside a longer identifier (`$` counts as a letter, as
    in JavaScript)."""
    return re.compile(r"(?<![\w$])" + re.escape(name) + r"(?![\w$])")


def occurrences(line: str, name: str) -> list[int]:
    """0-based character columns of `name` as a whole word in `line`."""
    return [m.start() for m in word_pattern(name).finditer(line)]


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
    (a repeated or paged references call) costs a lookup instead of a parse."""

    def __init__(self, size: int = USE_TABLES_SIZE):
        self.size = size
        self._tables: OrderedDict[tuple, list[Use]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> list[Use] | None:
        with self._lock:
            found = self._tables.get(key)
            if found is not None:
                self._tables.move_to_end(key)
            return found

    def put(self, key: tuple, uses: list[Use]) -> None:
        with self._lock:
            self._tables[key] = uses
            while len(self._tables) > self.size:
                self._tables.popitem(last=False)


USE_TABLES = _UseTables()


def classify(path: Path, text: Text, name: str, lines: Iterable[int]) -> list[Use]:
    """Every whole-word use of `name` on the given lines of a file, each with its role (a
    keyword spelled like the name, `from` in `import x from "y"`, is not a use)."""
    wanted = sorted(set(lines))
    key = (path, text.version, name, tuple(wanted))
    if (found := USE_TABLES.get(key)) is None:
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
    root = root_of(parsed)
    size = len(name.encode("utf-8", "surrogatepass"))
    ancestry = Ancestry(root, marks)
    for n in wanted:
        line = text.line(n)
        for column in occurrences(line, name):
            start = (n - 1, _byte_column(line, column))
            end = (n - 1, start[1] + size)
            token = root.descendant_for_point_range(start, end)
            if token is not None and not token.is_named and tuple(token.start_point) == start:
                continue  # a keyword or operator, not a name
            node = root.named_descendant_for_point_range(start, end)
            use = _use(node, ancestry, start, n, column, definitions, parsed.language in PATH_IMPORTS)
            if use.qualified and use.role not in TEXT_ROLES and use.role != "definition":
                use = replace(use, receiver=receiver_of(parsed, node, imported, modules))
            elif use.role in ("call", "use") and owners:
                found = class_body_receiver(parsed, node)
                if found is not None and found.name in owners:
                    use = replace(use, receiver=found)
            uses.append(use)
    return uses


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
            path.append(cursor.node)
            said.append(self.marks.fold(said[-1], cursor.node))
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
