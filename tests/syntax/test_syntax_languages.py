"""Outlines and enclosing symbols for a fixture in every supported language, asserted exactly.

Each fixture (in tests/fixtures/grammars/<language>/) is written like real
code: classes in namespaces, methods, nested functions, decorators or attributes, generics.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.syntax import GRAMMARS, enclosing_symbols, language_for, outline
from lsp_agent.syntax.languages import grammars_folder
from lsp_agent.workspace import Text
from tests.support.grammar_fixtures import fixture_files, fixtures_of

FIXTURES = fixture_files()

# (kind, name path, first line, last line, children)
OUTLINES = {
    "Cart.php": [
        ("namespace", "App\\Shop", 2, 41, [
            ("constant", "App\\Shop/TAX_RATE", 6, 6, []),
            ("interface", "App\\Shop/Priced", 8, 11, [
                ("method", "App\\Shop/Priced/price", 10, 10, []),
            ]),
            ("trait", "App\\Shop/Discounts", 13, 19, [
                ("method", "App\\Shop/Discounts/discount", 15, 18, []),
            ]),
            ("class", "App\\Shop/Cart", 21, 36, [
                ("method", "App\\Shop/Cart/__construct", 25, 27, []),
                ("method", "App\\Shop/Cart/price", 29, 35, []),
            ]),
            ("function", "App\\Shop/cart_total", 38, 41, []),
        ]),
    ],
    "Inventory.cs": [
        ("namespace", "Shop.Inventory", 4, 35, [
            ("interface", "Shop.Inventory/IStock", 6, 10, [
                ("property", "Shop.Inventory/IStock/Count", 8, 8, []),
                ("method", "Shop.Inventory/IStock/Add", 9, 9, []),
            ]),
            ("class", "Shop.Inventory/Stock", 12, 27, [
                ("constructor", "Shop.Inventory/Stock/Stock", 16, 16, []),
                ("property", "Shop.Inventory/Stock/Count", 18, 18, []),
                ("method", "Shop.Inventory/Stock/Add", 20, 24, []),
                ("enum", "Shop.Inventory/Stock/Level", 26, 26, [
                    ("constant", "Shop.Inventory/Stock/Level/Low", 26, 26, []),
                    ("constant", "Shop.Inventory/Stock/Level/High", 26, 26, []),
                ]),
            ]),
            ("record", "Shop.Inventory/Item", 29, 29, []),
            ("struct", "Shop.Inventory/Money", 31, 34, []),
        ]),
    ],
    "Library.java": [
        ("class", "Library", 7, 34, [
            ("constant", "Library/MAX_BOOKS", 8, 8, []),
            ("constructor", "Library/Library", 12, 13, []),
            ("method", "Library/toString", 15, 18, []),
            ("method", "Library/map", 20, 24, []),
            ("interface", "Library/Listener", 26, 28, [
                ("method", "Library/Listener/added", 27, 27, []),
            ]),
            ("enum", "Library/Status", 30, 33, [
                ("constant", "Library/Status/OPEN", 31, 31, []),
                ("constant", "Library/Status/CLOSED", 32, 32, []),
            ]),
        ]),
        ("record", "Book", 36, 40, [
            ("method", "Book/age", 37, 39, []),
        ]),
    ],
    "Scoped.cs": [
        ("namespace", "Shop.Billing", 1, 8, [
            ("class", "Shop.Billing/Invoice", 3, 6, [
                ("method", "Shop.Billing/Invoice/Total", 5, 5, []),
            ]),
            ("type", "Shop.Billing/Paid", 8, 8, []),
        ]),
    ],
    "account.rb": [
        ("module", "Bank", 2, 26, [
            ("constant", "Bank/VERSION", 3, 3, []),
            ("class", "Bank/Account", 5, 25, [
                ("method", "Bank/Account/initialize", 8, 10, []),
                ("method", "Bank/Account/deposit", 12, 14, []),
                ("method", "Bank/Account/open", 16, 18, []),
                ("method", "Bank/Account/registry", 21, 23, []),
            ]),
        ]),
        ("method", "helper", 28, 30, []),
    ],
    "deploy.sh": [
        ("function", "log", 6, 8, []),
        ("function", "build", 10, 13, []),
        ("function", "deploy", 15, 21, [
            ("function", "deploy/rollback", 17, 19, []),
        ]),
    ],
    "geometry.rs": [
        ("constant", "PI", 4, 4, []),
        ("trait", "Shape", 6, 11, [
            ("method", "Shape/area", 7, 7, []),
            ("method", "Shape/name", 8, 10, []),
        ]),
        ("struct", "Circle", 13, 16, []),  # with its #[derive]
        ("enum", "Kind", 18, 21, []),
        ("impl", "Circle", 23, 28, [
            ("method", "Circle/area", 24, 27, []),
        ]),
        ("impl", "Kind", 30, 34, [
            ("method", "Kind/fmt", 31, 33, []),
        ]),
        ("module", "util", 36, 43, [
            ("function", "util/double", 37, 42, [
                ("function", "util/double/helper", 38, 40, []),
            ]),
        ]),
    ],
    "list.c": [
        ("constant", "LIST_MAX", 3, 3, []),
        ("macro", "SQUARE", 4, 4, []),
        ("struct", "node", 6, 9, []),
        ("type", "list_t", 11, 14, [
            ("struct", "list_t/list", 11, 14, []),
        ]),
        ("enum", "color", 16, 16, []),
        ("function", "node_new", 18, 23, []),
        ("function", "list_push", 25, 31, []),
    ],
    "panel.tsx": [
        ("interface", "PanelProps", 3, 5, [
            ("property", "PanelProps/title", 4, 4, []),
        ]),
        ("function", "Panel", 7, 10, [
            ("function", "Panel/header", 8, 8, []),
        ]),
        ("class", "Frame", 12, 16, [
            ("method", "Frame/render", 13, 15, []),
        ]),
    ],
    "server.go": [
        ("constant", "DefaultPort", 6, 6, []),
        ("interface", "Handler", 9, 11, [
            ("method", "Handler/Serve", 10, 10, []),
        ]),
        ("struct", "Server", 13, 16, []),
        ("type", "Middleware", 18, 18, []),
        ("function", "New", 20, 22, []),
        ("method", "Server/Handle", 24, 26, []),
        ("method", "Server/Len", 28, 31, []),
    ],
    "shapes.cpp": [
        ("namespace", "geo", 3, 31, [
            ("namespace", "geo/detail", 4, 6, [
                ("function", "geo/detail/square", 5, 5, []),
            ]),
            ("class", "geo/Polygon", 8, 23, [
                ("method", "geo/Polygon/Polygon", 11, 11, []),
                ("method", "geo/Polygon/~Polygon", 12, 12, []),
                ("method", "geo/Polygon/area", 13, 13, []),
                ("method", "geo/Polygon/add", 14, 16, []),
                ("struct", "geo/Polygon/Vertex", 19, 21, []),
            ]),
            ("method", "geo/Polygon/area", 25, 28, []),
            ("enum", "geo/Winding", 30, 30, []),
        ]),
        ("function", "main", 33, 36, []),
    ],
    "shapes.py": [
        ("constant", "T", 5, 5, []),
        ("constant", "DEFAULT_SCALE", 6, 6, []),
        ("class", "Point", 9, 22, [
            ("method", "Point/distance", 14, 18, [
                ("function", "Point/distance/square", 15, 16, []),
            ]),
            ("method", "Point/origin", 20, 22, []),
        ]),
        ("function", "scale", 25, 26, []),
    ],
    "store.ts": [
        ("interface", "Entry", 2, 6, [
            ("property", "Entry/key", 3, 3, []),
            ("property", "Entry/value", 4, 4, []),
            ("method", "Entry/touch", 5, 5, []),
        ]),
        ("type", "Key", 8, 8, []),
        ("enum", "Mode", 10, 13, []),
        ("namespace", "Storage", 15, 31, [
            ("class", "Storage/Store", 16, 26, [
                ("property", "Storage/Store/items", 17, 17, []),
                ("method", "Storage/Store/get", 19, 21, []),
                ("method", "Storage/Store/[Symbol.iterator]", 23, 25, []),
            ]),
            ("function", "Storage/open", 28, 30, []),
        ]),
        ("constant", "DEFAULT_MODE", 33, 33, []),
    ],
    "widgets.js": [
        ("constant", "MAX_WIDGETS", 4, 4, []),
        ("class", "Widget", 6, 21, [
            ("property", "Widget/#id", 7, 7, []),
            ("method", "Widget/constructor", 9, 11, []),
            ("method", "Widget/draw", 13, 16, [
                ("function", "Widget/draw/pad", 14, 14, []),
            ]),
            ("method", "Widget/onClick", 18, 20, []),
        ]),
        ("function", "makeWidget", 23, 28, [
            ("function", "makeWidget/validate", 24, 26, []),
        ]),
        ("function", "registry", 30, 30, []),
    ],
}  # fmt: skip

# line -> innermost symbol: inside nested definitions, between them, and outside any.
ENCLOSING = {
    "shapes.py": {1: None, 16: "Point/distance/square", 17: "Point/distance", 19: "Point", 23: None},
    "widgets.js": {14: "Widget/draw/pad", 17: "Widget", 22: None, 25: "makeWidget/validate"},
    "store.ts": {4: "Entry/value", 7: None, 20: "Storage/Store/get", 27: "Storage", 32: None},
    "panel.tsx": {8: "Panel/header", 11: None, 14: "Frame/render"},
    "server.go": {10: "Handler/Serve", 14: "Server", 19: None, 29: "Server/Len"},
    "geometry.rs": {12: None, 26: "Circle/area", 39: "util/double/helper", 41: "util/double"},
    "Library.java": {10: "Library", 22: "Library/map", 32: "Library/Status/CLOSED", 35: None},
    "list.c": {8: "node", 12: "list_t/list", 20: "node_new", 24: None},
    "shapes.cpp": {15: "geo/Polygon/add", 24: "geo", 27: "geo/Polygon/area", 32: None},
    "Inventory.cs": {2: None, 22: "Shop.Inventory/Stock/Add", 28: "Shop.Inventory"},
    "Scoped.cs": {5: "Shop.Billing/Invoice/Total", 7: "Shop.Billing"},
    "account.rb": {20: "Bank/Account", 22: "Bank/Account/registry", 27: None, 29: "helper"},
    "Cart.php": {1: None, 31: "App\\Shop/Cart/price", 37: "App\\Shop"},
    "deploy.sh": {4: None, 18: "deploy/rollback", 20: "deploy", 23: None},
}


def shape(symbols):
    return [(s.kind, s.name_path, s.start_line, s.end_line, shape(s.children)) for s in symbols]


def load(name: str) -> tuple[Path, Text]:
    path = FIXTURES[name]
    return path, Text.from_bytes(path.read_bytes())


def test_every_language_has_a_fixture():
    assert {language_for(name) for name in OUTLINES} == set(GRAMMARS)
    assert set(ENCLOSING) == set(OUTLINES) == set(FIXTURES)
    assert all(language_for(name) == path.parent.name for name, path in FIXTURES.items())


@pytest.mark.parametrize("name", sorted(OUTLINES))
def test_outline(name):
    assert shape(outline(*load(name))) == OUTLINES[name]


@pytest.mark.parametrize("name", sorted(ENCLOSING))
def test_enclosing_symbols(name):
    path, text = load(name)
    assert enclosing_symbols(path, text, ENCLOSING[name]) == ENCLOSING[name]


@pytest.mark.parametrize("name", sorted(OUTLINES))
def test_selection_is_the_name_inside_the_range(name):
    path, text = load(name)
    data = text.content.encode()
    lines = data.split(b"\n")
    for symbol in (s for top in outline(path, text) for s in top.walk()):
        row, col, end_row, end_col = symbol.selection
        assert (symbol.range[0], symbol.range[1]) <= (row, col) and (end_row, end_col) <= symbol.range[2:]
        assert lines[row][col:end_col].decode() == symbol.name


# Definitions a developer expects, as real code writes them (each once missed or mislabelled).
SNIPPETS = {
    "ptr.cpp": (
        (
            "int* make() { return nullptr; }\n"
            "Foo& Foo::operator=(const Foo& o) { return *this; }\n"
            "const std::string& app::core::name() { return s; }\n"
            "char **split(const char *s);\n"
            "class W { W& self() { return *this; } int* raw(); int count; };\n"
            "void run() { int local(int); int (*fp)(int) = 0; }\n"
        ),
        [
            ("function", "make", 1, 1, []),
            ("method", "Foo/operator=", 2, 2, []),
            ("method", "app/core/name", 3, 3, []),
            ("function", "split", 4, 4, []),
            ("class", "W", 5, 5, [("method", "W/self", 5, 5, []), ("method", "W/raw", 5, 5, [])]),
            ("function", "run", 6, 6, []),
        ],
    ),
    "proto.c": (
        (
            "int add(int a, int b);\n"
            "static char **split(const char *s, char sep) { return 0; }\n"
            "typedef int (*cmp_fn)(const void *, const void *);\n"
            "int add(int a, int b) { return a + b; }\n"
        ),
        [
            ("function", "add", 1, 1, []),
            ("function", "split", 2, 2, []),
            ("type", "cmp_fn", 3, 3, []),
            ("function", "add", 4, 4, []),
        ],
    ),
    "api.js": (
        (
            "export const api = {\n"
            "  get(id) { return id; },\n"
            "  put: (id) => id,\n"
            "  size: 3,\n"
            "};\n"
            "class C { static n = 1; #run = () => 0; }\n"
        ),
        [
            ("object", "api", 1, 5, [("method", "api/get", 2, 2, []), ("method", "api/put", 3, 3, [])]),
            ("class", "C", 6, 6, [("property", "C/n", 6, 6, []), ("method", "C/#run", 6, 6, [])]),
        ],
    ),
    "decorated.ts": (
        (
            "@Component({ selector: 'x' })\n"
            "export class X {\n"
            "  @Input() name: string;\n"
            "  @HostListener('click')\n"
            "  onClick() {}\n"
            "}\n"
        ),
        [("class", "X", 1, 6, [("property", "X/name", 3, 3, []), ("method", "X/onClick", 4, 5, [])])],
    ),
    "attrs.rs": (
        ("#[cfg(test)]\nmod tests {\n    #[test]\n    fn works() {}\n}\n"),
        [("module", "tests", 1, 5, [("function", "tests/works", 3, 4, [])])],
    ),
    "alias.py": ("type Vector = list[float]\n", [("type", "Vector", 1, 1, [])]),
}


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_real_code_snippets(name, tmp_path):
    source, expected = SNIPPETS[name]
    assert shape(outline(tmp_path / name, Text.from_str(source))) == expected


def test_pyproject_lists_every_package():
    """grammars/ is mapped into the package, which rules out automatic package discovery:
    a package missing from pyproject's list would be missing from the wheel."""
    import tomllib

    root = Path(__file__).parents[2]
    listed = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(root).parts) for init in (root / "lsp_agent").rglob("__init__.py")
    }
    assert listed == found | {"lsp_agent.grammars"}


def test_each_language_folder_is_complete():
    for language, entry in GRAMMARS.items():
        grammars = Path(grammars_folder())
        assert entry.extensions and entry.queries and fixtures_of(language)
        assert all((grammars / query).is_file() for query in entry.queries)
