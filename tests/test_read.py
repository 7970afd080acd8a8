"""The read tool: pages that never lose a line, within budget, with exact continuations."""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_agent.config import Settings
from lsp_agent.errors import ArgumentError
from lsp_agent.tools import Context, call, validate
from lsp_agent.workspace import Text, Workspace

NUMBERED = re.compile(r"(\d+):")


def body_lines(answer: dict) -> list[tuple[int, str]]:
    """(line number, content) of each line of a page, parsed from its text: `N:text`, or a
    bare line, which is the line after the previous one and only where the numbering rule
    allows it (an empty line, or a line with no letter or digit under a numbered line)."""
    lines = answer["text"].split("\n")[1:]
    if answer["next"] is not None:
        assert lines[-1].startswith("["), "a page with more to come ends in a trailer"
        lines = lines[:-1]
    lines = [line for line in lines if not line.startswith("note: ")]
    parsed: list[tuple[int, str]] = []
    above = False  # the line above was shown with its number
    for line in lines:
        number = parsed[-1][0] + 1 if parsed else answer["start"]
        match = NUMBERED.match(line)
        if match:
            assert int(match.group(1)) == number, (line, number)
            line = line[match.end() :]
            assert line, "an empty line is shown bare"
            assert not above or re.search(r"\w", line), ("a line with no letter under a number is bare", line)
        else:
            assert not line or (above and not re.search(r"\w", line)), ("only these lines are bare", line)
        above = bool(match)
        parsed.append((number, line))
    return parsed


def read_all(run_read, budget: int) -> tuple[str, list[dict]]:
    """Follow `next` from start=1 and rebuild the file from the pages' text alone."""
    pages, rebuilt = [], []
    arguments: dict = {"start": 1}
    while True:
        answer = run_read(max_chars=budget, **arguments)
        assert "error" not in answer, answer["text"]
        pages.append(answer)
        eol = "\r\n" if answer["eol"] == "\r\n" else "\n"
        for number, content in body_lines(answer):
            rebuilt.append(content)
            line_ends = answer["next"] is None or answer["next"]["start"] != number
            last_line = number == answer["total_lines"]
            if line_ends and not (last_line and not answer["final_newline"]):
                rebuilt.append(eol)
        if answer["next"] is None:
            return "".join(rebuilt), pages
        arguments = answer["next"]


def test_thousand_lines_in_parts_give_every_line_once(tmp_path, run):
    lines = [f"line {i}: " + "x" * (i % 37) for i in range(1, 1001)]
    (tmp_path / "big.txt").write_text("\n".join(lines) + "\n")
    text, pages = read_all(lambda **a: run("read", path="big.txt", **a), 2_000)
    assert len(pages) > 10
    seen = [number for page in pages for number, _ in body_lines(page)]
    assert seen == list(range(1, 1001))
    assert text == "\n".join(lines) + "\n"
    for page in pages:
        assert len(page["text"]) <= 2_000
        assert page["total_lines"] == 1000
        if page["next"]:
            assert page["text"].endswith(f"read on with start={page['next']['start']}]")
            assert page["next"]["start"] == page["end"] + 1


texts = st.lists(
    st.one_of(
        st.text(alphabet=st.sampled_from("ab \té日\u00a0\r"), max_size=40),
        st.text(alphabet=st.sampled_from("xyz"), min_size=300, max_size=2500),  # long lines
        st.text(alphabet=st.sampled_from(")]};:\"' \t"), min_size=1, max_size=6),  # bare under a number
        st.just(""),
    ),
    max_size=30,
).flatmap(lambda lines: st.tuples(st.just(lines), st.sampled_from(["\n", "\r\n", "mixed"]), st.booleans()))


def assemble(lines: list[str], eol: str, final_newline: bool) -> str:
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        if i < len(lines) - 1 or final_newline:
            out.append(("\r\n" if i % 2 else "\n") if eol == "mixed" else eol)
    return "".join(out)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=texts, budget=st.integers(min_value=420, max_value=3_000))
def test_following_next_reproduces_any_text_within_budget(tmp_path, spec, budget):
    content = assemble(*spec)
    (tmp_path / "f.txt").write_bytes(content.encode())
    ctx = Context(Workspace([tmp_path]))
    rebuilt, pages = read_all(lambda **a: call(ctx, "read", {"path": "f.txt", **a}), budget)
    assert rebuilt == content
    assert all(len(page["text"]) <= budget for page in pages)


