"""The sharper syntax source (issue 23, item 4) on a project whose true answers are known
(tests/fixtures/precision: Python, TypeScript, Go, and a vendored JavaScript file): what a
type-aware server would answer, reached from the syntax alone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lsp_agent.syntax import GRAMMARS, language_for, outline, walk
from lsp_agent.syntax.languages import references_query
from lsp_agent.syntax.parsing import PARSES
from lsp_agent.syntax.references import _captures, _text_role, classify, occurrences, root_of
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Text, Workspace

FIXTURES = Path(__file__).parents[1] / "fixtures" / "precision"
MODELS = "py/app/models.py"


@pytest.fixture(scope="module")
def nav():
    ctx = Context(Workspace([FIXTURES]))
    return lambda tool, **arguments: call(ctx, tool, arguments)


def uses(answer: dict) -> list[tuple[str, int, str]]:
    return [(r["path"], r["line"], r["role"]) for r in answer["references"]]


def test_references_stay_in_the_definitions_language(nav):
    answer = nav("references", name="Model/save")
    assert not [u for u in uses(answer) if u[0].startswith("vendor/")]
    assert (
        "left out: 2 uses in files of other languages than the definitions' (javascript 2)" in answer["text"]
    )
    # a name defined in both languages keeps both
    assert {u[0] for u in uses(nav("references", name="save"))} >= {MODELS, "vendor/widget.js"}


def test_keywords_never_match(nav):
    assert uses(nav("references", name="from")) == [
        ("ts/src/from.ts", 1, "definition"),
        ("ts/src/view.ts", 1, "import"),  # `{ from,`, not the keyword after the braces
        ("ts/src/view.ts", 24, "call"),
        ("ts/src/view.ts", 1, "string"),  # the module path "./from"
    ]
    assert uses(nav("references", name="of")) == [
        ("ts/src/from.ts", 5, "definition"),
        ("ts/src/view.ts", 1, "import"),
        ("ts/src/view.ts", 25, "call"),  # not `for (const x of …)` on line 24
    ]


def test_members_ranked_by_the_receivers_class(nav):
    answer = nav("references", name="Model/save")
    assert uses(answer) == [
        (MODELS, 10, "definition"),
        (MODELS, 26, "call"),  # m: Model
        (MODELS, 27, "call"),  # Model()
        (MODELS, 29, "call"),  # f: the syntax does not say, so a candidate after them
    ]
    text = answer["text"]
    assert "first: 2 uses whose receiver is a Model by the syntax" in text
    assert (
        "left out: 2 uses on receivers whose `save` is not Model's by the syntax (super() in Model 1, Form 1)"
        in text
    )
    assert "left out: 1 bare use of a local `save`" in text  # save(1): a bare call is no method


def test_super_is_not_this_class(nav):
    assert (MODELS, 12, "call") not in uses(nav("references", name="Model/save"))
    base = nav("references", name="Base/save")
    assert uses(base) == [("py/app/base.py", 9, "definition"), (MODELS, 12, "call"), (MODELS, 29, "call")]
    assert "not Base's by the syntax (Model 2, Form 1)" in base["text"]  # Model overrides save


def test_typescript_receivers(nav):
    answer = nav("references", name="View/render")
    assert uses(answer) == [
        ("ts/src/view.ts", 4, "definition"),
        ("ts/src/view.ts", 9, "call"),  # this.render() in View
        ("ts/src/view.ts", 20, "call"),  # v: View
        ("ts/src/view.ts", 21, "call"),  # new View()
        ("ts/src/view.ts", 23, "call"),  # other: any
    ]
    assert "(Label 1)" in answer["text"]  # new Label().render()


def test_go_receivers_and_import_paths(nav):
    answer = nav("references", name="Server/Close")
    assert uses(answer) == [
        ("go/main.go", 7, "definition"),
        ("go/main.go", 10, "call"),  # s *Server, the method's receiver
        ("go/main.go", 15, "call"),  # srv := &Server{}
        ("go/main.go", 16, "call"),  # through a package variable: a candidate
    ]
    assert "first: 2 uses whose receiver is a Server by the syntax" in answer["text"]
    assert ("go/main.go", 3, "import") in uses(nav("references", name="metrics"))


def test_from_a_top_level_function_obj_x_is_not_it(nav):
    for line, column in ((21, 5), (30, 5)):  # its definition, a bare call
        answer = nav("references", path=MODELS, line=line, column=column)
        assert uses(answer) == [(MODELS, 21, "definition"), (MODELS, 30, "call")]
        assert "left out: 3 definitions of `save` in classes" in answer["text"]
        assert (
            "left out: 5 member uses (obj.save, obj no import), not the top-level function" in answer["text"]
        )


def test_assignments_are_definitions(nav):
    outlined = {
        (s.kind, s.name_path)
        for s in walk(
            outline(FIXTURES / "py/app/conf.py", Text.from_bytes((FIXTURES / "py/app/conf.py").read_bytes()))
        )
    }
    assert {("variable", "connections"), ("variable", "gettext_lazy")} <= outlined
    assert "property objects  5" in nav("symbols", path=MODELS)["text"]
    assert [m["name_path"] for m in nav("find_symbol", name_path="connections")["matches"]] == ["connections"]
    found = nav("definition", name="gettext_lazy")
    assert found["definitions"][0]["kind"] == "variable" and found["guess"] is True
    assert "a guess: the only definition by that name" in found["text"]
    from_use = nav("definition", path="py/app/conf.py", line=8, column=12)
    assert from_use["definitions"][0]["start_line"] == 3 and from_use["guess"] is False


def test_go_package_level_vars_and_consts(nav):
    text = nav("symbols", path="go/metrics/metrics.go")["text"]
    for line in ("variable DefaultRegisterer  3", "variable enabled  6", "variable a  7", "variable b  7",
                 "constant Version  11", "constant Build  12"):  # fmt: skip
        assert line in text
    found = nav("definition", path="go/main.go", line=16, column=14)
    assert found["definitions"][0]["name_path"] == "DefaultRegisterer" and found["guess"] is False
    assert 'through `import metrics "example.com/app/metrics"`' in found["text"]


@pytest.mark.parametrize(
    "line, column, expected, guess",
    [
        (8, 17, ["Base/__init__"], False),  # super().__init__: not the file's own __init__
        (12, 17, ["Base/save"], False),  # super().save()
        (11, 14, ["Base/clean"], False),  # self.clean(): inherited
        (26, 7, ["Model/save"], False),  # m: Model
        (27, 13, ["Model/save"], False),  # Model().save()
        (30, 5, ["save"], False),  # a bare call: the function, not a method
        (29, 7, ["Model/save", "Form/save", "Base/save"], True),  # f: unknown, no function save
        (31, 13, [], False),  # **options: a dict's get
        (33, 11, [], False),  # items = []: a list's append, not Element/append
    ],
)
def test_definition_from_receivers(nav, line, column, expected, guess):
    found = nav("definition", path=MODELS, line=line, column=column, body=False)
    assert [d["name_path"] for d in found["definitions"]] == expected
    assert found["guess"] is guess
    if expected and guess:
        assert f"a guess: {len(expected)} definitions by that name" in found["text"]
    if not expected:
        assert "of a builtin" in found["text"]


def test_definition_typescript(nav):
    def at(line: int, column: int) -> list[str]:
        return [
            d["name_path"]
            for d in nav("definition", path="ts/src/view.ts", line=line, column=column)["definitions"]
        ]

    assert at(20, 5) == ["View/render"]
    assert at(22, 15) == ["Label/render"]
    assert at(25, 5) == ["of"]


def _naive_roles(path: Path, text: Text, name: str) -> list[tuple[int, int, str]]:
    """The classification before the one-pass rewrite: every capture scanned per use."""
    parsed = PARSES.parse(path, text, language_for(path))
    definitions = {s.selection[:2] for s in walk(outline(path, text)) if s.name == name}
    captures = _captures(parsed, (0, text.line_count))
    out = []
    for n in range(1, text.line_count + 1):
        line = text.line(n)
        for column in occurrences(line, name):
            start = (n - 1, len(line[:column].encode()))
            end = (n - 1, start[1] + len(name.encode()))
            token = root_of(parsed).descendant_for_point_range(start, end)
            if not token.is_named and tuple(token.start_point) == start:
                continue
            node = root_of(parsed).named_descendant_for_point_range(start, end)
            out.append((n, column + 1, _naive_role(node, start, end, definitions, captures)))
    return out


def _naive_role(node, start, end, definitions, captures) -> str:
    def inside(containers):
        return any(c.start_byte <= node.start_byte and node.end_byte <= c.end_byte for c in containers)

    # by the name's node: `this.#id` is an attribute, which comparing the name's own span missed
    member = any(
        (m.start_byte, m.end_byte) == (node.start_byte, node.end_byte) for m in captures.get("member", ())
    )
    if (role := _text_role(node)) is not None:
        return role
    if start in definitions:
        return "definition"
    for capture, role in (
        ("import", "import"),
        ("inherit", "inheritance"),
        ("call", "call"),
        ("type", "type"),
    ):
        nodes = captures.get(capture, ())
        if capture == "call":
            if any(tuple(c.end_point) == end and inside([c]) for c in nodes):
                return role
        elif inside(nodes):
            return role
    if "type_identifier" in node.type:
        return "type"
    return "attribute" if member else "use"


def _sources() -> list[Path]:
    roots = [FIXTURES.parent / "grammars", FIXTURES, FIXTURES.parent / "navigation"]
    found = (p for root in roots for p in root.rglob("*") if p.is_file() and language_for(p) in GRAMMARS)
    return sorted(p for p in found if references_query(language_for(p)) is not None)


@pytest.mark.parametrize("path", _sources(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_one_pass_classification_equals_the_scan_per_use(path):
    """Every name of every fixture file gets the role the quadratic scan gave it (but for the
    import path of a Go import, which is now an import)."""
    text = Text.from_bytes(path.read_bytes())
    names = sorted(set(re.findall(r"[A-Za-z_]\w*", text.content)))
    go = language_for(path) == "go"
    for name in names:
        got = [(u.line, u.column, u.role) for u in classify(path, text, name, range(1, text.line_count + 1))]
        want = _naive_roles(path, text, name)
        if go:
            got = [(n, c, "string" if r == "import" and '"' in text.line(n) else r) for n, c, r in got]
            want = [(n, c, "string" if r == "import" and '"' in text.line(n) else r) for n, c, r in want]
        assert got == want, name


@pytest.mark.parametrize(
    "line, column, expected",
    [
        (5, 16, ("parameter", "inner/value", 4, "a parameter of inner, line 4")),
        (5, 24, ("variable", "outer/scale", 2, "a local of outer, line 2")),  # a closure's: the last before
        (8, 18, ("variable", "outer/scale", 7, "a local of outer, line 7")),
        (8, 12, ("function", "outer/inner", 4, "a local of outer, line 4")),  # a nested def: its symbol
        (2, 13, ("parameter", "outer/factor", 1, "a parameter of outer, line 1")),
    ],
)
def test_definition_of_locals_and_parameters(nav, line, column, expected):
    found = nav("definition", path="py/app/scopes.py", line=line, column=column, body=False)
    (first,) = found["definitions"]
    assert (first["kind"], first["name_path"], first["start_line"]) == expected[:3]
    assert expected[3] in found["text"] and found["guess"] is False


def test_a_bare_name_in_a_class_body_is_its_member(nav):
    store = nav("references", name="Store/put")
    assert [(r["line"], r["role"], r["match"]) for r in store["references"]] == [
        (12, "definition", "definition"),  # the one asked for
        (18, "call", "receiver"),  # super().put() in Repo(Store)
        (20, "use", "receiver"),  # put.alters_data in Repo's body: Repo's put, inherited from Store
    ]
    assert "── code, by the receiver's class" in store["text"]
    repo = nav("references", name="Repo/put")
    assert [(u[1], u[2]) for u in uses(repo)] == [(17, "definition"), (20, "use")]
    assert "(super() in Repo 1)" in repo["text"]


def test_imports_of_a_package_opened_as_the_root():
    """`from app.functional import lazy` inside app/, with app/ itself the workspace root."""
    ctx = Context(Workspace([FIXTURES / "py" / "app"]))
    found = call(ctx, "definition", {"path": "conf.py", "line": 4, "column": 16})
    assert [(d["path"], d["name_path"]) for d in found["definitions"]] == [("functional.py", "lazy")]
    assert "through `from app.functional import lazy`" in found["text"] and found["guess"] is False


JUDGED = """import json


