"""What the syntax shows of the receiver of a member use (`recv.name`), without types.

`receiver_of(parsed, name_node)` answers a Receiver: an instance of a class (`self.x` inside
class C, `this.x`, `Foo().x`, `new Foo().x`, `x: Foo` then `x.y`, `x = Foo()` then `x.y`, a Go
method's receiver or `&Foo{}`), a base of a class (`super().x`), a builtin value (`{}.get`,
`**kwargs`, `[].append`), an imported name (`os.path`, `pkg.Func`), or another object (what
the syntax does not show). Only the file's own text is read: a class's bases are those its
definition in the file names.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .parsing import Parsed

INSTANCE, SUPER, BUILTIN, IMPORTED, OBJECT = "instance", "super", "builtin", "imported", "object"

# The parts of a member expression: (node type, field of the receiver, field of the name).
MEMBER_NODES = {
    "attribute": ("object", "attribute"),  # Python
    "member_expression": ("object", "property"),  # JavaScript, TypeScript
    "selector_expression": ("operand", "field"),  # Go
}
PY_LITERALS = {
    "dictionary": "dict", "dictionary_comprehension": "dict", "list": "list", "list_comprehension": "list",
    "set": "set", "set_comprehension": "set", "tuple": "tuple", "string": "str", "concatenated_string": "str",
    "integer": "int", "float": "float", "generator_expression": "generator",
}  # fmt: skip
JS_LITERALS = {
    "array": "Array",
    "object": "Object",
    "string": "String",
    "template_string": "String",
    "number": "Number",
}
PY_BUILTINS = frozenset(
    {
        "dict",
        "list",
        "set",
        "frozenset",
        "tuple",
        "str",
        "bytes",
        "bytearray",
        "int",
        "float",
        "object",
        "type",
    }
)
SELF_NAMES = ("self", "cls", "this")
MAX_UP = 200  # ancestors looked through for the enclosing function or class


@dataclass(frozen=True, slots=True)
class Receiver:
    how: str  # instance, super, builtin, imported or object
    name: str = ""  # the class, builtin type or imported name ("" for another object)
    bases: tuple[str, ...] = ()  # with instance and super: the class's bases, as its file names them
    module: bool = False  # with imported: the name is a module's (`import os`, `import * as m`, a Go package)


def _text(parsed: Parsed, node) -> str:
    return parsed.data[node.start_byte : node.end_byte].decode("utf-8", "replace")


_KNOWN = threading.local()  # the parents a caller has seen, by node id (see known_parents)


@contextmanager
def known_parents(parents: dict[int, Any]):
    """Within it, a node's parent is first looked up in `parents` (node id -> parent, as
    references.Ancestry's cursor met them): tree-sitter finds a parent by walking down from
    the root, so in code nested n deep each `.parent` costs n, and a use's receiver checks
    ask up to MAX_UP of them."""
    _KNOWN.parents = parents
    try:
        yield
    finally:
        _KNOWN.parents = None


def _parent(node):
    parents = getattr(_KNOWN, "parents", None)
    if parents is not None and (found := parents.get(node.id)) is not None:
        return found
    return node.parent


def _child(node, child):
    """`child` of `node`, its parent noted for _parent."""
    parents = getattr(_KNOWN, "parents", None)
    if parents is not None and child is not None:
        parents[child.id] = node
    return child


def member_parts(node) -> tuple[Any, Any] | None:
    """(the member expression, its receiver) when `node` is the name after a dot."""
    parent = _parent(node)
    fields = MEMBER_NODES.get(getattr(parent, "type", ""))
    if fields is None:
        return None
    name = parent.child_by_field_name(fields[1])
    if name is None or name.start_byte != node.start_byte:
        return None
    return parent, _child(parent, parent.child_by_field_name(fields[0]))


def receiver_of(
    parsed: Parsed, node, imported: frozenset[str], modules: frozenset[str] = frozenset()
) -> Receiver | None:
    """The Receiver of the member named by `node`; None when `node` is not a member's name.
    `imported`: the names the file's imports bind; `modules`: those of them that are modules."""
    parts = member_parts(node)
    if parts is None:
        return None
    if parts[1] is None:
        return Receiver(OBJECT)
    return _infer(parsed, parts[1], imported | modules, 0, modules)


