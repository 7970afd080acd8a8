"""The two engines: ripgrep's rules (.gitignore, hidden, binary, symlinks) and identical
answers from the pure-Python engine; patterns the Python engine refuses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lsp_agent.config import Settings
from lsp_agent.search import Query, Target, find_rg, run_search
from lsp_agent.search.rustre import Invalid, Unsupported, translate
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

FILES = {
    ".gitignore": "*.log\nbuild/\n!keep.log\n",
    "src/app.py": "import os\n\nclass App:\n    def run(self):\n        return foo(1)  # foo here\n\n\ndef foo(x):\n    return x * 2\n",
    "src/util.js": "export function fooBar() {\n  return 'FOO';\n}\n",
    "src/skip.log": "foo in an ignored log\n",
    "keep.log": "foo in a whitelisted log\n",
    "build/out.py": "foo = 'built'\n",
    ".hidden/secret.py": "foo = 'hidden dir'\n",
    "src/.env": "FOO=hidden file\n",
    "sub/.ignore": "*.tmp\n",
    "sub/x.tmp": "foo in tmp\n",
    "sub/.gitignore": "!*.log\n",
    "sub/z.log": "foo in a log re-included below\n",
    "sub/deep/notes.md": "# Notes\n\nfoo bar baz\nnaïve café ÉCOLE straße ﬁle\n",
    "crlf.txt": "first foo\r\nsecond\r\nthird foo\r\n",
    "unicode.txt": "naïve café\nÉcole école\nΣίσυφος foo_bar\n\u00a0foo\x1cbar\nend…\n",
    "multi.txt": "foo\nbar\nfoo\nbar\nbaz\nfoo\n",
    "nofinal.txt": "foo without newline",
    "bom.txt": "\ufefffoo with a BOM\n",
}


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "ws"
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    (root / "image.bin").write_bytes(b"\x89PNG\x00\x00foo\x00binary")
    (root / "other.bin").write_bytes(b"\x00\x01\x02 nothing")
    (root / "link.py").symlink_to(root / "src" / "app.py")
    outside = tmp_path / "outside.txt"
    outside.write_text("foo outside the workspace\n")
    (root / "escape.txt").symlink_to(outside)
    (root / "escape_dir").symlink_to(tmp_path)
    return root


def search(root: Path, engine: str, pattern: str, paths=None, **options):
    ws = Workspace([root])
    ctx = Context(ws, Settings(search_engine=engine))
    return call(ctx, "search", {"pattern": pattern, **({"paths": paths} if paths else {}), **options})


def outcome(root: Path, engine: str, pattern: str, rels=("",), **query):
    ws = Workspace([root])
    return run_search(ws, Query(pattern, **query), [Target(ws.roots[0], list(rels))], engine=engine)


requires_rg = pytest.mark.skipif(find_rg() is None, reason="no rg")


@requires_rg
def test_ripgrep_rules(tree):
    found = outcome(tree, "rg", "foo", ignore_case=True)
    assert [f.shown for f in found.files] == [
        "bom.txt",
        "crlf.txt",
        "keep.log",
        "multi.txt",
        "nofinal.txt",
        "src/app.py",
        "src/util.js",
        "sub/deep/notes.md",
        "sub/z.log",
        "unicode.txt",
    ]  # no ignored, hidden, symlinked (inside or escaping) or binary file
    assert found.binary == []  # binary files are skipped at their first NUL, as ripgrep does
    counted = outcome(tree, "rg", "foo", ignore_case=True, count_binary=True)
    assert counted.files == found.files
    assert counted.binary == ["image.bin"]  # read whole: it matches; other.bin does not
    bom = found.files[0].matches[0]
    assert (bom.line, bom.lines, bom.col, bom.end) == (1, ("foo with a BOM",), 0, 3)
    crlf = found.files[1]
    assert [(m.line, m.lines[0]) for m in crlf.matches] == [(1, "first foo"), (3, "third foo")]


CASES = [
    ("foo", {}),
    ("foo", {"count_binary": True}),
    ("foo$", {"count_binary": True}),
    (r"(?:foo|bar)\W", {"count_binary": True}),
    ("PNG.*foo", {"count_binary": True}),
    ("foo\\nbin", {"count_binary": True, "multiline": True}),
    ("foo", {"ignore_case": True}),
    (r"\bfoo\b", {}),
    (r"\w+é", {}),
    (r"caf\w", {}),
    (r"(?i)école", {}),
    ("ÉCOLE", {"ignore_case": True}),
    (r"^\s*def ", {}),
    (r"foo$", {}),
    (r"[[:upper:]]{2,}", {}),
    (r"[^a-z ]+", {}),
    (r"\d+", {}),
    (r"\s+foo", {}),
    (r"\S+_\S+", {}),
    (r"f.o", {}),
    ("a.c", {"fixed_strings": True}),
    ("foo(", {"fixed_strings": True}),
    ("fo{2,}|ba[rz]", {}),
    (r"(?:foo|bar)\W", {}),
    (r"\x66oo", {}),
    (r"\u{66}oo|\x{65}nd", {}),
    ("…", {}),
    ("", {}),
    ("^", {"globs": ("*.md",)}),
    ("foo", {"globs": ("*.py",)}),
    ("foo", {"globs": ("!*.txt", "!sub/**")}),
    ("foo", {"globs": ("*.{py,js}",)}),
    ("foo", {"globs": ("src/**",)}),
    ("foo", {"globs": ("*.log",)}),  # a glob beats .gitignore
    ("foo", {"globs": (".env", "*.py")}),  # and hidden-file rules
    ("foo", {"before": 1, "after": 2}),
    ("bar", {"before": 3}),
    ("foo\\nbar", {"multiline": True}),
    ("foo\\n(bar\\n)?", {"multiline": True, "after": 1}),
    (r"o\s+b", {"multiline": True}),
    ("[^x]+", {"multiline": True}),
]


@requires_rg
@pytest.mark.parametrize("pattern,query", CASES, ids=[f"{p}-{sorted(q)}" for p, q in CASES])
def test_engines_give_identical_records(tree, pattern, query):
    rg = outcome(tree, "rg", pattern, **query)
    py = outcome(tree, "python", pattern, **query)
    assert py.files == rg.files
    assert (py.total, py.binary) == (rg.total, rg.binary)


@requires_rg
@pytest.mark.parametrize(
    "paths", [["src"], ["sub"], ["sub/deep"], ["src/skip.log"], ["src", "src/app.py"], [".hidden"]]
)
def test_engines_agree_on_paths(tree, paths):
    for pattern in ("foo", "o"):
        rg = search(tree, "rg", pattern, paths, max_chars=4000)
        py = search(tree, "python", pattern, paths, max_chars=4000)
        assert {**py, "engine": None} == {**rg, "engine": None}


@requires_rg
def test_a_searched_folder_keeps_the_ignore_rules_of_the_folders_above_it(tree):
    (tree / "sub" / "deep" / "trace.log").write_text("foo\n")  # *.log ignored at the root,
    (tree / "src" / "nested").mkdir()
    (tree / "src" / "nested" / "x.log").write_text("foo\n")
    for engine in ("rg", "python"):
        assert [f.shown for f in outcome(tree, engine, "foo", ["src"]).files] == ["src/app.py", "src/util.js"]
        # … re-included by sub/.gitignore
        assert "sub/deep/trace.log" in [f.shown for f in outcome(tree, engine, "foo", ["sub/deep"]).files]


@requires_rg
@pytest.mark.parametrize("budget", [200, 400, 700, 1500, 20_000])
def test_engines_give_identical_answers_at_every_stage(tree, budget):
    for pattern in ("foo", r"\w+", "o"):
        rg = search(tree, "rg", pattern, max_chars=budget)
        py = search(tree, "python", pattern, max_chars=budget)
        assert py.get("engine", "python") == "python" and rg.get("engine", "ripgrep") == "ripgrep"
        assert {**py, "engine": None} == {**rg, "engine": None}


@pytest.mark.parametrize("engine", ["rg", "python"])
def test_editor_buffers_are_searched_as_their_unsaved_text(tree, engine):
    if engine == "rg" and find_rg() is None:
        pytest.skip("no rg")
    ws = Workspace([tree])
    ws.open_document(tree / "src" / "app.py", "def foo():\n    unsaved foo\n")
    ws.open_document(tree / "src" / "new.py", "foo in a buffer never saved\n")
    ws.open_document(tree / "build" / "gen.py", "foo in an ignored folder\n")
    found = run_search(ws, Query("foo"), [Target(ws.roots[0], ["src"])], engine=engine)
    files = {f.shown: f for f in found.files}
    assert [(m.line, m.lines[0]) for m in files["src/app.py"].matches] == [
        (1, "def foo():"),
        (2, "    unsaved foo"),
    ]
    assert files["src/app.py"].from_editor and files["src/new.py"].from_editor
    assert "build/gen.py" not in files
    answer = call(Context(ws, Settings(search_engine=engine)), "search", {"pattern": "unsaved"})
    assert "src/app.py (editor buffer, unsaved changes included)" in answer["text"]


def test_paths_outside_the_workspace_are_refused(tree):
    for engine in ("python",) + (("rg",) if find_rg() else ()):
        refused = search(tree, engine, "foo", ["../outside.txt", "escape.txt", "/etc"])
        assert refused["error"]["code"] == "no_paths"
        assert "escape.txt is through a symlink outside the workspace" in refused["text"]
        partly = search(tree, engine, "foo", ["escape.txt", "src"])
        assert partly["total_matches"] == 3 and "left out: escape.txt is through a symlink" in partly["text"]


@requires_rg
def test_invalid_regex_passes_ripgreps_message_on(tree):
    refused = search(tree, "rg", "(foo")
    assert refused["error"]["code"] == "invalid_regex"
    assert "unclosed group" in refused["text"] and "regex parse error" in refused["text"]
    assert search(tree, "python", "(foo")["error"]["code"] == "invalid_regex"


@pytest.mark.parametrize(
    "pattern,kind,words",
    [
        ("(?=foo)", Invalid, "look-around"),
        ("(?<!a)b", Invalid, "look-around"),
        (r"(a)\1", Invalid, "backreferences"),
        (r"\y", Invalid, "unrecognized escape"),
        ("a{2", Invalid, "counted repetition"),
        ("*a", Invalid, "missing expression"),
        ("foo\\n", Invalid, "not allowed"),
        (r"\p{Greek}", Unsupported, "Unicode classes"),
        ("[[a-z]&&[^aeiou]]", Unsupported, "nested"),
        ("[a-z&&[^x]]", Unsupported, "set operations"),
        (r"\<foo\>", Unsupported, "start/end of word"),
        ("(?x) a b", Unsupported, "flag 'x'"),
        ("a(?i)b", Unsupported, "middle of a pattern"),
        ("a*+", Unsupported, "stacked"),
    ],
)
def test_python_engine_refuses_what_it_cannot_run_identically(pattern, kind, words):
    with pytest.raises(kind, match=re.escape(words)):
        translate(pattern)


def test_translation_spells_out_rusts_classes():
    assert re.search(translate(r"\s"), "\x1c") is None  # Python's \s would match U+001C
    assert re.search(translate(r"\w", unicode_text=True), "\u0301")  # combining marks are word characters
    assert re.search(translate(r"[^a]"), "\n") is None  # nothing matches a line break in line mode
    assert re.search(translate(r"[[:space:]]"), "\n") is None
    assert re.search(translate(r"[^a]", multiline=True), "\n")
    assert translate("(?P<name>a)|(?<other>b)") == "(?:a)|(?:b)"


def test_python_engine_refusal_is_an_answer(tree):
    refused = search(tree, "python", r"\p{Lu}")
    assert refused["error"]["code"] == "unsupported_regex"
    assert "install ripgrep" in refused["text"]


@pytest.mark.parametrize("engine", ["rg", "python"])
@pytest.mark.parametrize("glob", ["[", "*.{py"])
def test_a_bad_glob_is_refused(tree, engine, glob):
    if engine == "rg" and find_rg() is None:
        pytest.skip("no rg")
    refused = search(tree, engine, "foo", glob=glob)
    assert refused["error"]["code"] == "invalid_glob" and "error parsing glob" in refused["text"]


@pytest.mark.parametrize("engine", ["rg", "python"])
@pytest.mark.parametrize(
    "arguments,code",
    [
        ({"pattern": "a\x00b"}, "invalid_regex"),
        ({"pattern": "x" * 200_000}, "invalid_regex"),  # past the OS's limit for one argument
        ({"pattern": "foo", "glob": "*.py\x00"}, "invalid_glob"),
        ({"pattern": "foo", "glob": ["*"] * 101}, "invalid_glob"),
        ({"pattern": "foo", "glob": "{" * 5_000}, "invalid_glob"),
    ],
)
def test_hostile_input_is_refused_by_both_engines_within_a_short_answer(tree, engine, arguments, code):
    if engine == "rg" and find_rg() is None:
        pytest.skip("no rg")
    refused = search(tree, engine, **arguments)
    assert refused["error"]["code"] == code
    assert len(refused["text"]) < 2_500  # the pattern or glob is not echoed whole


def test_a_long_pattern_costs_the_answer_nothing(tree):
    pattern = "foo|" + "|".join(f"word{i}" for i in range(1_000))
    answer = search(tree, "rg" if find_rg() else "python", pattern)
    assert "error" not in answer and answer["total_matches"] > 0
    assert "word0" not in answer["text"]  # the header is the totals, not the pattern again


@pytest.mark.parametrize("pattern", ["(a+)+$", "(a|aa)+c", "(x\\s*)*y", "(a{2,3})+", "((a|b)c)*"])
def test_python_engine_refuses_patterns_that_backtrack_exponentially(tree, pattern):
    with pytest.raises(Unsupported, match="exponential"):
        translate(pattern)
    (tree / "long.txt").write_text("a" * 60 + "\n")
    refused = search(tree, "python", pattern)  # without the refusal this call would not return
    assert refused["error"]["code"] == "unsupported_regex"


@pytest.mark.parametrize("pattern", ["(ab)+", "(foo|bar)?", "(a{2})+", "(?:x)+y", "(a+)?"])
def test_repeated_groups_without_backtracking_risk_still_run(pattern):
    assert re.compile(translate(pattern))
