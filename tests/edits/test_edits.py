"""The edit tools through the registry: exact old text, line ranges guarded by a version,
several edits at once, symbol edits, create_file, the edits setting and annotations."""

from __future__ import annotations

import os
import stat

import pytest

from lsp_agent.config import Settings
from lsp_agent.tools import REGISTRY, Context, call, catalog
from lsp_agent.workspace import Workspace

MODEL = '''import functools


class Model:
    """Doc."""

    @property
    @functools.cache
    def save(self):
        return 1

    def load(self):
        pass


@decorator
def top():
    pass
'''


@pytest.fixture
def model(tmp_path):
    (tmp_path / "m.py").write_text(MODEL)
    return tmp_path / "m.py"


def test_unique_old_text_is_replaced_and_the_answer_gives_version_and_diff(run, model):
    before = run("read", path="m.py")["version"]
    answer = run("edit", path="m.py", old_text="return 1", new_text="return 2")
    assert "error" not in answer, answer["text"]
    assert model.read_text() == MODEL.replace("return 1", "return 2")
    assert answer["previous_version"] == before and answer["version"] == run("read", path="m.py")["version"]
    assert "-10:        return 1" in answer["text"] and "+10:        return 2" in answer["text"]
    assert answer["applied_by"] == "disk" and answer["changed"] == {"start": 10, "end": 10}


def test_ambiguous_old_text_lists_each_occurrence_with_line_and_symbol(run, model):
    answer = run("edit", path="m.py", old_text="pass", new_text="return 0")
    assert answer["error"]["code"] == "ambiguous"
    assert answer["occurrences"] == [13, 18]
    assert "occurrence=1  line 13  Model/load" in answer["text"]
    assert "occurrence=2  line 18  top" in answer["text"]
    assert model.read_text() == MODEL


@pytest.mark.parametrize("choice", [{"occurrence": 2}, {"symbol": "top"}])
def test_occurrence_or_symbol_chooses(run, model, choice):
    answer = run("edit", path="m.py", old_text="pass", new_text="return 0", **choice)
    assert "error" not in answer, answer["text"]
    assert model.read_text() == MODEL[: MODEL.rindex("pass")] + "return 0\n"


def test_old_text_on_a_named_line_needs_no_version_and_is_refused_elsewhere(run, model):
    """A line from references or search with the text it shows: the text is the guard."""
    answer = run("edit", path="m.py", old_text="pass", new_text="return 0", start=18)
    assert "error" not in answer, answer["text"]
    assert model.read_text() == MODEL[: MODEL.rindex("pass")] + "return 0\n"
    moved = run("edit", path="m.py", old_text="pass", new_text="return 1", start=12)
    assert moved["error"]["code"] == "not_found" and "starting on line 12" in moved["text"]
    assert model.read_text() == MODEL[: MODEL.rindex("pass")] + "return 0\n"


def test_text_that_is_not_there_is_refused_with_a_hint_for_whitespace(run, model):
    answer = run("edit", path="m.py", old_text="def load(self):\n  pass", new_text="x")
    assert answer["error"]["code"] == "not_found" and "line 12" in answer["text"]
    assert model.read_text() == MODEL


def test_line_range_needs_the_version_and_a_stale_one_says_what_changed(run, model):
    refused = run("edit", path="m.py", start=1, end=1, new_text="import os")
    assert refused["error"]["code"] == "version_required"
    version = run("read", path="m.py")["version"]
    assert "error" not in run("edit", path="m.py", old_text="return 1", new_text="return 2\n        # two")
    stale = run("edit", path="m.py", start=1, end=1, new_text="import os", if_version=version)
    assert stale["error"]["code"] == "stale"
    assert stale["current_version"] == run("read", path="m.py")["version"]
    assert "lines changed since: 10-11" in stale["text"]
    assert model.read_text().startswith("import functools")


def test_line_ranges_replace_insert_and_delete(run, model):
    version = run("read", path="m.py")["version"]
    answer = run(
        "edit",
        path="m.py",
        if_version=version,
        edits=[
            {"start": 1, "end": 1, "new_text": "import os"},
            {"start": 4, "end": 3, "new_text": "# a model"},
            {"start": 12, "end": 14, "new_text": ""},
        ],
    )
    assert "error" not in answer, answer["text"]
    lines = MODEL.split("\n")
    expected = ["import os", *lines[1:3], "# a model", *lines[3:11], *lines[14:]]
    assert model.read_text() == "\n".join(expected)