def test_long_line_comes_in_column_segments(tmp_path, run):
    (tmp_path / "min.js").write_text("short\n" + "y" * 5000 + "\nend")
    first = run("read", path="min.js", max_chars=1000)
    assert first["end"] == 1 and first["next"] == {"start": 2}
    second = run("read", path="min.js", max_chars=1000, **first["next"])
    assert second["next"]["start"] == 2 and second["next"]["col"] == second["columns"][1] + 1
    assert second["text"].endswith(f"read on with start=2 col={second['next']['col']}]")
    assert "columns 1-" in second["text"].split("\n")[0]


def test_out_of_range_starts_are_refused_with_the_length(tmp_path, run):
    (tmp_path / "a.txt").write_text("1\n2\n3\n")
    for start in (0, -5, 4, 10_000):
        answer = run("read", path="a.txt", start=start)
        assert answer["error"]["code"] == "out_of_range"
        assert "a.txt has 3 lines" in answer["text"]
    assert run("read", path="a.txt", start=1, col=9)["error"]["code"] == "out_of_range"


def test_empty_file_says_so(tmp_path, run):
    (tmp_path / "empty.txt").write_text("")
    answer = run("read", path="empty.txt")
    assert "empty file (0 lines)" in answer["text"] and answer["next"] is None
    assert run("read", path="empty.txt", start=2)["error"]["code"] == "out_of_range"


def test_if_version_unchanged_and_changed(tmp_path, run):
    f = tmp_path / "a.txt"
    f.write_text("one\n")
    version = run("read", path="a.txt")["version"]
    same = run("read", path="a.txt", if_version=version)
    assert same["unchanged"] is True and same["text"].count("\n") == 0
    assert f"unchanged since version {version}" in same["text"]
    f.write_text("one\ntwo\n")
    changed = run("read", path="a.txt", if_version=version)
    assert changed["unchanged"] is False and changed["version"] != version
    assert f"note: changed since version {version}" in changed["text"]
    assert "2:two" in changed["text"]


