"""The import graph of lsp_agent keeps the layer order the README's layout section states:
a module imports only from its own layer or those below it, and no modules import each
other in a circle. Every import counts, including those inside functions."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "lsp_agent"
README = PACKAGE.parent / "README.md"


def layer_order() -> dict[str, int]:
    """Room name (top-level module or subpackage of lsp_agent) -> its layer, from the README's
    numbered list after "Layers, bottom to top"."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("Layers, bottom to top") :]
    layers: dict[str, int] = {}
    for line in section.splitlines()[1:]:
        entry = re.match(r"(\d+)\. (.*)", line)
        if entry is None:
            if layers:
                break
            continue
        for room in re.findall(r"`(?:lsp_agent/)?([a-z_]+)(?:\.py|/)?`", entry.group(2)):
            layers[room] = int(entry.group(1))
    return layers


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the package modules it imports, inside its own package too (a package's
    __init__ importing its modules, a module importing its package: both are edges)."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
                found = [base] + [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            for target in found:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    targets.add(target)
        graph[name] = targets
    return graph


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_the_readme_names_every_room():
    layers = layer_order()
    rooms = {room(m) for m in module_files()} - {"lsp_agent"}
    assert rooms <= set(layers), f"rooms missing from the README's layer order: {rooms - set(layers)}"
    assert len(set(layers.values())) >= 8


def test_no_import_from_a_higher_layer():
    layers = layer_order() | {"lsp_agent": 0}  # the package itself holds only __version__
    upward = [
        f"{module} (layer {layers[room(module)]}) imports {target} (layer {layers[room(target)]})"
        for module, targets in imports(module_files()).items()
        for target in sorted(targets)
        if layers[room(target)] > layers[room(module)]
    ]
    assert not upward, "upward imports:\n" + "\n".join(upward)


# Cycles known and owned elsewhere, allowed only until their owners land (calls/ landed its
# subpackage of dialect records, issue 22 item 6: none left). Every other cycle, at any level, fails.
KNOWN_CYCLE_ROOMS: set[str] = set()

# A tool module importing another, allowed only until its owner lands (none now: symbols'
# ranked-map stage takes `ranked_map` from syntax/ranking.py, issue 28).
KNOWN_TOOL_IMPORTS: set[tuple[str, str]] = set()


def known(cycle: list[str]) -> bool:
    return any(all(m == r or m.startswith(r + ".") for m in cycle) for r in KNOWN_CYCLE_ROOMS)


def cycles_in(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every circle a depth-first walk meets, as the modules on it."""
    cycles: list[list[str]] = []
    state: dict[str, str] = {}  # "open" while on the current path, "done" after

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                cycles.append(path[path.index(target) :])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return cycles


def test_no_import_cycles():
    cycles = [c for c in cycles_in(imports(module_files())) if not known(c)]
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join([*c, c[0]]) for c in cycles)


def test_the_graph_follows_relative_imports():
    graph = imports(module_files())
    assert "lsp_agent.tools" in graph["lsp_agent.server"]
    assert "lsp_agent.workspace" in graph["lsp_agent.tools.registry"]
    assert "lsp_agent.tools.registry" in graph["lsp_agent.tools.read"]
    assert "lsp_agent.tools.registry" in graph["lsp_agent.tools"]  # a package's own modules count


def tool_modules() -> set[str]:
    """The modules that register a tool (`@tool(...)`)."""
    found = set()
    for name, path in module_files().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tool":
                found.add(name)
    return found


def test_no_tool_module_imports_another():
    tools = tool_modules()
    assert {"lsp_agent.tools.read", "lsp_agent.tools.search", "lsp_agent.tools.calls"} <= tools
    graph = imports(module_files())
    crossing = sorted(
        (module, target)
        for module in tools
        for target in graph[module]
        if target in tools and (module, target) not in KNOWN_TOOL_IMPORTS
    )
    assert not crossing, "tool modules importing tool modules:\n" + "\n".join(
        f"{a} -> {b}" for a, b in crossing
    )


def test_the_known_exceptions_still_exist():
    """An exception stays listed only while it is needed: once its owner lands, drop it."""
    graph = imports(module_files())
    rooms = {r for r in KNOWN_CYCLE_ROOMS if any(known(c) and c[0].startswith(r) for c in cycles_in(graph))}
    assert rooms == KNOWN_CYCLE_ROOMS, f"no circle left in {KNOWN_CYCLE_ROOMS - rooms}: drop the exception"
    for module, target in KNOWN_TOOL_IMPORTS:
        assert target in graph.get(module, set()), f"{module} no longer imports {target}: drop the exception"