def class_body_receiver(parsed: Parsed, node) -> Receiver | None:
    """A bare name directly in a Python class's body (`save.alters_data = True`) is that
    class's member: its Receiver; None elsewhere."""
    if parsed.language != "python":
        return None
    scope = _enclosing(node, (*FUNCTION_NODES, *CLASS_NODES))
    if scope is None or scope.type not in CLASS_NODES or (name := scope.child_by_field_name("name")) is None:
        return None
    return Receiver(INSTANCE, _text(parsed, name), tuple(_bases(parsed, scope)))


def _last_name(parsed: Parsed, node) -> str | None:
    """The last name of a dotted name or a generic type (`m.Foo`, `Foo[int]`, `*Foo`)."""
    while node is not None and node.type in ("generic_type", "subscript", "pointer_type", "type", "generic"):
        node = (
            node.child_by_field_name("type")
            or node.child_by_field_name("value")
            or (node.named_children[0] if node.named_children else None)
        )
    if node is None:
        return None
    if node.type in MEMBER_NODES or node.type in ("qualified_type", "nested_type_identifier"):
        node = node.named_children[-1] if node.named_children else None
    if node is None or "identifier" not in node.type:
        return None
    return _text(parsed, node)


def _infer(
    parsed: Parsed, node, imported: frozenset[str], depth: int = 0, modules: frozenset[str] = frozenset()
) -> Receiver:
    kind = node.type
    literals = PY_LITERALS if parsed.language == "python" else JS_LITERALS
    if kind in literals and parsed.language != "go":
        return Receiver(BUILTIN, literals[kind])
    if (
        kind in ("parenthesized_expression", "non_null_expression", "unary_expression")
        and node.named_children
    ):
        return _infer(parsed, _child(node, node.named_children[-1]), imported, depth, modules)
    if kind in ("this", "super") or (kind == "identifier" and _text(parsed, node) in ("self", "cls", "this")):
        found = _own_class(parsed, node)
        return Receiver(SUPER if kind == "super" else INSTANCE, *found) if found else Receiver(OBJECT)
    if kind in ("call", "call_expression", "new_expression", "composite_literal"):
        return _from_call(parsed, node, imported)
    if kind == "identifier":
        return _from_identifier(parsed, node, imported, depth, modules)
    if kind in MEMBER_NODES:
        head = node
        while head.type in MEMBER_NODES and head.named_children:
            head = head.named_children[0]
        if head.type in ("identifier", "package_identifier") and _text(parsed, head) in imported:
            return Receiver(IMPORTED, _text(parsed, head))  # `m.value.x`: something inside a module
    return Receiver(OBJECT)


def _from_call(parsed: Parsed, node, imported: frozenset[str]) -> Receiver:
    """`Foo()`, `new Foo()`, `Foo{}`: an instance of Foo; `super()`: a base; `dict()`: a builtin."""
    if node.type == "composite_literal":
        name = _last_name(parsed, node.child_by_field_name("type"))
        return Receiver(INSTANCE, name) if name else Receiver(OBJECT)
    callee = node.child_by_field_name("function") or node.child_by_field_name("constructor")
    if callee is None:
        return Receiver(OBJECT)
    if callee.type == "identifier" and _text(parsed, callee) == "super" and parsed.language == "python":
        found = _own_class(parsed, node)
        return Receiver(SUPER, *found) if found else Receiver(OBJECT)
    name = _last_name(parsed, callee)
    if name is None:
        return Receiver(OBJECT)
    if parsed.language == "python" and name in PY_BUILTINS and callee.type == "identifier":
        return Receiver(BUILTIN, name)
    if node.type == "new_expression" or name[:1].isupper():
        return Receiver(INSTANCE, name)
    return Receiver(OBJECT)


def _enclosing(node, kinds: tuple[str, ...]):
    for _ in range(MAX_UP):
        node = _parent(node)
        if node is None or node.type in kinds:
            return node
    return None


