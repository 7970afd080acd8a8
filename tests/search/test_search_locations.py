"""The search answer's `locations`: every match the answer covers, for editors' quickfix lists."""

from lsp_agent.config import Settings
from lsp_agent.tools import Context, call


def test_locations_cover_every_match_in_path_then_line_order(tmp_path, run):
    (tmp_path / "b.py").write_text("x = 'needle'\n")
    (tmp_path / "a.py").write_text("def f():\n    return 'é needle', 'needle'\n\nneedle = 1\n")
    answer = run("search", pattern="needle")
    assert answer["locations"] == [
        {
            "path": "a.py",
            "line": 2,
            "column": 15,
            "end_column": 21,
            "text": "    return 'é needle', 'needle'",
        },
        {"path": "a.py", "line": 4, "column": 1, "end_column": 7, "text": "needle = 1"},
        {"path": "b.py", "line": 1, "column": 6, "end_column": 12, "text": "x = 'needle'"},
    ]


def test_locations_follow_the_page(tmp_path, run):
    (tmp_path / "a.txt").write_text("".join(f"hit {i}\n" for i in range(10)))
    answer = run("search", pattern="hit", offset=3, limit=2)
    assert [loc["line"] for loc in answer["locations"]] == [4, 5]


def test_locations_are_left_out_when_only_counts_are_kept(tmp_path, ws):
    (tmp_path / "big.txt").write_text("hit\nmiss\n" * 5000)  # runs of one line: even numbers overflow
    answer = call(Context(ws, Settings(max_chars=200)), "search", {"pattern": "hit"})
    assert answer["total_matches"] == 5000
    assert answer["locations"] is None


def test_following_next_pages_through_every_match_exactly_once(tmp_path, ws):
    for name in ("a", "b", "c"):
        body = "".join(
            f"class {name.upper()}{i}:\n    def f(self):\n        return 'needle {i}' * 3\n"
            for i in range(40)
        )
        (tmp_path / f"{name}.py").write_text(body)
    ctx = Context(ws, Settings(max_chars=2_000))
    every = call(ctx, "search", {"pattern": "needle", "max_chars": 100_000})["locations"]
    assert len(every) == 120
    answer = call(ctx, "search", {"pattern": "needle"})
    assert answer["stage"] > 1 and answer["next"] == {"offset": 0, "limit": answer["next"]["limit"]}
    seen, pages = [], 0
    while answer["next"] is not None:
        answer = call(ctx, "search", {"pattern": "needle", **answer["next"]})
        assert answer["stage"] == 1 and len(answer["text"]) <= 2_000
        seen += answer["locations"]
        pages += 1
    assert seen == every and pages > 2  # each match once, in path-then-line order