class Model:
    def dump(self):
        return self.dump()


class Form:
    def dump(self):
        pass


def run(m: Model, f: Form, x):
    m.dump()
    f.dump()
    x.dump()
    json.dump({}, None)
    {}.dump()
"""

JUDGED_TS = """import * as fs from "fs";

export class Model {
  dump(): void {
    this.dump();
  }
}

export class Form {
  dump(): void {}
}

export function run(m: Model, f: Form, x: any) {
  m.dump();
  f.dump();
  x.dump();
  fs.dump();
  [].dump();
}
"""


def test_from_a_methods_definition_its_class_is_judged(tmp_path):
    """Started from `Model.dump`'s definition, the syntax states its own uses first, then the
    candidates; a module's, a literal's and (in Python, as pyright) another class's uses are
    left out."""
    (tmp_path / "app.py").write_text(JUDGED)
    ctx = Context(Workspace([tmp_path]))
    answer = call(ctx, "references", {"path": "app.py", "line": 5, "column": 9, "precision": "syntax"})
    assert [(r["line"], r["role"], r["match"]) for r in answer["references"]] == [
        (5, "definition", "definition"),
        (6, "call", "receiver"),  # self in Model
        (15, "call", "receiver"),  # m: Model
        (17, "call", "name"),  # x: the syntax does not say
    ]
    text = answer["text"]
    assert "left out: 1 definition of `dump` outside Model" in text
    assert (
        "left out: 3 uses on receivers whose `dump` is not Model's by the syntax (Form 1, json 1, dict 1)"
        in text
    )
    assert "── code, by the receiver's class" in text and "── code, by name" in text
    named = call(ctx, "references", {"name": "Model/dump", "precision": "syntax"})
    assert named["references"] == answer["references"]


def test_in_typescript_other_classes_stay_as_the_last_candidates(tmp_path):
    """tsserver counts an override or another implementation of an interface member as one
    symbol: from a definition, another class's definition and uses stay, labelled, last."""
    (tmp_path / "app.ts").write_text(JUDGED_TS)
    ctx = Context(Workspace([tmp_path]))
    answer = call(ctx, "references", {"path": "app.ts", "line": 4, "column": 3, "precision": "syntax"})
    assert [(r["line"], r["role"], r["match"]) for r in answer["references"]] == [
        (4, "definition", "definition"),
        (10, "definition", "name"),  # Form's: a candidate
        (5, "call", "receiver"),  # this in Model
        (14, "call", "receiver"),  # m: Model
        (16, "call", "name"),  # x: the syntax does not say
        (15, "call", "name"),  # f: Form, another class: a candidate, last
    ]
    text = answer["text"]
    assert "(fs 1, Array 1)" in text
    assert "── definitions of other classes" in text
    named = call(ctx, "references", {"name": "Model/dump", "precision": "syntax"})
    assert [(r["line"], r["match"]) for r in named["references"]] == [
        (4, "definition"),
        (5, "receiver"),
        (14, "receiver"),
        (16, "name"),
    ]


