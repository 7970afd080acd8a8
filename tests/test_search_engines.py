"""The engine, ripgrep: its rules (.gitignore, hidden, binary, symlinks), open editor buffers
by ripgrep's decisions, refusals (bad patterns and globs, hostile input, no rg)."""

from __future__ import annotations

import json
import os
import subprocess
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lsp_agent.config import Settings
from lsp_agent.search import Query, Target, find_rg, run_search, walk
from lsp_agent.search.ripgrep import BEGIN, END, message_of
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


def search(root: Path, pattern: str, paths=None, **options):
    ws = Workspace([root])
    return call(
        Context(ws, Settings()),
        "search",
        {"pattern": pattern, **({"paths": paths} if paths else {}), **options},
    )


def outcome(root: Path, pattern: str, rels=("",), **query):
    ws = Workspace([root])
    return run_search(ws, Query(pattern, **query), [Target(ws.roots[0], list(rels))])


def test_ripgrep_rules(tree):
    found = outcome(tree, "foo", ignore_case=True)
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
    counted = outcome(tree, "foo", ignore_case=True, count_binary=True)
    assert counted.files == found.files
    assert counted.binary == ["image.bin"]  # read whole: it matches; other.bin does not
    bom = found.files[0].matches[0]
    assert (bom.line, bom.lines, bom.col, bom.end) == (1, ("foo with a BOM",), 0, 3)
    crlf = found.files[1]
    assert [(m.line, m.lines[0]) for m in crlf.matches] == [(1, "first foo"), (3, "third foo")]


def test_a_searched_folder_keeps_the_ignore_rules_of_the_folders_above_it(tree):
    (tree / "sub" / "deep" / "trace.log").write_text("foo\n")  # *.log ignored at the root,
    (tree / "src" / "nested").mkdir()
    (tree / "src" / "nested" / "x.log").write_text("foo\n")
    assert [f.shown for f in outcome(tree, "foo", ["src"]).files] == ["src/app.py", "src/util.js"]
    # … re-included by sub/.gitignore
    assert "sub/deep/trace.log" in [f.shown for f in outcome(tree, "foo", ["sub/deep"]).files]


def test_editor_buffers_are_searched_as_their_unsaved_text(tree):
    ws = Workspace([tree])
    ws.open_document(tree / "src" / "app.py", "def foo():\n    unsaved foo\n")
    ws.open_document(tree / "src" / "new.py", "foo in a buffer never saved\n")
    ws.open_document(tree / "build" / "gen.py", "foo in an ignored folder\n")
    found = run_search(ws, Query("foo"), [Target(ws.roots[0], ["src"])])
    files = {f.shown: f for f in found.files}
    assert [(m.line, m.lines[0]) for m in files["src/app.py"].matches] == [
        (1, "def foo():"),
        (2, "    unsaved foo"),
    ]
    assert files["src/app.py"].from_editor and files["src/new.py"].from_editor
    assert "build/gen.py" not in files
    answer = call(Context(ws, Settings()), "search", {"pattern": "unsaved"})
    assert "src/app.py (editor buffer, unsaved changes included)" in answer["text"]


@pytest.mark.parametrize("paths", [["build"], ["build/out.py"], ["src"], []])
def test_an_open_buffer_is_searched_exactly_when_its_file_would_be(tree, paths):
    """rg decides for buffers as for files: an ignored folder named explicitly is searched, open or not."""
    closed = search(tree, "foo", paths or None)
    ws = Workspace([tree])
    ws.open_document(tree / "build" / "out.py", "foo = 'built'\n")
    ws.open_document(tree / "sub" / "x.tmp", "foo in tmp\n")  # ignored by sub/.ignore
    ws.open_document(tree / "src" / ".env", "FOO=hidden file\n")  # hidden
    opened = call(
        Context(ws, Settings()), "search", {"pattern": "foo", **({"paths": paths} if paths else {})}
    )
    assert [loc["path"] for loc in opened["locations"]] == [loc["path"] for loc in closed["locations"]]
    assert opened["total_matches"] == closed["total_matches"]
    if paths and paths[0].startswith("build"):
        assert opened["total_matches"] == 1 and "build/out.py (editor buffer" in opened["text"]