def test_several_edits_apply_together_or_not_at_all(run, model):
    answer = run(
        "edit",
        path="m.py",
        edits=[{"old_text": "return 1", "new_text": "return 2"}, {"old_text": "nowhere", "new_text": "x"}],
    )
    assert answer["error"]["code"] == "not_found" and "edit 2" in answer["text"]
    assert model.read_text() == MODEL
    overlapping = run(
        "edit",
        path="m.py",
        edits=[
            {"old_text": "return 1", "new_text": "a"},
            {"old_text": "1", "new_text": "b", "symbol": "Model/save"},
        ],
    )
    assert overlapping["error"]["code"] == "overlapping"
    assert model.read_text() == MODEL


def test_line_endings_mode_and_no_final_newline_are_kept(run, tmp_path):
    target = tmp_path / "w.txt"
    target.write_bytes("één\r\ntwee\r\ndrie".encode())
    os.chmod(target, 0o751)
    version = run("read", path="w.txt")["version"]
    assert "error" not in run("edit", path="w.txt", old_text="twee\ndrie", new_text="2\n3\n4")
    assert target.read_bytes() == "één\r\n2\r\n3\r\n4".encode()
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    version = run("read", path="w.txt")["version"]
    assert "error" not in run("edit", path="w.txt", start=5, end=4, new_text="5", if_version=version)
    assert target.read_bytes() == "één\r\n2\r\n3\r\n4\r\n5".encode()
    version = run("read", path="w.txt")["version"]
    assert "error" not in run("edit", path="w.txt", start=4, end=5, new_text="", if_version=version)
    assert target.read_bytes() == "één\r\n2\r\n3".encode()


def test_binary_and_undecodable_files_are_refused(run, tmp_path):
    (tmp_path / "b.bin").write_bytes(b"\x00\x01abc")
    (tmp_path / "l.txt").write_bytes(b"caf\xe9 abc\n")
    assert run("edit", path="b.bin", old_text="abc", new_text="x")["error"]["code"] == "binary"
    assert run("edit", path="l.txt", old_text="abc", new_text="x")["error"]["code"] == "not_utf8"
    assert (tmp_path / "l.txt").read_bytes() == b"caf\xe9 abc\n"


def test_paths_outside_the_roots_are_refused(run, tmp_path):
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("secret\n")
    (tmp_path / "link.txt").symlink_to(outside)
    for path in ("../" + outside.name, "link.txt", str(outside)):
        assert run("edit", path=path, old_text="secret", new_text="x")["error"]["code"] == "outside_workspace"
        assert (
            run("create_file", path=path, content="x", overwrite=True)["error"]["code"] == "outside_workspace"
        )
    assert outside.read_text() == "secret\n"


def test_the_next_read_and_find_symbol_see_the_new_text_at_once(run, model):
    run("find_symbol", name_path="save")
    assert "error" not in run(
        "edit_symbol", path="m.py", symbol="Model/load", new_text="def fetch(self):\n    pass"
    )
    assert "def fetch" in run("read", path="m.py")["text"]
    assert "Model/fetch" in run("find_symbol", name_path="fetch")["text"]


def test_replace_symbol_takes_decorators_and_reindents(run, model):
    answer = run("edit_symbol", path="m.py", symbol="Model/save", new_text="def save(self):\n    return 5")
    assert "error" not in answer, answer["text"]
    assert "    def save(self):\n        return 5\n\n    def load" in model.read_text()
    assert "@property" not in model.read_text()
    assert answer["text"].split("\n")[1:] == ["7:    def save(self):", "8:        return 5"]


def test_insert_after_and_before_keep_the_neighbours_spacing(run, model):
    run(
        "edit_symbol",
        path="m.py",
        symbol="Model/load",
        action="insert_after",
        new_text="def drop(self):\n    pass",
    )
    assert "        pass\n\n    def drop(self):\n        pass\n\n\n@decorator" in model.read_text()
    run("edit_symbol", path="m.py", symbol="top", action="insert_before", new_text="def first():\n    pass")
    assert "\n\n\ndef first():\n    pass\n\n\n@decorator\ndef top" in model.read_text()


def test_typescript_doc_comment_goes_with_its_symbol_but_not_a_decorated_field(run, tmp_path):
    (tmp_path / "a.ts").write_text(
        "export class A {\n  @Input() name: string;\n  /** old doc */\n  save(): void {}\n}\n"
    )
    answer = run(
        "edit_symbol", path="a.ts", symbol="A/save", new_text="/** new */\nsave(): number { return 1; }"
    )
    assert "error" not in answer, answer["text"]
    assert (tmp_path / "a.ts").read_text() == (
        "export class A {\n  @Input() name: string;\n  /** new */\n  save(): number { return 1; }\n}\n"
    )