CLASS_NODES = ("class_definition", "class_declaration", "abstract_class_declaration", "class")
FUNCTION_NODES = (
    "function_definition", "lambda", "function_declaration", "method_definition", "arrow_function",
    "function_expression", "method_declaration", "func_literal",
)  # fmt: skip


def _own_class(parsed: Parsed, node) -> tuple[str, tuple[str, ...]] | None:
    """(name, bases) of the class around `node` (Go: the receiver type of the method around it)."""
    if parsed.language == "go":
        method = _enclosing(node, ("method_declaration",))
        found = _go_receiver(parsed, method) if method is not None else None
        return (found[1], ()) if found else None
    around = _enclosing(node, CLASS_NODES)
    if around is None or (name := around.child_by_field_name("name")) is None:
        return None
    return _text(parsed, name), tuple(_bases(parsed, around))


def _bases(parsed: Parsed, cls) -> list[str]:
    heads = [cls.child_by_field_name("superclasses")]
    heads += [c for c in cls.named_children if c.type in ("class_heritage", "extends_clause")]
    names = []
    for head in heads:
        for part in head.named_children if head is not None else ():
            if part.type in ("extends_clause", "implements_clause"):
                names += [n for n in (_last_name(parsed, p) for p in part.named_children) if n]
            elif part.type != "keyword_argument" and (name := _last_name(parsed, part)):
                names.append(name)
    return names


def _go_receiver(parsed: Parsed, method) -> tuple[str, str] | None:
    """(receiver variable, its type) of a Go method declaration."""
    receiver = method.child_by_field_name("receiver")
    for param in receiver.named_children if receiver is not None else ():
        variable, kind = param.child_by_field_name("name"), param.child_by_field_name("type")
        name = _last_name(parsed, kind)
        if variable is not None and name:
            return _text(parsed, variable), name
    return None


def _from_identifier(
    parsed: Parsed, node, imported: frozenset[str], depth: int, modules: frozenset[str]
) -> Receiver:
    """A variable: the method's receiver (Go), its parameter's annotation, or the value of its
    first assignment in the enclosing function (or the file's top level)."""
    name = _text(parsed, node)
    function = _enclosing(node, FUNCTION_NODES)
    if parsed.language == "go" and function is not None and function.type == "method_declaration":
        found = _go_receiver(parsed, function)
        if found and found[0] == name:
            return Receiver(INSTANCE, found[1])
    if function is not None and (param := _parameter(parsed, function, name)) is not None:
        return param
    if depth < 2:
        value = _assigned(parsed, function if function is not None else _root(node), name, node.start_byte)
        if value is not None:
            return _infer(parsed, value, imported, depth + 1, modules)
    if name in imported:
        return Receiver(IMPORTED, name, module=name in modules)
    if name[:1].isupper():  # a class's own attribute or static method: `Foo.create()`
        return Receiver(INSTANCE, name)
    return Receiver(OBJECT)


def _root(node):
    while (parent := _parent(node)) is not None:
        node = parent
    return node


def _parameter(parsed: Parsed, function, name: str) -> Receiver | None:
    params = function.child_by_field_name("parameters") or function.child_by_field_name("parameter")
    for param in params.named_children if params is not None else ():
        kind = param.type
        if kind == "dictionary_splat_pattern" and _text(parsed, param).lstrip("*") == name:
            return Receiver(BUILTIN, "dict")
        if kind == "list_splat_pattern" and _text(parsed, param).lstrip("*") == name:
            return Receiver(BUILTIN, "tuple")
        target = param.child_by_field_name("name") or param.child_by_field_name("pattern")
        if target is None and kind == "typed_parameter" and param.named_children:
            target = param.named_children[0]
        if target is None or _text(parsed, target) != name:
            if kind == "parameter_declaration" and any(
                _text(parsed, n) == name for n in param.children_by_field_name("name")
            ):
                target = param  # Go: `a, b Foo`
            else:
                continue
        annotation = param.child_by_field_name("type")
        if annotation is not None and annotation.type == "type_annotation" and annotation.named_children:
            annotation = annotation.named_children[0]
        found = _last_name(parsed, annotation) if annotation is not None else None
        if found is None:
            return Receiver(OBJECT)
        if parsed.language == "python" and found in PY_BUILTINS:
            return Receiver(BUILTIN, found)
        return Receiver(INSTANCE, found)
    return None