def test_hostile_ignore_lines_break_neither_search_nor_outlines(tree):
    (tree / "src" / ".gitignore").write_text("!\n\\\na\\\n[z-a]\n*.js\n")
    (tree / ".ignore").write_text("[z-a]\n")
    rg = [find_rg(), "--files", "--no-config", "--no-require-git", "--no-ignore-global", "src"]
    direct = sorted(subprocess.run(rg, cwd=tree, capture_output=True, text=True, check=False).stdout.split())
    assert "src/.env" in direct and "src/util.js" not in direct  # rg's reading: "!" re-includes all
    listed = search(tree, ".", ["src"])
    assert "error" not in listed
    assert sorted({loc["path"] for loc in listed["locations"]}) == direct
    assert "error" not in search(tree, "foo")
    outline = call(Context(Workspace([tree]), Settings()), "symbols", {"path": "src"})
    assert "error" not in outline and "src/app.py" in outline["text"]


def test_no_ripgrep_is_a_clear_refusal(tree, monkeypatch):
    monkeypatch.setattr("lsp_agent.search.walk.find_rg", lambda: None)
    refused = search(tree, "foo")
    assert refused["error"]["code"] == "no_ripgrep" and "install the `ripgrep` package" in refused["text"]


def test_the_wheels_rg_is_found_without_sysconfig_in_the_calling_thread(monkeypatch):
    """Tools call find_rg from worker threads; sysconfig fills its config lazily without a
    lock (two first calls at once failed in CI: "dictionary changed size during iteration"),
    so the folders are found at import and a call never touches sysconfig."""
    wheel_rg = next(
        (os.path.join(f, "rg") for f in walk.WHEEL_FOLDERS if os.access(os.path.join(f, "rg"), os.X_OK)), None
    )
    if wheel_rg is None:
        pytest.skip("rg is not installed by the ripgrep wheel beside this Python")

    def no_sysconfig(*args, **kwargs):
        raise AssertionError("sysconfig used at call time")

    monkeypatch.setattr(sysconfig, "get_path", no_sysconfig)
    monkeypatch.setattr(sysconfig, "get_config_vars", no_sysconfig)
    monkeypatch.setenv("PATH", "")
    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(lambda _: find_rg(), range(32))) == {wheel_rg}


def test_an_rg_that_cannot_start_is_a_clear_refusal_for_search_and_outlines(tree, monkeypatch):
    monkeypatch.setattr("lsp_agent.search.walk.find_rg", lambda: str(tree / "no-such-rg"))
    refused = search(tree, "foo")
    assert refused["error"]["code"] == "search_failed" and "ripgrep could not be started" in refused["text"]
    outline = call(Context(Workspace([tree]), Settings()), "symbols", {"path": "src"})
    assert outline["error"]["code"] == "no_ripgrep" and "could not be started" in outline["text"]


@pytest.mark.parametrize("engine", ["python", "rg", "auto"])
def test_the_removed_search_engine_option_is_refused_with_its_reason(engine):
    settings, problems = Settings.from_options({"search_engine": engine, "max_chars": 900})
    assert settings == Settings(max_chars=900)  # the rest applies
    assert problems == [
        f"option search_engine={engine!r} is refused: the one search engine is ripgrep (its values `auto` "
        "and `rg` meant the same, and the pure-Python engine was removed, it answered differently); remove it."
    ]


def test_paths_outside_the_workspace_are_refused(tree):
    refused = search(tree, "foo", ["../outside.txt", "escape.txt", "/etc"])
    assert refused["error"]["code"] == "no_paths"
    assert "escape.txt is through a symlink outside the workspace" in refused["text"]
    partly = search(tree, "foo", ["escape.txt", "src"])
    assert (partly["total_lines"], partly["total_matches"]) == (3, 4)  # "foo(1)  # foo here": 2 on a line
    assert "left out: escape.txt is through a symlink" in partly["text"]


