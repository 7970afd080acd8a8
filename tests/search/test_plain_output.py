"""The usual search reads rg's plain output (search/plain.py), not its JSON: what it finds
is what the JSON engine finds, to the last field, whatever the files hold and however the
output is cut into pieces; a file that turned out binary after a match is withdrawn as the
JSON engine withdraws it; a file that changed between rg's read and ours is searched again;
output the parser does not know has the folder searched again as JSON."""

from __future__ import annotations

import os
import stat
import subprocess
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lsp_agent.search import Collector, Query, find_rg, plain, ripgrep, targets_of
from lsp_agent.search.ripgrep import Lines, RipgrepEngine
from lsp_agent.tools.chain import keep_details
from lsp_agent.workspace import Workspace

RG = find_rg()
pytestmark = pytest.mark.skipif(RG is None, reason="needs rg")

LINES = [
    "self.x = self.y",
    "naïve café — self",
    "Σίσυφος self_self",
    "x\tself\r",
    "",
    "   ",
    "selfself self",
    "end…",
]
PATTERNS = [
    "self",
    "e",
    "self|x",
    "x*",
    "^",
    "$",
    "\\s*$",
    "\\s+$",
    "[^\\x00-\\x7f]+",
    "é",
    "\\bself\\b",
    "\\r$",
    "zzz",
]


def outcome(
    root: Path, query: Query, *, plain_output: bool, budget: int | None = None, rg: str | None = None
):
    """What a search of all of `root` finds, by the plain engine or the JSON one."""
    ws = Workspace([root])
    sink = Collector(ws, None if budget is None else keep_details(budget), set())
    engine = RipgrepEngine(rg or RG, query)
    engine.plain = engine.plain and plain_output
    targets, _ = targets_of(ws, None)
    for target in targets:
        engine.search(target, sink, lambda: False, lambda message: None)
    return sink.outcome(engine.name, query.multiline)


@contextmanager
def pieces(detailed: int, counted: int):
    """The plain parser taking a file's match lines `detailed` / `counted` bytes at a time."""
    saved = plain.DETAILED_PIECE, plain.PIECE
    plain.DETAILED_PIECE, plain.PIECE = detailed, counted
    try:
        yield
    finally:
        plain.DETAILED_PIECE, plain.PIECE = saved