OBSERVER_TS = """export interface Observer<T> {
  next: (value: T) => void;
}
export class ConsumerObserver<T> implements Observer<T> {
  next(value: T): void {}
}
function noop() {}
export function make<T>(next?: (v: T) => void): Observer<T> {
  return { next: next ?? noop };
}
"""


def test_an_object_literals_key_is_a_member_not_a_local(tmp_path):
    """`{ next: noop }` names an observer's `next` (tsserver counts it among the member's
    references): it stays a candidate of the member, where the parameter `next` and its use
    beside the key are bare locals, left out; a file's use table says the same."""
    from lsp_agent.syntax.index import fresh_parse
    from lsp_agent.syntax.references import table_stamp, table_uses, use_table
    from lsp_agent.syntax.uses import UseTable, pack_table

    path = tmp_path / "observer.ts"
    path.write_text(OBSERVER_TS)
    answer = call(Context(Workspace([tmp_path])), "references", {"name": "ConsumerObserver/next", "precision": "syntax"})  # fmt: skip
    assert [(r["line"], r["role"], r["match"]) for r in answer["references"]] == [
        (5, "definition", "definition"),
        (9, "attribute", "name"),  # the key; the `next` after it is the parameter
    ]
    assert "left out: 2 bare uses of a local `next`" in answer["text"]
    text = Text.from_bytes(OBSERVER_TS.encode())
    key = classify(path, text, "next", [9])
    assert [(u.column, u.role, u.qualified) for u in key] == [(12, "attribute", True), (18, "use", False)]
    parsed = fresh_parse("typescript", OBSERVER_TS.encode())
    found = use_table(parsed, text, {}, {})
    assert found is not None
    stamp = table_stamp("typescript")
    table = UseTable.of(pack_table(*found, stamp), stamp)
    assert table is not None
    tabled = table_uses(table, text, "next", [9], receivers=True)
    assert [(u.column, u.role, u.qualified, u.receiver) for u in tabled or []] == [(u.column, u.role, u.qualified, u.receiver) for u in key]  # fmt: skip