@pytest.mark.parametrize(
    "pattern,reason",
    [
        ("(foo", "unclosed group"),
        ("(?=foo)", "look-around"),
        (r"(a)\1", "backreferences"),
        ("[c-.]", "invalid character class range"),
        ("a{2", "repetition"),
    ],
)
def test_an_invalid_pattern_is_quoted_as_written_with_ripgreps_error_and_a_hint(tree, pattern, reason):
    refused = search(tree, pattern)
    assert refused["error"]["code"] == "invalid_regex"
    text = refused["text"]
    assert f'The pattern "{pattern}" is not a valid regex' in text  # as written, not JSON-escaped
    assert reason in text and "fixed_strings=true" in text
    assert "(?:" not in text  # not the pattern as rg wrapped it


def test_valid_rust_patterns_run(tree):
    for pattern in ("(?m)^foo", "a{1, 3}", r"\bfoo\b", r":\s*$"):
        assert "error" not in search(tree, pattern), pattern


@pytest.mark.parametrize("glob", ["[", "*.{py"])
def test_a_bad_glob_is_refused(tree, glob):
    refused = search(tree, "foo", glob=glob)
    assert refused["error"]["code"] == "invalid_glob" and "error parsing glob" in refused["text"]


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
def test_hostile_input_is_refused_within_a_short_answer(tree, arguments, code):
    refused = search(tree, **arguments)
    assert refused["error"]["code"] == code
    assert len(refused["text"]) < 2_500  # the pattern or glob is not echoed whole


def test_a_long_pattern_costs_the_answer_nothing(tree):
    pattern = "foo|" + "|".join(f"word{i}" for i in range(1_000))
    answer = search(tree, pattern)
    assert "error" not in answer and answer["total_matches"] > 0
    assert "word0" not in answer["text"]  # the header is the totals, not the pattern again


def test_counts_say_lines_and_matches_apart_where_they_differ(tree):
    (tree / "caps.txt").write_text("ABC DEF\nGHI\nxyz\n")
    answer = search(tree, "[A-Z]{3,}", ["caps.txt"])
    assert answer["text"].startswith("2 lines, 3 matches in 1 file\n")
    assert (answer["total_lines"], answer["total_matches"]) == (2, 3)
    same = search(tree, "GHI", ["caps.txt"])
    assert same["text"].startswith("1 match in 1 file\n")


def test_begin_and_end_records_read_without_decoding_say_what_json_says(tmp_path):
    names = ["plain.txt", 'quo"te.txt', "back\\slash.txt", "tab\there.txt", "naïve.txt", "bin.dat"]
    for name in names:
        (tmp_path / name).write_bytes(b"foo\n" + (b"\x00foo\n" if name == "bin.dat" else b"foo\n"))
    (tmp_path / os.fsdecode(b"latin1-\xe9.txt")).write_text("foo\n")  # not UTF-8: rg gives its bytes
    rg = find_rg()
    assert rg is not None
    out = subprocess.run(
        [rg, "--json", "--binary", "foo", "./"], cwd=tmp_path, capture_output=True, check=True
    )
    seen = set()
    for raw in out.stdout.splitlines(keepends=True):
        whole = json.loads(raw)
        if whole["type"] not in ("begin", "end"):
            continue
        message = message_of(raw)
        direct = BEGIN.fullmatch(raw) is not None or END.fullmatch(raw) is not None
        seen.add(
            (whole["type"], direct, "bytes" in whole["data"]["path"], whole["data"].get("binary_offset"))
        )
        assert message["type"] == whole["type"]
        if whole["type"] == "begin":
            assert message["data"]["path"] == whole["data"]["path"]
        else:
            assert message["data"]["binary_offset"] == whole["data"]["binary_offset"]
            for count in ("matched_lines", "matches"):
                assert message["data"]["stats"][count] == whole["data"]["stats"][count]
    # the usual shape read directly (a binary file's offset too); escapes and bytes decoded whole
    assert seen == {
        ("begin", True, False, None),
        ("end", True, False, None),
        ("end", True, False, 4),
        ("begin", False, False, None),
        ("end", False, False, None),
        ("begin", False, True, None),
        ("end", False, True, None),
    }