ASSIGNMENTS = ("assignment", "variable_declarator", "short_var_declaration", "var_spec")
SCOPE_BOUNDARIES = (*FUNCTION_NODES, *CLASS_NODES)


def _assigned(parsed: Parsed, scope, name: str, before: int):
    """The value first assigned to `name` directly in `scope` (not in a nested function or
    class), before byte `before`; None if none."""
    stack = list(reversed(scope.named_children))
    while stack:
        node = stack.pop()
        if node.start_byte >= before:
            return None
        if node.type in ASSIGNMENTS:
            target = node.child_by_field_name("left") or node.child_by_field_name("name")
            value = node.child_by_field_name("right") or node.child_by_field_name("value")
            if node.type == "short_var_declaration" and target is not None:
                target = target.named_children[0] if target.named_children else target
                value = value.named_children[0] if value is not None and value.named_children else value
            if target is not None and value is not None and _text(parsed, target) == name:
                return value
        if node.type not in SCOPE_BOUNDARIES:
            stack += reversed(node.named_children)
    return None


def imported_names(parsed: Parsed) -> frozenset[str]:
    """The names a file's top-level imports bind: `import a.b` binds a, `from x import y as z`
    z, `import * as m` m, a Go import its package name."""
    names = set()
    root = parsed.tree.root_node
    for statement in root.named_children:
        kind = statement.type
        if kind == "import_statement" and parsed.language == "python":
            for item in statement.children_by_field_name("name"):
                alias = item.child_by_field_name("alias") if item.type == "aliased_import" else None
                names.add(_text(parsed, alias) if alias else _text(parsed, item).split(".")[0])
        elif kind == "import_from_statement":
            for item in statement.children_by_field_name("name"):
                alias = item.child_by_field_name("alias") if item.type == "aliased_import" else item
                if alias is not None:
                    names.add(_text(parsed, alias))
        elif kind in ("import_statement", "import_declaration"):
            names |= _bound_by(parsed, statement)
    return frozenset(names)


def module_names(parsed: Parsed) -> frozenset[str]:
    """The names a file's top-level imports bind to modules: Python `import a.b` (a) and
    `import a as m`, JS/TS `import * as m`, every Go import (a package)."""
    names = set()
    for statement in parsed.tree.root_node.named_children:
        kind = statement.type
        if kind == "import_statement" and parsed.language == "python":
            for item in statement.children_by_field_name("name"):
                alias = item.child_by_field_name("alias") if item.type == "aliased_import" else None
                names.add(_text(parsed, alias) if alias else _text(parsed, item).split(".")[0])
        elif kind == "import_declaration":  # Go
            names |= _bound_by(parsed, statement)
        elif kind == "import_statement":  # JS/TS: the namespace imports only
            stack = [statement]
            while stack:
                node = stack.pop()
                if node.type == "namespace_import":
                    names |= {_text(parsed, n) for n in node.named_children if n.type == "identifier"}
                stack += node.named_children
    return frozenset(names)


def _bound_by(parsed: Parsed, statement) -> set[str]:
    names = set()
    stack = [statement]
    while stack:
        node = stack.pop()
        if node.type == "import_spec":  # Go: the alias, else the path's last part
            alias, path = node.child_by_field_name("name"), node.child_by_field_name("path")
            if alias is not None:
                names.add(_text(parsed, alias))
            elif path is not None:
                names.add(_text(parsed, path).strip('"`').rsplit("/", 1)[-1])
            continue
        if node.type == "identifier" and node.parent is not None and node.parent.type != "string":
            names.add(_text(parsed, node))
        stack += node.named_children
    return names


# --- locals -------------------------------------------------------------------------------

PY_BINDERS = {  # node type -> the fields holding the names it binds
    "assignment": ("left",), "augmented_assignment": ("left",), "for_statement": ("left",),
    "named_expression": ("name",), "as_pattern": ("alias",), "for_in_clause": ("left",),
}  # fmt: skip
PY_SCOPES = ("function_definition", "lambda", "class_definition")