def test_decoding_notes(tmp_path, run):
    (tmp_path / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    answer = run("read", path="latin1.txt")
    assert "not valid UTF-8" in answer["text"] and "caf\ufffd" in answer["text"]
    (tmp_path / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    answer = run("read", path="crlf.txt")
    assert "CRLF line endings" in answer["text"] and "\r" not in answer["text"]
    (tmp_path / "nofinal.txt").write_bytes(b"a\nb")
    assert "no newline at end of file" in run("read", path="nofinal.txt")["text"]


def test_binary_file_is_refused_with_its_size(tmp_path, run):
    (tmp_path / "blob.bin").write_bytes(b"\x7fELF\x00\x01" + bytes(2000))
    answer = run("read", path="blob.bin")
    assert answer["error"]["code"] == "binary"
    assert "2,006 bytes" in answer["text"]


def test_confinement(tmp_path, run):
    inside = tmp_path / "ws"
    inside.mkdir()
    (inside / "ok.txt").write_text("fine\n")
    (tmp_path / "secret.txt").write_text("secret\n")
    os.symlink(tmp_path / "secret.txt", inside / "escape.txt")
    os.symlink(inside / "ok.txt", inside / "alias.txt")
    ctx = Context(Workspace([inside]))

    def read(path):
        return call(ctx, "read", {"path": path})

    for bad in (
        "../secret.txt",
        str(tmp_path / "secret.txt"),
        (tmp_path / "secret.txt").as_uri(),
        "/etc/passwd",
    ):
        assert read(bad)["error"]["code"] == "outside_workspace", bad
    escaped = read("escape.txt")
    assert escaped["error"]["code"] == "outside_workspace"
    assert "through a symlink" in escaped["text"]
    assert "secret" not in escaped["text"].split("(")[0].replace("escape.txt", "")
    for good in (
        "ok.txt",
        str(inside / "ok.txt"),
        (inside / "ok.txt").as_uri(),
        "sub/../ok.txt",
        "alias.txt",
    ):
        assert "fine" in read(good)["text"], good
    assert read("missing.txt")["error"]["code"] == "not_found"
    assert read(".")["error"]["code"] == "is_directory"


def test_overlay_is_read_instead_of_disk(tmp_path):
    (tmp_path / "a.py").write_text("on disk\n")
    ws = Workspace([tmp_path])
    ws.open_document((tmp_path / "a.py").as_uri(), "unsaved\nbuffer\n")
    answer = call(Context(ws), "read", {"path": "a.py"})
    assert "unsaved" in answer["text"] and answer["from_editor"] is True
    ws.close_document((tmp_path / "a.py").as_uri())
    assert "on disk" in call(Context(ws), "read", {"path": "a.py"})["text"]


def test_budget_below_schema_minimum_is_an_argument_error():
    with pytest.raises(ArgumentError, match="max_chars"):
        validate("read", {"path": "a", "max_chars": 10})
    with pytest.raises(ArgumentError, match="start"):
        validate("read", {"path": "a", "start": "ten"})
    with pytest.raises(ArgumentError, match="bogus"):
        validate("read", {"path": "a", "bogus": 1})
    with pytest.raises(ArgumentError, match="path"):
        validate("read", {})


def test_budget_too_small_for_a_long_path_is_refused_with_the_minimum(tmp_path, run):
    """A page whose header names a long path (a body find_symbol found) leaves no room for text."""
    name = "d" * 120 + ".py"
    (tmp_path / name).write_text("def f(): return '" + "z" * 1000 + "'\n")
    args = {"name_path": "f", "path": name, "include_body": True}
    answer = run("find_symbol", **args, max_chars=200)
    assert answer["error"]["code"] == "budget_too_small"
    bigger = run("find_symbol", **args, max_chars=answer["minimum"])
    assert "error" not in bigger and len(bigger["text"]) <= answer["minimum"]
    assert bigger["text"].startswith(f"{name} · function · line 1 of 1, columns 1-")


def test_the_header_names_what_the_call_did_not(tmp_path, run):
    """A read of a named file leaves its path out; a symbol read names the symbol's kind, its
    name path when the call gave less of it, and its range when a page shows only part of it."""
    body = "".join(f"        n{i} = {i}\n" for i in range(30))
    (tmp_path / "a.py").write_text(f"class Cart:\n    def total(self):\n{body}        return 1\n")
    whole = run("read", path="a.py")
    assert whole["text"].split("\n")[0] == f"33 lines · version {whole['version']}"
    method = run("read", path="a.py", symbol="Cart.total")
    assert method["text"].split("\n")[0] == f"method · lines 2-33 of 33 · version {method['version']}"
    paged = run("read", path="a.py", symbol="total", max_chars=200)
    end = paged["end"]
    assert (
        paged["text"].split("\n")[0]
        == f"method Cart/total (lines 2-33) · lines 2-{end} of 33 · version {paged['version']}"
    )
    assert paged["text"].endswith(f"[read on with start={end + 1} symbol=total]")
    assert len(whole["version"]) == 8 and run("read", path="a.py", if_version=whole["version"])["unchanged"]
    # find_symbol found the file, so its body names it
    found = run("find_symbol", name_path="total", include_body=True)
    assert (
        found["text"].split("\n")[0]
        == f"a.py · method Cart/total · lines 2-33 of 33 · version {found['version']}"
    )
    found = run("find_symbol", name_path="Cart/total", include_body=True)
    assert found["text"].split("\n")[0] == f"a.py · method · lines 2-33 of 33 · version {found['version']}"


def test_line_index_and_versions():
    text = Text.from_str("a\r\nbb\r\nc")
    assert (text.line_count, text.eol, text.final_newline) == (3, "\r\n", False)
    assert [text.line(n) for n in (1, 2, 3)] == ["a", "bb", "c"]
    assert Text.from_str("x").version == Text.from_bytes(b"x").version
    assert Text.from_str("").line_count == 0 and Text.from_str("\n").line_count == 1


def test_settings_keep_defaults_for_bad_options():
    settings, problems = Settings.from_options({"max_chars": "lots", "max_nudges": 3, "colour": 1})
    assert settings.max_chars == 20_000 and settings.max_nudges == 3
    assert any("max_chars" in p for p in problems) and any("colour" in p for p in problems)


def test_fifo_is_refused_instead_of_blocking(tmp_path, run):
    os.mkfifo(tmp_path / "pipe")
    assert run("read", path="pipe")["error"]["code"] == "not_a_file"