files = st.dictionaries(
    st.sampled_from(["a.py", "b.txt", "sub/c.md", "sub/deep/d.js", os.fsdecode(b"n\xffame.txt")]),
    st.tuples(
        st.lists(st.sampled_from(LINES), max_size=40),
        st.sampled_from(["\n", "\r\n"]),
        st.booleans(),  # a byte that is not UTF-8 in the middle
        st.booleans(),  # a final line end
        st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]),  # with a byte order mark: rg reads it as text
    ),
    min_size=1,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(  # a line's two matches in two pieces, once only counts are kept
    tree={"a.py": (["self.x = self.y"] * 2, "\n", False, True, "utf-8")},
    pattern="self",
    ignore_case=False,
    budget=0,
    sizes=(1, 1),
)
@given(
    tree=files,
    pattern=st.sampled_from(PATTERNS),
    ignore_case=st.booleans(),
    budget=st.sampled_from([None, 0, 12, 40, 60, 400, 20_000]),  # 0: counts from the first match on
    sizes=st.sampled_from([(1 << 15, 1 << 20), (1, 1), (7, 13), (64, 5)]),
)
def test_plain_output_finds_what_json_finds(tmp_path_factory, tree, pattern, ignore_case, budget, sizes):
    root = tmp_path_factory.mktemp("tree")
    for name, (lines, eol, broken, final, encoding) in tree.items():
        data = (eol.join(lines) + (eol if final and lines else "")).encode(encoding)
        if broken and encoding == "utf-8":
            data = data[: len(data) // 2] + b"\xff" + data[len(data) // 2 :]
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    query = Query(pattern, ignore_case=ignore_case)
    with pieces(*sizes):
        ours = outcome(root, query, plain_output=True, budget=budget)
    assert ours == outcome(root, query, plain_output=False, budget=budget)


def test_a_file_binary_after_a_match_is_withdrawn(tmp_path):
    (tmp_path / "late.bin").write_bytes(b"self\n" + b"filler line\n" * 200_000 + b"\0self\n")
    (tmp_path / "text.txt").write_text("self\n")
    for n in range(5):  # whole files before and after it, counted at once (plain.count_whole)
        (tmp_path / f"m{n}.txt").write_text("self self\nno\nself\n")
    (tmp_path / "WARNING.txt").write_text("self\n")  # the word in a path: no warning
    query = Query("self")
    raw = subprocess.run(
        [RG, *RipgrepEngine(RG, query).match_args(True)[1:], "./"], cwd=tmp_path, capture_output=True
    ).stdout
    assert b"WARNING: " in raw  # rg named its matches before it found the NUL byte
    for budget in (None, 10):
        found = outcome(tmp_path, query, plain_output=True, budget=budget)
        assert [f.shown for f in found.files] == ["WARNING.txt", *(f"m{n}.txt" for n in range(5)), "text.txt"]
        assert (found.lines, found.hits) == (12, 17)
        assert found == outcome(tmp_path, query, plain_output=False, budget=budget)


def test_a_file_changed_after_rg_read_it_is_searched_again(tmp_path):
    target = tmp_path / "a.py"
    target.write_text("one\nself.x\n")
    query = Query("self")
    engine = RipgrepEngine(RG, query)
    raw = subprocess.run([RG, *engine.match_args(True)[1:], "./"], cwd=tmp_path, capture_output=True).stdout
    target.write_text("self first\nthen self\nno\n")  # after rg read it, before we do
    sink = Collector(Workspace([tmp_path]), None, set())
    read = partial(plain.read_data, sink.ws)
    plain.parse_plain(Lines(raw), partial(ripgrep.under, str(tmp_path)), sink, read, None)
    sink.made()
    assert sink.doubted == {str(target)}  # line 2 holds no "self" at column 0 now
    engine.verify(tmp_path, {str(target)}, sink, lambda: False)
    entry = sink.files[str(target)]
    assert [(m.line, m.lines, m.col) for m in entry.matches] == [
        (1, ("self first",), 0),
        (2, ("then self",), 5),
    ]
    assert not sink.doubted


def test_unknown_output_has_the_folder_searched_again_as_json(tmp_path):
    """An rg whose plain output this parser does not know (here: a line of its own after a
    file's third match line, when two of them are taken) answers through its JSON."""
    (tmp_path / "a.py").write_text("self.x = self\nno\nself\n")
    (tmp_path / "b.txt").write_text("myself\n")
    odd = tmp_path.parent / f"{tmp_path.name}-rg"
    odd.write_text(
        "#!/bin/sh\n"
        'case " $* " in *" --only-matching "*) '
        f'exec "{RG}" "$@" | sed \'s/^3.1.self$/&\\nnew format/\' ;; esac\n'
        f'exec "{RG}" "$@"\n'
    )
    odd.chmod(odd.stat().st_mode | stat.S_IXUSR)
    query = Query("self")
    for budget in (None, 0):
        with pieces(1, 1):
            found = outcome(tmp_path, query, plain_output=True, budget=budget, rg=str(odd))
        assert found == outcome(tmp_path, query, plain_output=False, budget=budget)
        assert found.hits == 4 and [f.shown for f in found.files] == ["a.py", "b.txt"]


@pytest.mark.parametrize(
    "output",
    [
        b"a.py\x00garbage\n",
        b"a.py\x0012\x003\x00self\nlast line without its end",
        b"no path at all",
        b"a.py\x0012\x003\x00self\ngarbage\n\nb.py\x001\x001\x00self\n",
    ],
)
@pytest.mark.parametrize("counting", [False, True])  # True: only counts kept (plain.count_whole)
def test_the_parser_refuses_what_it_does_not_know(tmp_path, output, counting):
    sink = Collector(Workspace([tmp_path]), None, set())
    if counting:
        sink.drop_details()
    with pytest.raises(plain.Unexpected):
        plain.parse_plain(Lines(output), partial(ripgrep.under, str(tmp_path)), sink, lambda path: None, None)


def test_a_one_shot_takes_over_the_plain_rg_started_ahead():
    """The argv a one-shot starts ahead (ahead.search_argv) is the one the engine would run."""
    from lsp_agent.ahead import search_argv
    from lsp_agent.search.walk import walk_args

    for fixed, globs in ((False, []), (True, ["*.py", "Makefile"])):
        engine = RipgrepEngine(RG, Query("self", fixed_strings=fixed, globs=tuple(globs)))
        assert engine.plain
        assert search_argv(RG, "self", fixed_strings=fixed, globs=globs) == [
            *engine.match_args(True),
            *walk_args([""], tuple(globs)),
        ]


def test_a_folder_searched_quickly_is_searched_by_one_thread(tmp_path, monkeypatch):
    """rg's threads cost more than they save in a small folder: one searched in under SMALL
    seconds is searched by one thread the next time, with the same answer; a slow one keeps
    rg's threads."""
    for n in range(20):
        (tmp_path / f"m{n}.py").write_text("self.x = self\n" * n)
    ran: list[list[str]] = []
    real = RipgrepEngine.run
    monkeypatch.setattr(RipgrepEngine, "run", lambda self, args, *rest: ran.append(args) or real(self, args, *rest))  # fmt: skip
    monkeypatch.setattr(ripgrep, "PACE", {})
    root = tmp_path.resolve()
    first = outcome(tmp_path, Query("self"), plain_output=True)
    assert root in ripgrep.PACE and "--threads=1" not in ran[-1]  # its pace, from this search
    ripgrep.PACE[root] = ripgrep.SMALL / 2  # as after a quick one (not timed here: a busy machine is slow)
    assert outcome(tmp_path, Query("self"), plain_output=True) == first and first.hits == 380
    assert "--threads=1" in ran[-1]
    ripgrep.PACE[root] = 1.0  # as after a search of many files
    outcome(tmp_path, Query("self"), plain_output=True)
    assert "--threads=1" not in ran[-1]


def test_a_file_searched_again_pays_the_budget_once(tmp_path):
    """A file withdrawn and searched again (doubted, or its folder again as JSON) comes to the
    budget's judge as new: what it paid before is given back, or the answer would turn to
    counts at a budget the JSON engine still shows lines at."""
    from lsp_agent.search.model import FileMatches

    file = FileMatches(str(tmp_path / "a.py"), "a.py")
    cost = len("a.py: ") + len("1,") + len("30,")  # two runs of lines
    keep = keep_details(cost)
    assert keep(file, [(1, 1), (2, 2), (30, 30)], True)
    assert keep(file, [(1, 1), (2, 2), (30, 30)], True)  # again, after a withdrawal
    assert not keep(FileMatches(str(tmp_path / "b.py"), "b.py"), [(1, 1)], True)  # the budget is spent


def test_a_file_is_read_once_for_all_its_pieces(tmp_path, monkeypatch):
    """Its matches' text comes from one read of the file, however many pieces rg's output of
    it is taken in (reading it again for each made a large file's search quadratic)."""
    (tmp_path / "a.py").write_text("self.x = self\n" * 300)
    read: list[Path] = []
    real = ripgrep.read_data
    monkeypatch.setattr(ripgrep, "read_data", lambda ws, path: read.append(path) or real(ws, path))
    with pieces(64, 64):
        found = outcome(tmp_path, Query("self"), plain_output=True)
    assert found.files[0].count == 300 and len(found.files[0].matches) == 300
    assert read == [(tmp_path / "a.py").resolve()]


def test_lines_the_parser_read_are_not_read_again_by_the_check(tmp_path, monkeypatch):
    """The engine's check (verify) reads and compares a file's shown lines where rg's JSON
    gave them; the plain output's lines were read beneath the root by the parser itself, so
    only a doubted file of it is read again."""
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("self.x = 1\nno\nself\n")
    confirmed: list[str] = []
    real = RipgrepEngine.confirm
    monkeypatch.setattr(
        RipgrepEngine,
        "confirm",
        lambda engine, name, *a: confirmed.append(Path(name).name) or real(engine, name, *a),
    )
    by_plain = outcome(tmp_path, Query("self"), plain_output=True)
    assert confirmed == []
    by_json = outcome(tmp_path, Query("self"), plain_output=False)
    assert sorted(confirmed) == ["a.py", "b.py"]
    assert by_plain == by_json and [len(f.matches) for f in by_plain.files] == [2, 2]


def test_a_file_doubted_in_a_later_piece_is_read_again_by_the_check(tmp_path):
    """Its first pieces' lines were where rg said, a later one's not (the file changed after
    rg read it): the check searches it again, as any doubted file."""
    target = tmp_path / "a.py"
    target.write_text("self\n" * 20 + "x self\n")
    query = Query("self")
    engine = RipgrepEngine(RG, query)
    raw = subprocess.run([RG, *engine.match_args(True)[1:], "./"], cwd=tmp_path, capture_output=True).stdout
    target.write_text("self\n" * 20 + "self x\n")  # the last line's match moved
    sink = Collector(Workspace([tmp_path]), None, set())
    with pieces(32, 32):
        plain.parse_plain(
            Lines(raw),
            partial(ripgrep.under, str(tmp_path)),
            sink,
            partial(plain.read_data, sink.ws),
            None,
        )
        sink.made()
    assert str(target) in sink.read_here and str(target) in sink.doubted
    engine.verify(tmp_path, {str(target)}, sink, lambda: False)
    assert [(m.line, m.col) for m in sink.files[str(target)].matches][-2:] == [(20, 0), (21, 0)]
    assert not sink.doubted


def test_a_root_inside_the_searched_one_is_read_beneath_it(tmp_path):
    """Roots [ws/pkg, ws], ws searched: pkg/a.py is read beneath ws, one name at a time, not
    beneath pkg opened by its own path. pkg swapped for a link out after rg read it, and back
    before the check, shows nothing from outside."""
    outside, root = tmp_path / "out", tmp_path / "ws"
    outside.mkdir()
    (outside / "a.py").write_text("x = 1  # OUTSIDE\n")
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("x = 1  # inside\n")
    ws = Workspace([root / "pkg", root])
    engine = RipgrepEngine(RG, Query("x = 1"))
    raw = subprocess.run([RG, *engine.match_args(True)[1:], "./"], cwd=root, capture_output=True).stdout
    sink = Collector(ws, None, set())
    os.rename(root / "pkg", root / "parked")
    os.symlink(outside, root / "pkg")  # after rg's read, before ours
    plain.parse_plain(Lines(raw), partial(ripgrep.under, str(root)), sink, partial(plain.read_data, ws), None)
    sink.made()
    os.unlink(root / "pkg")
    os.rename(root / "parked", root / "pkg")  # back before the check
    engine.verify(root, {str(root / "pkg" / "a.py")}, sink, lambda: False)
    shown = [m.lines for f in sink.files.values() for m in f.matches]
    assert shown == [("x = 1  # inside",)]
