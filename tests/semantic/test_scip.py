"""The SCIP source on indexes written here field by field (a protobuf writer of a few lines):
the reader against what was written, damaged and truncated indexes refused whatever the
byte, random bytes never crash the reader, and navigation answering from an index, leaving
it for a file changed since it was built and saying so. Indexes by the real indexers are
in tests/servers/test_scip_indexers.py."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_agent.config import Settings
from lsp_agent.errors import Refusal
from lsp_agent.semantic import scip
from lsp_agent.semantic.scip_format import Damaged, Document, read_index
from lsp_agent.tools import Context, call
from lsp_agent.tools.definition import documentation_lines
from lsp_agent.workspace import Workspace

FIXTURE = Path(__file__).parent.parent / "fixtures" / "semantic" / "py"


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def field(number: int, value: bytes | str | int) -> bytes:
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


def occurrence(span: tuple[int, ...], symbol: str, roles: int = 0) -> bytes:
    packed = b"".join(varint(n) for n in span)
    return field(1, packed) + field(2, symbol) + (field(3, roles) if roles else b"")


def symbol_info(name: str, docs: tuple[str, ...] = (), implements: tuple[str, ...] = ()) -> bytes:
    out = field(1, name) + b"".join(field(3, d) for d in docs)
    return out + b"".join(field(4, field(1, t) + field(3, 1)) for t in implements)


CACHE_GET = "scip-python python app 0 app.views/Cache#get()."
BASE_SAVE = "scip-python python app 0 app.models/Base#save()."
ORDER_SAVE = "scip-python python app 0 app.models/Order#save()."
# settings.get("currency") is a dict's: the syntax shows `settings: dict`, so the by-name
# source leaves it out of cache.get's uses, and says so
LEFT_OUT_DICT = "left out: 1 use on receivers whose `get` is not Cache's by the syntax (dict 1)"


def fixture_index() -> bytes:
    """An index of tests/fixtures/semantic/py as scip-python writes it, for a few symbols
    (positions 0-based; a range on one line has three numbers)."""
    views = field(1, "app/views.py") + b"".join(
        field(2, o)
        for o in (
            occurrence((0, 23, 28), "scip-python python app 0 app.models/Order#"),  # a 0 byte: binary to rg
            occurrence((4, 8, 11), CACHE_GET, 1),
            occurrence((11, 10, 13), CACHE_GET),
            occurrence((9, 10, 14), ORDER_SAVE),
            occurrence((12, 4, 9), "local 0", 1),
            occurrence((13, 4, 9), "local 0"),
        )
    )
    views += field(3, symbol_info(CACHE_GET, ("```python\ndef get(self, key)\n```",)))
    models = field(1, "app/models.py") + b"".join(
        field(2, o)
        for o in (
            occurrence((1, 8, 12), BASE_SAVE, 1),
            occurrence((6, 8, 12), ORDER_SAVE, 1),
            occurrence((7, 16, 20), BASE_SAVE),
        )
    )
    models += field(3, symbol_info(ORDER_SAVE, implements=(BASE_SAVE,)))
    metadata = field(2, field(1, "scip-python") + field(2, "0.6.6"))
    return field(1, metadata) + field(2, views) + field(2, models)


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "py"
    shutil.copytree(FIXTURE, root)
    (root / "index.scip").write_bytes(fixture_index())
    old = os.stat(root / "index.scip").st_mtime_ns - 10**9  # the sources are older than their index
    for source in (root / "app").iterdir():
        os.utime(source, ns=(old, old))
    scip.STORE.found.clear()
    return root


def ask(root: Path, tool: str, **arguments) -> dict:
    return call(Context(Workspace([root]), Settings()), tool, arguments)


def uses(answer: dict, source: str) -> set[tuple[str, int]]:
    return {(r["path"], r["line"]) for r in answer["references"] if r["source"] == source}


def test_the_reader_gives_back_what_was_written():
    entries = list(read_index(fixture_index()))
    assert entries[0] == "scip-python 0.6.6"
    views = entries[1]
    assert isinstance(views, Document) and views.path == "app/views.py"
    assert views.occurrences[1] == ((4, 8, 4, 11), CACHE_GET, 1)
    assert views.symbols[0].documentation == ["```python\ndef get(self, key)\n```"]
    assert entries[2].symbols[0].implements == [BASE_SAVE]


def test_every_truncation_is_refused_or_a_whole_prefix_of_documents():
    data = fixture_index()
    whole = [e.path for e in read_index(data) if isinstance(e, Document)]
    for cut in range(len(data)):
        try:
            paths = [e.path for e in read_index(data[:cut]) if isinstance(e, Document)]
        except Damaged:
            continue
        assert paths == whole[: len(paths)]  # a cut between documents leaves the earlier ones


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_crash_the_reader(data):
    try:
        for entry in read_index(data):
            assert isinstance(entry, (str, Document))
    except Damaged as exc:
        assert str(exc)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 255))
def test_a_flipped_byte_never_crashes_the_reader(where, value):
    data = bytearray(fixture_index())
    data[where % len(data)] = value
    try:
        list(read_index(bytes(data)))
    except Damaged:
        pass


def test_references_come_from_the_index_by_type(project):
    answer = ask(project, "references", path="app/views.py", line=12, column=11)  # cache.get
    assert uses(answer, "scip-python 0.6.6 index") == {("app/views.py", 5), ("app/views.py", 12)}
    assert uses(answer, "name") == set()  # settings.get is dict.get: left out, and said
    assert "no other use by name" in answer["text"] and LEFT_OUT_DICT in answer["text"]
    assert answer["semantic"]["documentation"] == ["```python\ndef get(self, key)\n```"]  # hover-like


def test_definition_and_implementations_come_from_the_index(project):
    answer = ask(project, "definition", path="app/models.py", line=8, column=17)  # super().save()
    assert [(d["path"], d["name_path"]) for d in answer["definitions"]] == [("app/models.py", "Base/save")]
    assert "by type, from scip-python 0.6.6 index" in answer["text"]
    answer = ask(project, "implementations", path="app/models.py", line=2, column=9)  # Base.save
    assert [(e["path"], e["line"], e["source"]) for e in answer["entries"]] == [
        ("app/models.py", 7, "scip-python 0.6.6 index")
    ]


def test_a_definition_from_the_index_shows_its_documentation_lines(project):
    answer = ask(project, "definition", path="app/views.py", line=12, column=11)  # cache.get
    assert answer["source"] == "scip-python 0.6.6 index"
    head = answer["text"].splitlines()[:3]
    assert head[0].startswith("definition of get") and "doc: def get(self, key)" in head
    assert "```" not in answer["text"]  # the fences are markup, not documentation
    small = ask(project, "definition", path="app/views.py", line=12, column=11, max_chars=600)
    assert "doc:" not in small["text"] and len(small["text"]) <= 600  # the budget comes first
    assert small["semantic"]["documentation"] == ["```python\ndef get(self, key)\n```"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=300), max_size=6), st.integers(0, 20_000))
def test_documentation_lines_keep_to_their_share_of_the_budget(documentation, budget):
    lines = [x for d in documentation for x in d.splitlines() if x.strip() and not x.startswith("```")]
    shown = documentation_lines(documentation, budget)
    assert sum(len(x) + 1 for x in shown) <= budget // 5 + 60  # the last line says what is left
    whole = [f"doc: {x[:200]}" for x in lines]
    if shown and list(shown) != whole[: len(shown)]:  # some left out: the last line says how many
        assert list(shown[:-1]) == whole[: len(shown) - 1]
        assert shown[-1] == f"doc: [{len(lines) - len(shown) + 1} more lines in semantic.documentation]"
    assert all(x.startswith("doc: ") and "\n" not in x for x in shown)


def test_a_local_symbol_is_one_documents(project):
    answer = ask(project, "references", path="app/views.py", line=14, column=5)  # items
    assert uses(answer, "scip-python 0.6.6 index") == {("app/views.py", 13), ("app/views.py", 14)}


def test_an_edited_file_is_answered_by_name_and_the_answer_says_why(project):
    views = project / "app" / "views.py"
    views.write_text(views.read_text() + "# edited\n")
    answer = ask(project, "references", path="app/views.py", line=12, column=11)
    assert "index.scip is older than app/views.py" in answer["text"]
    assert answer["semantic"] == {
        "unavailable": "index.scip is older than app/views.py (changed since it was indexed)"
    }
    assert uses(answer, "name") == {("app/views.py", 5), ("app/views.py", 12)}
    assert LEFT_OUT_DICT in answer["text"]
    # from an unchanged file, the edited one's uses are left to the by-name source, and named
    answer = ask(project, "references", path="app/models.py", line=7, column=9)  # Order.save
    assert uses(answer, "scip-python 0.6.6 index") == {("app/models.py", 7)}
    assert ("app/views.py", 10) in uses(answer, "name")
    assert (
        "index.scip is older than app/views.py (changed since it was indexed): uses there are by name"
        in answer["text"]
    )


def test_a_change_after_a_verdict_was_kept_is_seen(project, monkeypatch):
    """The index keeps each file's verdict by its stat: a rewrite of the same size under the
    same modification time (changed ctime) and an unsaved buffer both undo it."""
    monkeypatch.setattr(scip, "is_racy", lambda info, read_at: False)  # stats old enough to trust
    ws = Workspace([project])
    ctx = Context(ws, Settings())
    views, models = project / "app" / "views.py", project / "app" / "models.py"
    question = {"path": "app/views.py", "line": 12, "column": 11}
    assert uses(call(ctx, "references", question), "scip-python 0.6.6 index")  # verdicts kept
    assert uses(
        call(ctx, "references", {"path": "app/models.py", "line": 7, "column": 9}), "scip-python 0.6.6 index"
    )
    index = scip.STORE.index(project / "index.scip", ws, lambda message: None)
    assert {file.name for _, file in index.seen} == {"views.py", "models.py"}  # kept, by stat
    before = os.stat(views)
    views.write_text(views.read_text().replace("cache", "CACHE", 1))
    os.utime(views, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(views).st_size == before.st_size
    assert "index.scip is older than app/views.py" in call(ctx, "references", question)["text"]
    answer = call(ctx, "references", {"path": "app/models.py", "line": 7, "column": 9})  # Order.save
    assert (
        "index.scip is older than app/views.py (changed since it was indexed): uses there are by name"
        in answer["text"]
    )
    assert ("app/views.py", 10) not in uses(answer, "scip-python 0.6.6 index")
    # an unsaved buffer over an unchanged file, after that file's verdict was kept
    assert uses(
        call(ctx, "references", {"path": "app/models.py", "line": 2, "column": 9}), "scip-python 0.6.6 index"
    )
    ws.open_document(models, models.read_text() + "# unsaved\n")
    assert (
        "older than app/models.py"
        in call(ctx, "references", {"path": "app/models.py", "line": 2, "column": 9})["text"]
    )
    ws.close_document(models)
    assert uses(
        call(ctx, "references", {"path": "app/models.py", "line": 2, "column": 9}), "scip-python 0.6.6 index"
    )


def test_an_unsaved_buffer_is_a_change_too(project):
    ws = Workspace([project])
    views = project / "app" / "views.py"
    ws.open_document(views, views.read_text().replace("cache.get", "cache.get "))
    answer = call(Context(ws, Settings()), "references", {"path": "app/views.py", "line": 12, "column": 11})
    assert "older than app/views.py" in answer["text"]


def test_a_truncated_index_is_refused_with_a_clear_message(project):
    (project / "index.scip").write_bytes(fixture_index()[:150])
    answer = ask(project, "references", path="app/views.py", line=12, column=11)
    reason = answer["semantic"]["unavailable"]
    assert reason.startswith("index.scip is not a readable SCIP index (") and reason.endswith("): refused")
    assert uses(answer, "name") == {("app/views.py", 5), ("app/views.py", 12)}
    assert LEFT_OUT_DICT in answer["text"]


def test_another_file_than_an_index_is_refused(project):
    (project / "index.scip").write_bytes(b"\x00\x01not scip at all")
    answer = ask(project, "definition", path="app/models.py", line=8, column=17)
    assert "not a readable SCIP index" in answer["semantic"]["unavailable"]
    assert answer["definitions"]  # the syntax source answers


def test_an_index_named_in_settings_outside_the_workspace_is_not_read(project, tmp_path):
    outside = tmp_path / "elsewhere" / "index.scip"
    outside.parent.mkdir()
    outside.write_bytes(fixture_index())
    assert scip.discover(Workspace([project]), [str(outside)]) == [project / "index.scip"]


def test_an_index_that_is_a_link_out_or_in_a_root_swapped_for_one_is_not_read(project, tmp_path):
    """index.scip, a link to an index outside, is not found; nor one inside a root nested in
    another whose folder became a link out (walked from the outer root, no link followed);
    and an index found, then swapped for a link, is opened beneath the root and refused."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "index.scip").write_bytes(fixture_index())
    os.rename(project / "index.scip", project / "kept.scip")
    os.symlink(elsewhere / "index.scip", project / "index.scip")
    assert scip.discover(Workspace([project]), []) == []
    assert (
        "from scip-python" not in ask(project, "references", path="app/views.py", line=10, column=11)["text"]
    )
    os.unlink(project / "index.scip")
    os.rename(project / "kept.scip", project / "app" / "index.scip")
    ws = Workspace([project / "app", project])
    os.rename(project / "app", project / "parked")
    os.symlink(elsewhere, project / "app")  # the inner root, a link out now
    assert scip.discover(ws, []) == [project / "parked" / "index.scip"]  # the outer root's own
    os.unlink(project / "app")
    os.rename(project / "parked", project / "app")
    (found,) = scip.discover(ws, [])
    os.rename(found, found.with_name("real.scip"))
    os.symlink(elsewhere / "index.scip", found)  # swapped after it was found
    table = tmp_path / "table"
    with pytest.raises(Refusal):
        scip.build(found, table, ws, lambda message: None)


