"""Property: any sequence of edits, then a read, gives the expected text, whatever the line
endings (LF, CRLF), characters (non-ASCII, astral), final newline and line lengths."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_agent.server import changed_span
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace, content_version

PIECES = st.sampled_from(["a", "b", "é", "日本", "😀", " ", "  ", "x" * 3000, "def", "(", ")", "\t", ":"])
LINE = st.lists(PIECES, max_size=4).map("".join)
LINES = st.lists(LINE, min_size=0, max_size=12)


def edit_steps():
    text_edit = st.tuples(
        st.just("text"), st.integers(0, 10**6), st.integers(1, 30), LINE, st.integers(0, 10**6)
    )
    line_edit = st.tuples(st.just("lines"), st.integers(0, 10**6), st.integers(0, 3), LINES)
    return st.lists(st.one_of(text_edit, line_edit), min_size=1, max_size=6)


def occurrences(content: str, old: str) -> list[int]:
    found, at = [], content.find(old)
    while at != -1:
        found.append(at)
        at = content.find(old, at + len(old))
    return found


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=LINES, crlf=st.booleans(), final=st.booleans(), steps=edit_steps())
def test_edits_then_a_read_give_the_expected_text(lines, crlf, final, steps):
    eol = "\r\n" if crlf else "\n"
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        initial = render(lines, final, eol)
        (root / "f.txt").write_bytes(initial.encode())
        expected, has_final = parse(initial.replace("\r\n", "\n"))  # the model: lines, final newline
        ctx = Context(Workspace([root]))
        for step in steps:
            # a file is CRLF only while it has a line ending: one without keeps LF for new lines
            eol = "\r\n" if b"\r\n" in (root / "f.txt").read_bytes() else "\n"
            version = call(ctx, "read", {"path": "f.txt"}).get("version")
            content = "\n".join(expected) + ("\n" if has_final and expected else "")
            if step[0] == "text":
                _, at, length, new, pick = step
                if not content:
                    continue
                at %= len(content)
                old = content[at : at + length]
                found = occurrences(content, old)
                k = pick % len(found)
                answer = call(
                    ctx, "edit", {"path": "f.txt", "old_text": old, "new_text": new, "occurrence": k + 1}
                )
                content = content[: found[k]] + new + content[found[k] + len(old) :]
                expected, has_final = parse(content)
            else:
                _, start, count, new_lines = step
                start = start % (len(expected) + 1) + 1
                end = min(start - 1 + count, len(expected))
                new_text = "".join(f"{x}\n" for x in new_lines)
                arguments = {
                    "path": "f.txt",
                    "start": start,
                    "end": end,
                    "new_text": new_text,
                    "if_version": version,
                }
                answer = call(ctx, "edit", arguments)
                was_final = has_final
                expected[start - 1 : end] = new_lines
                has_final = was_final or not expected
                # one empty last line without a newline is no line at all: the file is ""
                expected, has_final = parse(render(expected, has_final, "\n"))
            assert "error" not in answer, answer["text"]
            data = (root / "f.txt").read_bytes()
            assert data == render(expected, has_final, eol).encode()
            assert answer["version"] == content_version(data)
        read = call(ctx, "read", {"path": "f.txt", "max_chars": 10**6})
        assert read["version"] == content_version((root / "f.txt").read_bytes())


def parse(content: str) -> tuple[list[str], bool]:
    """The lines of a text and whether it ends in a newline (an empty text: no lines, and
    nothing missing)."""
    if not content:
        return [], True
    lines = content.split("\n")
    return (lines[:-1], True) if content.endswith("\n") else (lines, False)


def render(lines: list[str], final: bool, eol: str) -> str:
    return eol.join(lines) + (eol if final and lines else "")


TEXTS = st.text(alphabet="ab\n\r😀", max_size=12)


@given(before=TEXTS, after=TEXTS)
def test_the_editor_span_makes_the_new_text(before, after):
    """The one span sent to an editor turns its buffer into the new text exactly, and never
    ends past a final newline (a line that does not exist)."""
    start, end, new = changed_span(before, after)
    assert 0 <= start <= end <= len(before)
    assert before[:start] + new + before[end:] == after
    if before.endswith("\n") and before[:start].endswith("\n") and after:
        assert end < len(before) or not after.endswith("\n") or start == 0
