"""The hostile-file suite: files no ordinary project has, against every tool and over stdio.
A 1 GB sparse file, a million empty lines, a FIFO named like source, binaries, a file that
changes between pages (and one rewritten with the same size and mtime), an unreadable file
and folder, and 10,000 files in one folder (the 100,000 of the original trial, scaled to fit
`make test`). Each is answered or refused with a reason; the server stays up."""

from __future__ import annotations

import json
import os

import pytest

from lsp_agent.tools import Context, call
from lsp_agent.workspace import MAX_TEXT_BYTES, Workspace
from tests.support.raw_rpc import RawClient

MANY_FILES = 10_000
EMPTY_LINES = 1_000_000


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    with open(root / "sparse.py", "wb") as f:
        f.truncate(2**30)  # 1 GB of holes: no disk used, every byte NUL
    with open(root / "sparse_text.py", "wb") as f:
        f.write(b"x = 1\n")
        f.truncate(MAX_TEXT_BYTES + 1)  # text start, over the limit of a held text
    (root / "empty_lines.txt").write_bytes(b"\n" * EMPTY_LINES)
    os.mkfifo(root / "fifo.py")
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 40)
    (root / "late_nul.py").write_bytes(b"def f():\n    pass\n" * 1000 + b"\x00tail")
    (root / "latin1.py").write_bytes("café = 'naïve'\n".encode("latin-1"))
    (root / "one_long_line.js").write_text("var a=" + "1+" * 300_000 + "1;\n")
    (root / "crlf.py").write_bytes(b"def g():\r\n    return 2\r\n")
    (root / "no_newline.py").write_text("def h(): return 3")
    (root / "nul_name_like\u202e.py").write_text("def bidi(): pass\n")
    locked = root / "locked.py"
    locked.write_text("def secret(): pass\n")
    locked.chmod(0)
    locked_dir = root / "locked_dir"
    locked_dir.mkdir()
    (locked_dir / "inner.py").write_text("def inner(): pass\n")
    locked_dir.chmod(0)
    many = root / "many"
    many.mkdir()
    for n in range(MANY_FILES):
        (many / f"f{n:05}.txt").write_text(f"needle {n}\n" if n % 1000 == 0 else "hay\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "ok.py").write_text("class Fine:\n    def ok(self):\n        return 'still served'\n")
    yield root
    locked.chmod(0o644)
    locked_dir.chmod(0o755)


def answers(ctx: Context, tool: str, **arguments) -> dict:
    answer = call(ctx, tool, arguments)
    assert isinstance(answer["text"], str) and answer["text"]
    assert "Traceback" not in answer["text"]
    return answer


def refusal(answer: dict) -> str | None:
    return answer.get("error", {}).get("code")


def test_huge_sparse_files_are_refused_by_size_and_skipped_by_search(hostile):
    ctx = Context(Workspace([hostile]))
    assert refusal(answers(ctx, "read", path="sparse.py")) == "too_large"
    assert refusal(answers(ctx, "read", path="sparse_text.py")) == "too_large"
    assert refusal(answers(ctx, "symbols", path="sparse.py")) == "too_large"
    found = answers(ctx, "search", pattern="x = 1", paths=["sparse_text.py", "sparse.py"])
    assert "error" not in found


def test_a_million_empty_lines_page_to_the_end(hostile):
    ctx = Context(Workspace([hostile]))
    first = answers(ctx, "read", path="empty_lines.txt", max_chars=2000)
    assert first["total_lines"] == EMPTY_LINES and first["next"]
    last = answers(ctx, "read", path="empty_lines.txt", start=EMPTY_LINES)
    assert (last["start"], last["end"], last["next"]) == (EMPTY_LINES, EMPTY_LINES, None)
    assert refusal(answers(ctx, "read", path="empty_lines.txt", start=EMPTY_LINES + 1)) == "out_of_range"


def test_a_fifo_is_refused_and_never_opened(hostile):
    ctx = Context(Workspace([hostile]))
    # Opening a FIFO for reading would block until a writer comes: a hang, not an answer.
    assert refusal(answers(ctx, "read", path="fifo.py")) == "not_a_file"
    assert refusal(answers(ctx, "symbols", path="fifo.py")) == "not_a_file"
    assert "fifo.py" not in answers(ctx, "symbols", path=".", max_chars=100_000)["text"]
    assert "error" not in answers(ctx, "search", pattern="anything")
    assert "error" not in answers(ctx, "find_symbol", name_path="bidi")


def test_binary_and_odd_encodings(hostile):
    ctx = Context(Workspace([hostile]))
    assert refusal(answers(ctx, "read", path="image.png")) == "binary"
    late = answers(ctx, "read", path="late_nul.py", max_chars=500)  # NUL past the sniffed 8 KiB
    assert "error" not in late
    latin = answers(ctx, "read", path="latin1.py")
    assert latin["utf8"] is False and "caf" in latin["text"]
    long_line = answers(ctx, "read", path="one_long_line.js", max_chars=1000)
    assert long_line["next"] and len(long_line["text"]) <= 1000
    assert answers(ctx, "read", path="crlf.py")["eol"] == "\r\n"
    assert "h" in answers(ctx, "symbols", path="no_newline.py")["text"]
    assert "bidi" in answers(ctx, "symbols", path="nul_name_like\u202e.py")["text"]
    assert "error" not in answers(ctx, "search", pattern="PNG")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_and_folder(hostile):
    ctx = Context(Workspace([hostile]))
    assert refusal(answers(ctx, "read", path="locked.py")) == "unreadable"
    assert refusal(answers(ctx, "read", path="locked_dir/inner.py")) in ("unreadable", "not_found")
    assert "error" not in answers(ctx, "search", pattern="secret|inner")
    assert "error" not in answers(ctx, "symbols", path=".")


def test_ten_thousand_files_in_one_folder(hostile):
    ctx = Context(Workspace([hostile]))
    found = answers(ctx, "search", pattern=r"needle \d+", paths=["many"])
    assert found["total_matches"] == MANY_FILES // 1000
    counted = answers(ctx, "search", pattern="hay", paths=["many"], max_chars=2000)
    assert counted["total_matches"] == MANY_FILES - MANY_FILES // 1000
    assert len(counted["text"]) <= 2000
    outline = answers(ctx, "symbols", path="many")
    assert (outline["files"], outline["symbols"]) == (0, 0)  # text files: no grammar


def test_a_file_changing_between_pages_is_never_served_stale(hostile):
    ctx = Context(Workspace([hostile]))
    path = hostile / "changing.py"
    path.write_text("".join(f"line_{n} = {n}\n" for n in range(1, 2001)))
    first = answers(ctx, "read", path="changing.py", max_chars=1000)
    before = os.stat(path)
    path.write_text("".join(f"LINE_{n} = {n}\n" for n in range(1, 2001)))  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # same mtime
    second = answers(ctx, "read", path="changing.py", **first["next"], max_chars=1000)
    assert second["version"] != first["version"]
    assert "LINE_" in second["text"] and "line_" not in second["text"]
    unchanged = answers(ctx, "read", path="changing.py", if_version=first["version"])
    assert "LINE_1 = 1" in unchanged["text"]  # the old version is not "unchanged"
    path.unlink()
    assert refusal(answers(ctx, "read", path="changing.py")) == "not_found"


async def test_the_server_survives_every_hostile_file(hostile):
    """The same files through the server: every request answered, and a good file still
    read after all of them."""
    client = await RawClient.start()
    try:
        await client.initialize(hostile)
        names = [
            "sparse.py",
            "sparse_text.py",
            "empty_lines.txt",
            "fifo.py",
            "image.png",
            "late_nul.py",
            "latin1.py",
            "one_long_line.js",
            "locked.py",
            "locked_dir/inner.py",
            "many",
        ]
        for name in names:
            for method, params in [
                ("lspAgent/read", {"path": name}),
                ("lspAgent/symbols", {"path": name}),
                ("textDocument/documentSymbol", {"textDocument": {"uri": (hostile / name).as_uri()}}),
            ]:
                answer = await client.call(method, params, timeout=60)
                assert "result" in answer, (method, name, answer)
                assert "Traceback" not in json.dumps(answer)
        for pattern in ("needle", "x = 1", "def "):
            answer = await client.call("lspAgent/search", {"pattern": pattern}, timeout=60)
            assert "result" in answer and "error" not in answer["result"], answer
        answer = await client.call("workspace/symbol", {"query": "Fine"}, timeout=60)
        assert "result" in answer
        ok = await client.call("lspAgent/read", {"path": "pkg/ok.py"})
        assert "still served" in ok["result"]["text"]
    finally:
        assert await client.finish() == 0


def test_search_of_an_unsaved_new_buffer_sees_what_read_sees(tmp_path):
    """A buffer opened in the editor but never saved: read shows it, and a search naming
    it searches it (it said the file does not exist)."""
    ws = Workspace([tmp_path])
    ws.open_document(tmp_path / "new.py", "def fresh():\n    return 'needle'\n")
    ctx = Context(ws)
    assert "needle" in call(ctx, "read", {"path": "new.py"})["text"]
    found = call(ctx, "search", {"pattern": "needle", "paths": ["new.py"]})
    assert found["total_matches"] == 1 and "new.py" in found["text"], found["text"]
    assert call(ctx, "search", {"pattern": "needle"})["total_matches"] == 1


def test_fifo_ignore_files_do_not_stop_any_walker(tmp_path):
    """ripgrep opens each folder's ignore files itself; a FIFO named .gitignore (or .ignore,
    .rgignore, .git/info/exclude) waited for a writer forever, and search, symbols, find_symbol
    and list_files never answered. Every walker now answers, the FIFO read as empty."""
    from concurrent.futures import ThreadPoolExecutor

    (tmp_path / "sub" / "deep").mkdir(parents=True)
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / "sub" / "a.py").write_text("def walked():\n    return 'needle'\n")
    (tmp_path / "sub" / "deep" / "b.py").write_text("def deeper():\n    return 'needle'\n")
    for fifo in ("sub/.gitignore", "sub/deep/.ignore", ".rgignore", ".git/info/exclude"):
        os.mkfifo(tmp_path / fifo)
    ws = Workspace([tmp_path])
    ws.open_document(tmp_path / "sub" / "open.py", "def buffered():\n    return 'needle'\n")
    ctx = Context(ws)
    calls = [
        ("search", {"pattern": "needle"}),
        ("search", {"pattern": "needle", "paths": ["sub"]}),
        ("symbols", {"path": "."}),
        ("find_symbol", {"name_path": "deeper"}),
        ("list_files", {}),
        ("references", {"name": "walked"}),
    ]
    with ThreadPoolExecutor(len(calls)) as pool:
        futures = [pool.submit(call, ctx, tool, arguments) for tool, arguments in calls]
        answers = [f.result(timeout=60) for f in futures]
    for (tool, _), answer in zip(calls, answers, strict=True):
        assert "error" not in answer, (tool, answer["text"])
    assert answers[0]["total_matches"] == 3 and answers[1]["total_matches"] == 3
    assert "deeper" in answers[3]["text"] and "b.py" in answers[4]["text"]


def test_a_special_file_named_to_search_is_left_out_as_one(tmp_path):
    """search paths=[a FIFO] said "no matches", as if the pipe held no text; it is left out
    and the answer says why (it is never opened: a reader would wait for a writer)."""
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "a.py").write_text("needle = 1\n")
    ctx = Context(Workspace([tmp_path]))
    mixed = call(ctx, "search", {"pattern": "needle", "paths": ["pipe.py", "a.py"]})
    assert mixed["total_matches"] == 1 and "pipe.py is not a regular file" in mixed["text"]
    alone = call(ctx, "search", {"pattern": "needle", "paths": ["pipe.py"]})
    assert alone["error"]["code"] == "no_paths" and "not a regular file" in alone["text"]