@dataclass(frozen=True, slots=True)
class Local:
    """Where a Python name local to a function is bound: a parameter, or the assignment that
    reaches the use (the last before it, else the first)."""

    kind: str  # "parameter" or "local"
    function: str  # the function's name
    range: tuple[int, int, int, int]  # of the binding name: 0-based rows and byte columns


def local_binding(parsed: Parsed, node) -> Local | None:
    """The Local a bare name `node` refers to, looking through the functions around it (a
    closure's variable is its outer function's); None for a module-level or unknown name."""
    if parsed.language in C_LIKE_FUNCTIONS:
        return _c_like_binding(parsed, node)
    if parsed.language != "python":
        return None
    name = _text(parsed, node)
    function = _enclosing(node, ("function_definition", "lambda"))
    while function is not None:
        title = function.child_by_field_name("name")
        label = _text(parsed, title) if title is not None else "lambda"
        for param in _param_names(function):
            if _text(parsed, param) == name:
                return Local("parameter", label, (*param.start_point, *param.end_point))
        body = function.child_by_field_name("body")
        bound = [n for n in _bindings(parsed, body, name)] if body is not None else []
        if bound:
            before = [n for n in bound if n.start_byte <= node.start_byte]
            chosen = before[-1] if before else bound[0]
            return Local("local", label, (*chosen.start_point, *chosen.end_point))
        function = _enclosing(function, ("function_definition", "lambda"))
    return None


def _param_names(function) -> list:
    params = function.child_by_field_name("parameters")
    names = []
    for param in params.named_children if params is not None else ():
        if param.type == "identifier":
            names.append(param)
        elif (target := param.child_by_field_name("name")) is not None:
            names.append(target)
        elif param.named_children and param.named_children[0].type == "identifier":
            names.append(param.named_children[0])  # typed_parameter, *args, **kwargs
    return names


def _bindings(parsed: Parsed, body, name: str) -> list:
    """The name nodes binding `name` directly in a function body (not in nested scopes);
    none when the body declares it global or nonlocal."""
    found, stack = [], [body]
    while stack:
        current = stack.pop()
        kind = current.type
        declared = kind in ("global_statement", "nonlocal_statement")
        if declared and any(_text(parsed, n) == name for n in current.named_children):
            return []
        for field_name in PY_BINDERS.get(kind, ()):
            target = current.child_by_field_name(field_name)
            found += [n for n in _targets(target) if _text(parsed, n) == name]
        if kind == "except_clause":  # `except E as e`
            found += [
                n for n in current.named_children[1:2] if n.type == "identifier" and _text(parsed, n) == name
            ]
        if kind in ("import_statement", "import_from_statement"):
            found += [n for n in _import_aliases(current) if _text(parsed, n) == name]
        if kind in PY_SCOPES and current is not body:
            title = current.child_by_field_name("name")
            if title is not None and _text(parsed, title) == name:
                found.append(title)
            continue
        stack += reversed(current.named_children)
    return sorted(found, key=lambda n: n.start_byte)


def _targets(node) -> list:
    """The names an assignment target binds: `a`, `a, (b, *c)`; not `x.y` or `x[i]`."""
    if node is None:
        return []
    if node.type == "identifier":
        return [node]
    if node.type in (
        "pattern_list",
        "tuple_pattern",
        "list_pattern",
        "list_splat_pattern",
        "as_pattern_target",
        "parenthesized_expression",
        "tuple",
        "list",
    ):
        return [n for child in node.named_children for n in _targets(child)]
    return []


def _import_aliases(statement) -> list:
    names = []
    for item in statement.children_by_field_name("name"):
        alias = item.child_by_field_name("alias") if item.type == "aliased_import" else item
        if alias is not None and alias.type == "identifier":
            names.append(alias)
        elif alias is not None and alias.named_children:  # `import a.b` binds a
            names.append(alias.named_children[0])
    return names


# --- locals of JavaScript, TypeScript and Go ---------------------------------------------------

