"""Where an imported name comes from, as far as the syntax shows it.

`imported(path, text, name, qualifier)` answers the files a name is imported from and its
name there: Python `from x import y [as z]` (relative imports too) and `import a.b as m`
(for `m.y`), JS/TS `import … from './x'` (and `export … from`), Go package-qualified names
(`pkg.Name`), Rust `use` paths. Only files inside the workspace are found: a name imported
from an installed package or the standard library has no file here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..workspace import Text, Workspace
from .languages import language_for
from .parsing import PARSES, Parsed
from .references import root_of

JS_EXTENSIONS = ("", ".ts", ".tsx", ".js", ".mjs", ".cjs", ".jsx", ".d.ts")
JS_INDEXES = ("index.ts", "index.tsx", "index.js", "index.mjs")


@dataclass(frozen=True)
class Source:
    files: list[Path]  # candidate files, best first
    name: str  # the name in those files
    statement: str  # the import as written, for the answer


def _text(parsed: Parsed, node) -> str:
    return parsed.data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def imported(ws: Workspace, path: Path, text: Text, name: str, qualifier: str | None = None) -> Source | None:
    """Where `name` (or `qualifier.name`) used in `path` is imported from, or None."""
    language = language_for(path)
    if language is None:
        return None
    parsed = PARSES.parse(path, text, language)
    if parsed is None:
        return None
    finder = FINDERS.get(language)
    return finder(ws, path, parsed, name, qualifier) if finder else None


# --- Python ----------------------------------------------------------------------------------


def python_module(ws: Workspace, path: Path, module: str) -> list[Path]:
    """Files of a dotted module (`.a.b` relative to `path`, `a.b` from a root, any folder
    above `path`, or above a root named a): a/b.py, then a/b/__init__.py."""
    dots = len(module) - len(module.lstrip("."))
    parts = [p for p in module.lstrip(".").split(".") if p]
    if dots:
        bases = [path.parents[dots - 1]] if dots <= len(path.parents) else []
    else:
        # a root that is the package itself (`django/` opened alone) holds `django.x` too
        bases = [*path.parents, *ws.roots, *(r.parent for r in ws.roots if parts and r.name == parts[0])]
    found = []
    for base in bases:
        if ws.root_of(base) is None and ws.root_of(base.joinpath(*parts[:1])) is None:
            continue
        stem = base.joinpath(*parts)
        candidates = [stem.with_name(stem.name + ".py")] if parts else []
        for candidate in [*candidates, stem / "__init__.py"]:
            if ws.root_of(candidate) is not None and candidate.is_file() and candidate not in found:
                found.append(candidate)
    return found


def _python(ws: Workspace, path: Path, parsed: Parsed, name: str, qualifier: str | None) -> Source | None:
    wanted = qualifier or name
    for node in _walk_imports(root_of(parsed), ("import_from_statement", "import_statement")):
        if node.type == "import_from_statement":
            module_node = node.child_by_field_name("module_name")
            if module_node is None:
                continue
            module = _text(parsed, module_node)
            for item in node.children_by_field_name("name"):
                original = item.child_by_field_name("name") if item.type == "aliased_import" else item
                alias = item.child_by_field_name("alias") if item.type == "aliased_import" else item
                if original is None or alias is None or _text(parsed, alias) != wanted:
                    continue
                real = _text(parsed, original)
                statement = " ".join(_text(parsed, node).split())
                if qualifier:  # `from a import b` then `b.name`: b is a module
                    return Source(
                        python_module(ws, path, f"{module}.{real}".replace("..", ".")), name, statement
                    )
                files = python_module(ws, path, module)
                submodule = python_module(
                    ws, path, f"{module}.{real}" if not module.endswith(".") else module + real
                )
                return Source(files + [f for f in submodule if f not in files], real, statement)
        elif qualifier:
            for item in node.children_by_field_name("name"):
                if item.type == "aliased_import":
                    alias, dotted = (
                        _text(parsed, item.child_by_field_name("alias")),
                        item.child_by_field_name("name"),
                    )
                else:
                    alias, dotted = _text(parsed, item), item
                if alias == qualifier:
                    statement = " ".join(_text(parsed, node).split())
                    return Source(python_module(ws, path, _text(parsed, dotted)), name, statement)
    return None


def _walk_imports(root, kinds: tuple[str, ...]):
    """Import statements at the top level and inside top-level blocks (try/if)."""
    stack = list(reversed(root.named_children))
    while stack:
        node = stack.pop()
        if node.type in kinds:
            yield node
        elif node.type in ("if_statement", "try_statement", "block", "else_clause", "except_clause"):
            stack += reversed(node.named_children)


# --- JavaScript and TypeScript ---------------------------------------------------------------


def js_module(ws: Workspace, path: Path, spec: str) -> list[Path]:
    if not spec.startswith("."):
        return []
    base = Path(os.path.normpath(path.parent / spec))
    found = []
    for ext in JS_EXTENSIONS:
        candidate = base.with_name(base.name + ext) if ext else base
        if candidate.is_file():
            found.append(candidate)
    if spec.endswith(".js"):  # TypeScript imports './x.js' for x.ts
        for ext in (".ts", ".tsx"):
            candidate = base.with_suffix(ext)
            if candidate.is_file():
                found.append(candidate)
    if base.is_dir():
        found += [base / index for index in JS_INDEXES if (base / index).is_file()]
    return [f for f in found if ws.root_of(f.resolve()) is not None]


def _js(ws: Workspace, path: Path, parsed: Parsed, name: str, qualifier: str | None) -> Source | None:
    wanted = qualifier or name
    for node in root_of(parsed).named_children:
        if node.type not in ("import_statement", "export_statement"):
            continue
        source = node.child_by_field_name("source")
        if source is None:
            continue
        spec = _text(parsed, source).strip("'\"`")
        statement = " ".join(_text(parsed, node).split())
        for clause in node.named_children:
            if clause.type == "import_clause":
                for part in clause.named_children:
                    if part.type == "identifier" and _text(parsed, part) == wanted:  # default import
                        return Source(
                            js_module(ws, path, spec), "default" if not qualifier else name, statement
                        )
                    if (
                        part.type == "namespace_import"
                        and qualifier
                        and _text(parsed, part.named_children[-1]) == qualifier
                    ):
                        return Source(js_module(ws, path, spec), name, statement)
                    if (
                        part.type == "named_imports"
                        and (real := _specifier(parsed, part, wanted)) is not None
                    ):
                        return Source(js_module(ws, path, spec), real, statement)
            elif clause.type == "export_clause" and (real := _specifier(parsed, clause, wanted)) is not None:
                return Source(js_module(ws, path, spec), real, statement)
    return None


def _specifier(parsed: Parsed, clause, wanted: str) -> str | None:
    for spec in clause.named_children:
        real = spec.child_by_field_name("name")
        alias = spec.child_by_field_name("alias") or real
        if real is not None and alias is not None and _text(parsed, alias) == wanted:
            return _text(parsed, real)
    return None


# --- Go ------------------------------------------------------------------------------------


def _go(ws: Workspace, path: Path, parsed: Parsed, name: str, qualifier: str | None) -> Source | None:
    if not qualifier:
        return None
    for node in root_of(parsed).named_children:
        if node.type != "import_declaration":
            continue
        specs = [n for n in _descendants(node) if n.type == "import_spec"]
        for spec in specs:
            import_path = _text(parsed, spec.child_by_field_name("path")).strip('"`')
            alias = spec.child_by_field_name("name")
            package = _text(parsed, alias) if alias is not None else import_path.rsplit("/", 1)[-1]
            if package != qualifier:
                continue
            return Source(go_package(ws, path, import_path), name, f'import {package} "{import_path}"')
    return None


def go_package(ws: Workspace, path: Path, import_path: str) -> list[Path]:
    """The .go files of the package: the longest tail of the import path found as a folder
    under a folder above the importing file (the module's root is one of them)."""
    parts = import_path.split("/")
    above = [p for p in path.parents if ws.root_of(p) is not None]
    for n in range(len(parts), 0, -1):
        for base in above:
            folder = base.joinpath(*parts[-n:])
            if folder.is_dir() and folder != path.parent:
                return sorted(p for p in folder.glob("*.go") if not p.name.endswith("_test.go"))
    return []


# --- Rust -------------------------------------------------------------------------------------


def _rust(ws: Workspace, path: Path, parsed: Parsed, name: str, qualifier: str | None) -> Source | None:
    wanted = qualifier or name
    for node in root_of(parsed).named_children:
        if node.type != "use_declaration":
            continue
        for segments, alias in _use_paths(parsed, node.child_by_field_name("argument"), []):
            if alias != wanted:
                continue
            statement = " ".join(_text(parsed, node).split())
            module = segments[:-1] if not qualifier else segments
            real = segments[-1] if not qualifier else name
            return Source(rust_module(ws, path, module), real, statement)
    return None


def _use_paths(parsed: Parsed, node, prefix: list[str]):
    """(path segments, local name) of each name a `use` tree brings in."""
    if node is None:
        return
    kind = node.type
    if kind in ("identifier", "crate", "self", "super"):
        segments = [*prefix, _text(parsed, node)]
        yield segments, segments[-1]
    elif kind == "scoped_identifier":
        segments = [*prefix, *_text(parsed, node).replace(" ", "").split("::")]
        yield segments, segments[-1]
    elif kind == "use_as_clause":
        segments = [*prefix, *_text(parsed, node.child_by_field_name("path")).replace(" ", "").split("::")]
        yield segments, _text(parsed, node.child_by_field_name("alias"))
    elif kind == "scoped_use_list":
        head = node.child_by_field_name("path")
        base = [*prefix, *(_text(parsed, head).replace(" ", "").split("::") if head is not None else [])]
        yield from _use_paths(parsed, node.child_by_field_name("list"), base)
    elif kind == "use_list":
        for child in node.named_children:
            yield from _use_paths(parsed, child, prefix)


def rust_module(ws: Workspace, path: Path, segments: list[str]) -> list[Path]:
    """Files of a module path: `crate::a::b` from the crate's src folder, `super::`/`self::`
    from the file's own module; a/b.rs, a/b/mod.rs, then a.rs (b may be an item of a)."""
    src = next((p for p in path.parents if p.name == "src"), path.parent)
    base = path.parent
    rest = list(segments)
    if rest and rest[0] == "crate":
        base, rest = src, rest[1:]
    while rest and rest[0] in ("self", "super"):
        if rest[0] == "super":
            base = base.parent
        rest = rest[1:]
    found = []
    for n in range(len(rest), 0, -1):
        stem = base.joinpath(*rest[:n])
        for candidate in (stem.with_suffix(".rs"), stem / "mod.rs"):
            if candidate.is_file() and ws.root_of(candidate.resolve()) is not None:
                found.append(candidate)
    if not rest:
        found += [p for p in (base / "lib.rs", base / "main.rs", base / "mod.rs") if p.is_file()]
    return found


def _descendants(node):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack += reversed(current.named_children)


FINDERS = {
    "python": _python,
    "javascript": _js,
    "typescript": _js,
    "tsx": _js,
    "go": _go,
    "rust": _rust,
}