BASES_TS = """export class Base {
  constructor(readonly size: number) {}
}
export class Derived extends Base {
  constructor() {
    super(1);
    const Inner = class extends Array { constructor() { super(); } };
  }
  Base() { return this.Base(); }
}
export class Further extends Derived {
  constructor() { super(); }
}
export class Spread extends
  Base {
  constructor() { super(3); }
}
export const made = new Base(2);
export const notCalled = Base;
"""


def test_a_constructor_runs_where_new_and_super_call_it(tmp_path):
    """tsserver counts `new Base(…)` and `super(…)` in a class extending Base among Base's
    constructor's references, though no word names it: the syntax finds both, stated by the
    class it shows; `super()` in a class extending another class is that class's."""
    (tmp_path / "bases.ts").write_text(BASES_TS)
    ctx = Context(Workspace([tmp_path]))
    named = call(ctx, "references", {"name": "Base/constructor", "precision": "syntax"})
    assert [(r["line"], r["column"], r["role"], r["match"], r["symbol"]) for r in named["references"]] == [
        (2, 3, "definition", "definition", "Base/constructor"),
        (6, 5, "call", "receiver", "Derived/constructor"),
        (16, 19, "call", "receiver", "Spread/constructor"),  # its heritage over two lines
        (18, 25, "call", "receiver", None),
    ]  # not `this.Base()`, a method's call; not `super()` in Inner nor in Further
    assert "first: 3 uses whose receiver is a Base by the syntax" in named["text"]
    from_derived = call(
        ctx, "references", {"path": "bases.ts", "line": 5, "column": 3, "precision": "syntax"}
    )
    assert [(r["line"], r["column"]) for r in from_derived["references"] if r["match"] == "receiver"] == [
        (12, 19)
    ]