def test_symbol_edits_refuse_unknown_and_ambiguous_names(run, tmp_path):
    (tmp_path / "d.py").write_text("def f():\n    pass\n\n\ndef f():\n    pass\n")
    assert run("edit_symbol", path="d.py", symbol="g", new_text="x")["error"]["code"] == "no_symbol"
    ambiguous = run("edit_symbol", path="d.py", symbol="f", new_text="def f():\n    return 1")
    assert ambiguous["error"]["code"] == "ambiguous" and "lines 5-6" in ambiguous["text"]
    assert "error" not in run(
        "edit_symbol", path="d.py", symbol="f", occurrence=2, new_text="def f():\n    return 2"
    )
    assert (tmp_path / "d.py").read_text().endswith("def f():\n    return 2\n")


def test_create_file_refuses_an_existing_file_unless_overwrite_names_its_version(run, tmp_path):
    created = run("create_file", path="pkg/new.py", content="x = 1\n")
    assert "error" not in created and (tmp_path / "pkg/new.py").read_text() == "x = 1\n"
    assert run("create_file", path="pkg/new.py", content="y\n")["error"]["code"] == "exists"
    assert (
        run("create_file", path="pkg/new.py", content="y\n", overwrite=True)["error"]["code"]
        == "version_required"
    )
    stale = run("create_file", path="pkg/new.py", content="y\n", overwrite=True, if_version="00000000")
    assert stale["error"]["code"] == "stale"
    ok = run("create_file", path="pkg/new.py", content="y\n", overwrite=True, if_version=created["version"])
    assert "error" not in ok and (tmp_path / "pkg/new.py").read_text() == "y\n"


def test_edits_off_hides_the_tools_and_refuses_calls(tmp_path, model):
    ctx = Context(Workspace([tmp_path]), Settings(edits="off"))
    answer = call(ctx, "edit", {"path": "m.py", "old_text": "return 1", "new_text": "return 2"})
    assert answer["error"]["code"] == "edits_off" and model.read_text() == MODEL
    names = {t["name"] for t in catalog(edits=False)}
    assert names.isdisjoint({"edit", "edit_symbol", "create_file", "rename"}) and "read" in names
    assert Settings().updated({"edits": "maybe"})[1]


def test_annotations_say_which_tools_write():
    for name, tool in REGISTRY.items():
        hints = tool.annotations
        writes = name in {"edit", "edit_symbol", "create_file", "rename", "run_calls"}
        assert hints["readOnlyHint"] is not writes and hints["destructiveHint"] is writes, name
        assert hints["openWorldHint"] is False


OVERLOADED = """export function pick(a: string): string;
export function pick(a: number): number;
export function pick(a: any): any {
  return a;
}

export function other(): void {}
"""


def test_overloads_are_one_definition_for_insertion_and_for_old_text(run, tmp_path):
    (tmp_path / "o.ts").write_text(OVERLOADED)
    after = run(
        "edit_symbol", path="o.ts", symbol="pick", action="insert_after", new_text="export function next() {}"
    )
    assert "error" not in after, after["text"]
    assert (
        "  return a;\n}\n\nexport function next() {}\n\nexport function other"
        in (tmp_path / "o.ts").read_text()
    )
    replace = run("edit_symbol", path="o.ts", symbol="pick", new_text="export function pick() {}")
    assert replace["error"]["code"] == "ambiguous"  # which overload to replace is not for us to guess
    inside = run("edit", path="o.ts", old_text="return a;", new_text="return a ?? null;", symbol="pick")
    assert "error" not in inside, inside["text"]
    assert "return a ?? null;" in (tmp_path / "o.ts").read_text()


def test_history_keeps_a_bounded_number_of_versions(tmp_path):
    from lsp_agent.workspace import Text
    from lsp_agent.writer import History

    history = History(max_chars=64, per_path=2)  # texts of 15 characters: four fit
    texts = [Text.from_str(f"v{n}\n" * 5) for n in range(4)]
    for text in texts:
        history.remember(tmp_path / "a", text)
    assert [history.recall(tmp_path / "a", t.version) is not None for t in texts] == [
        False,
        False,
        True,
        True,
    ]
    for name in "bcd":
        history.remember(tmp_path / name, Text.from_str(name * 15))
    assert history.recall(tmp_path / "a", texts[2].version) is None  # the oldest went first
    assert history.recall(tmp_path / "a", texts[3].version) is not None
    assert history.recall(tmp_path / "d", Text.from_str("d" * 15).version) is not None


def test_a_symbol_edit_answer_keeps_its_budget(run, model):
    code = "def long(self):\n" + "".join(f"    x{n} = {n}\n" for n in range(200))
    answer = run(
        "edit_symbol", path="m.py", symbol="Model/load", action="insert_after", new_text=code, max_chars=400
    )
    assert "error" not in answer and len(answer["text"]) <= 400
    assert answer["text"].splitlines()[1] == "15:    def long(self):"
    assert answer["text"].endswith(f"read start={answer['shown']['end'] + 1}]")
