"""The import graph of lsp_agent keeps the layer order the README's layout section states:
a module imports only from its own layer or those below it, and no modules import each
other in a circle. Every import counts, including those inside functions."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "lsp_agent"
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
    """Module -> the package modules it imports. An import of one of its own enclosing
    packages (a tool module using its registry) is not an edge: that is one room's inside."""
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
                if target and target != name and not name.startswith(target + "."):
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


def test_no_import_cycles():
    graph = imports(module_files())
    cycles = []
    state: dict[str, str] = {}  # "open" while on the current path, "done" after

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_the_graph_follows_relative_imports():
    graph = imports(module_files())
    assert "lsp_agent.tools" in graph["lsp_agent.server"]
    assert "lsp_agent.workspace" in graph["lsp_agent.tools"]
    assert "lsp_agent.tools" not in graph["lsp_agent.tools.read"]  # its own package