def test_a_stale_discovery_is_answered_while_the_next_walks(project, monkeypatch):
    """The first ask walks the workspace; once that is older than REDISCOVER the last list is
    answered at once and a new walk finds an index written since, in the background."""
    store, ws = scip.Store(), Workspace([project])
    assert store.indexes(ws, []) == [project / "index.scip"]
    added = project / "app" / "index.scip"
    added.write_bytes(fixture_index())
    monkeypatch.setattr(scip, "REDISCOVER", 0.0)
    walking, go = threading.Event(), threading.Event()
    real = scip.discover

    def slow(*arguments):
        walking.set()
        go.wait(10)
        return real(*arguments)

    monkeypatch.setattr(scip, "discover", slow)
    assert store.indexes(ws, []) == [project / "index.scip"]  # at once, not after the walk
    assert walking.wait(10)
    assert store.indexes(ws, []) == [project / "index.scip"]  # one walk at a time
    go.set()
    deadline = time.monotonic() + 10
    while project / "app" / "index.scip" not in store.indexes(ws, []):
        assert time.monotonic() < deadline, "the background walk's list never came"
        time.sleep(0.01)


def test_precision_syntax_never_reads_an_index(project):
    answer = ask(project, "references", path="app/views.py", line=12, column=11, precision="syntax")
    assert "semantic" not in answer or "unavailable" in answer["semantic"]
    assert not uses(answer, "scip-python 0.6.6 index")


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200))
def test_loading_any_bytes_answers_or_refuses(tmp_path_factory, data):
    root = tmp_path_factory.mktemp("random")
    (root / "index.scip").write_bytes(data)
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(root / "cache")
    try:
        index = scip.STORE.index(root / "index.scip", Workspace([root]), lambda message: None)
    except scip.Refused as exc:
        assert "index.scip" in str(exc) and "refused" in str(exc)
    else:
        assert index.query("SELECT count(*) FROM documents")[0][0] >= 0
    finally:
        if before is None:
            os.environ.pop("XDG_CACHE_HOME")
        else:
            os.environ["XDG_CACHE_HOME"] = before