JS_FUNCTIONS = (
    "function_declaration", "function_expression", "arrow_function", "method_definition",
    "generator_function_declaration", "generator_function", "function",
)  # fmt: skip
C_LIKE_FUNCTIONS = {
    "javascript": JS_FUNCTIONS,
    "typescript": JS_FUNCTIONS,
    "tsx": JS_FUNCTIONS,
    "go": ("function_declaration", "method_declaration", "func_literal"),
}
BINDING_NAMES = ("identifier", "shorthand_property_identifier_pattern")
# Parts of a parameter or pattern that hold no binding: a type, a default value, a key.
NOT_BOUND = ("type_annotation", "type", "value", "right", "key", "result", "return_type")


def _c_like_binding(parsed: Parsed, node) -> Local | None:
    """A JS/TS/Go name's parameter, or the declaration in its function that reaches it (the
    last before the use, else the first), through the functions around it."""
    name = _text(parsed, node)
    kinds = C_LIKE_FUNCTIONS[parsed.language]
    function = _enclosing(node, kinds)
    while function is not None:
        title = function.child_by_field_name("name")
        if title is None and function.parent is not None and function.parent.type == "variable_declarator":
            title = function.parent.child_by_field_name("name")  # `const h = (a) => …` is h
        label = _text(parsed, title) if title is not None else "function"
        for param in _c_like_params(parsed, function):
            if _text(parsed, param) == name:
                return Local("parameter", label, (*param.start_point, *param.end_point))
        body = function.child_by_field_name("body")
        bound = [n for n in _declared(parsed, body, kinds) if _text(parsed, n) == name] if body else []
        if bound:
            before = [n for n in bound if n.start_byte <= node.start_byte]
            chosen = before[-1] if before else bound[0]
            return Local("local", label, (*chosen.start_point, *chosen.end_point))
        function = _enclosing(function, kinds)
    return None


def _bound_names(node) -> list:
    """The names a parameter list or a pattern binds: `a`, `{b, c: d}`, `[x, ...y]`, `a, b int`."""
    if node is None:
        return []
    if node.type in BINDING_NAMES:
        return [node]
    if node.type == "pair_pattern":  # `{c: d}` binds d
        return _bound_names(node.child_by_field_name("value"))
    found = []
    for index, child in enumerate(node.children):
        field = node.field_name_for_child(index)
        if child.is_named and field not in NOT_BOUND and "type" not in child.type:
            found += _bound_names(child)
    return found


def _c_like_params(parsed: Parsed, function) -> list:
    heads = [function.child_by_field_name(f) for f in ("parameters", "parameter", "receiver")]
    return [n for head in heads for n in _bound_names(head)]


def _declared(parsed: Parsed, body, kinds: tuple[str, ...]) -> list:
    """The names declared directly in a function body (not in nested functions): JS/TS
    `const`/`let`/`var` (patterns too), `for (const x of …)`, `catch (e)`, a nested function's
    name; Go `:=`, `var`, `const`, `range` with `:=`."""
    found, stack = [], [body]
    while stack:
        current = stack.pop()
        kind = current.type
        if kind == "variable_declarator" or kind in ("var_spec", "const_spec"):
            found += _bound_names(current.child_by_field_name("name"))
            if kind != "variable_declarator":
                found += [n for n in current.children_by_field_name("name")[1:] if n.type == "identifier"]
        elif kind == "for_in_statement" and current.child_by_field_name("kind") is not None:
            found += _bound_names(current.child_by_field_name("left"))
        elif kind == "catch_clause":
            found += _bound_names(current.child_by_field_name("parameter"))
        elif kind in ("short_var_declaration", "range_clause") and _declares(current):
            found += _bound_names(current.child_by_field_name("left"))
        if kind in kinds and current is not body:
            title = current.child_by_field_name("name")
            if title is not None and kind == "function_declaration":
                found.append(title)
            continue
        stack += reversed(current.named_children)
    return sorted(found, key=lambda n: n.start_byte)


def _declares(node) -> bool:
    """Whether a Go statement declares with `:=` (a short declaration always does)."""
    return node.type == "short_var_declaration" or any(c.type == ":=" for c in node.children)
