"""Locals of JavaScript, TypeScript and Go, as Python's: a reference to a local variable or
parameter resolves to its binding in scope (the closest function that binds it; the last
binding before the use, else the first), so definition and references of a local are exact
and never reach another function's or file's name."""

from __future__ import annotations

import pytest

from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

TS = """export function total(items: number[], { rate, cap: limit }: Opts) {
  let sum = 0;
  for (const item of items) { sum += item * rate; }
  const clamp = (sum: number) => Math.min(sum, limit);
  try { sum = clamp(sum); } catch (err) { console.log(err); }
  return sum;
}

export function other(sum: number) {
  return sum;
}
"""

GO = """package shop

func (c *Cart) Total(items []int, rate int) (total int) {
	sum := 0
	for _, item := range items {
		sum += item * rate
	}
	clamp := func(sum int) int { return sum }
	return clamp(sum) + c.base
}

func Other(sum int) int { return sum }
"""

JS = """function run(opts) {
  const [first, ...rest] = opts.items;
  var seen = new Set(rest);
  return first + seen.size;
}
"""


@pytest.fixture
def nav(tmp_path):
    (tmp_path / "total.ts").write_text(TS)
    (tmp_path / "cart.go").write_text(GO)
    (tmp_path / "run.js").write_text(JS)
    (tmp_path / "sum.ts").write_text("export const sum = 1;\n")  # a same-named top-level
    ctx = Context(Workspace([tmp_path]))
    return lambda tool, **arguments: call(ctx, tool, {"precision": "syntax", **arguments})


def lines(answer: dict) -> list[tuple[str, int, str]]:
    return [(r["path"], r["line"], r["role"]) for r in answer["references"]]


def defined(nav, path: str, line: int, column: int) -> tuple[int, str, str]:
    answer = nav("definition", path=path, line=line, column=column, body=False)
    (found,) = answer["definitions"]
    return found["start_line"], found["kind"], answer["text"].splitlines()[0]


@pytest.mark.parametrize(
    ("path", "line", "column", "expected"),
    [
        ("total.ts", 3, 31, (2, "variable", "a local of total, line 2")),  # sum += …
        ("total.ts", 6, 10, (2, "variable", "a local of total, line 2")),  # return sum
        ("total.ts", 4, 43, (4, "parameter", "a parameter of clamp, line 4")),  # the arrow's own sum
        ("total.ts", 4, 48, (1, "parameter", "a parameter of total, line 1")),  # limit, from { cap: limit }
        ("total.ts", 3, 47, (1, "parameter", "a parameter of total, line 1")),  # rate, from { rate }
        ("total.ts", 5, 55, (5, "variable", "a local of total, line 5")),  # catch (err)
        ("cart.go", 6, 3, (4, "variable", "a local of Total, line 4")),  # sum += …
        ("cart.go", 6, 17, (3, "parameter", "a parameter of Total, line 3")),  # rate
        ("cart.go", 6, 10, (5, "variable", "a local of Total, line 5")),  # item, from range :=
        ("cart.go", 8, 38, (8, "parameter", "a parameter of function, line 8")),  # the literal's sum
        ("cart.go", 9, 22, (3, "parameter", "a parameter of Total, line 3")),  # the receiver c
        ("run.js", 4, 10, (2, "variable", "a local of run, line 2")),  # first, from [first, ...rest]
        ("run.js", 3, 22, (2, "variable", "a local of run, line 2")),  # rest
    ],
)
def test_a_local_is_defined_by_its_binding_in_scope(nav, path, line, column, expected):
    start, kind, header = defined(nav, path, line, column)
    assert (start, kind) == expected[:2]
    assert expected[2] in header


def test_references_of_a_local_are_its_scopes_uses(nav):
    answer = nav("references", path="total.ts", line=6, column=10)
    assert lines(answer) == [
        ("total.ts", 2, "definition"),
        ("total.ts", 3, "use"),
        ("total.ts", 5, "use"),  # sum = clamp(sum): both on the line, one line
        ("total.ts", 5, "use"),
        ("total.ts", 6, "use"),
    ]
    assert all(r["match"] == "scope" for r in answer["references"])
    assert "a local of total: its uses in its scope" in answer["text"]
    # the arrow's parameter shadows it: its own uses only, none of total's, none of other's
    arrow = nav("references", path="total.ts", line=4, column=19)
    assert [(r["line"], r["column"]) for r in arrow["references"]] == [(4, 18), (4, 43)]


def test_references_of_a_go_local_and_parameter(nav):
    local = nav("references", path="cart.go", line=4, column=2)
    assert [(r["line"], r["role"]) for r in local["references"]] == [
        (4, "definition"),
        (6, "use"),
        (9, "use"),  # clamp(sum), not the literal's own sum on line 8
    ]
    receiver = nav("references", path="cart.go", line=3, column=7)
    assert [(r["line"], r["role"]) for r in receiver["references"]] == [(3, "definition"), (9, "use")]


def test_a_name_that_is_no_local_is_searched_by_name(nav):
    answer = nav("references", path="sum.ts", line=1, column=14)
    assert "its scope" not in answer["text"]
    assert {r["path"] for r in answer["references"]} >= {"sum.ts", "total.ts"}