def doctor(capsys, root: Path, *flags: str) -> list[str]:
    from lsp_agent.cli import main

    assert main(["doctor", "--root", str(root), *flags]) == 0
    out = capsys.readouterr().out.splitlines()
    return out[out.index("SCIP indexes (answer first for the documents they hold as they are):") + 1 :]


def test_doctor_lists_the_indexes_with_their_documents_indexer_and_age(capsys, project, tmp_path):
    assert doctor(capsys, project) == [
        "  index.scip: scip-python 0.6.6, 2 documents, built 0 min ago, all as indexed"
    ]
    views = project / "app" / "views.py"
    views.write_text(views.read_text() + "# edited\n")
    assert doctor(capsys, project)[-1].endswith("1 changed since (answered by the other sources)")
    (project / "lib").mkdir()
    (project / "lib" / "index.lib.scip").write_bytes(fixture_index()[:150])
    outside = tmp_path / "elsewhere.scip"
    outside.write_bytes(fixture_index())
    lines = doctor(capsys, project, "--scip-indexes", json.dumps([str(outside)]))
    assert (
        lines[0].startswith(f"  {outside}: not read (scip_indexes): ") and "outside the workspace" in lines[0]
    )
    assert lines[2].startswith("  lib/index.lib.scip is not a readable SCIP index (") and lines[2].endswith(
        "refused"
    )


def test_doctor_says_nothing_of_indexes_where_there_are_none(capsys, tmp_path):
    from lsp_agent.cli import main

    (tmp_path / "a.py").write_text("x = 1\n")
    assert main(["doctor", "--root", str(tmp_path)]) == 0
    assert "SCIP" not in capsys.readouterr().out
