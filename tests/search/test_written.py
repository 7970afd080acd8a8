"""A one-shot search's rg, started ahead, is read as it writes (ripgrep.Written): whatever the
pieces it writes and the pauses between them, the lines read are those of its whole output,
its exit status is kept, the collector's put-off work is done in the pauses, and a cancelled
call kills and reaps it. The writer here is a child process writing given pieces with pauses,
as rg writes its memory file."""

from __future__ import annotations

import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_agent.ahead import Started
from lsp_agent.errors import Cancelled
from lsp_agent.search.ripgrep import Lines, Written

PIECE = st.lists(
    st.sampled_from([b"a", b"{", b'"x"', b"\n", b" ", b"\xff", b'{"type":"end"']), max_size=12
).map(b"".join)


def writer(pieces: list[bytes], pause: float, status: int = 0) -> Started:
    """A child writing `pieces` to a memory file, `pause` seconds before each; it exits with `status`."""
    out, errors = os.memfd_create("out"), os.memfd_create("errors")
    folder = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    pid = os.fork()
    if pid == 0:  # only writes, sleeps and exits (no lock of the parent's threads is taken)
        try:
            for piece in pieces:
                time.sleep(pause)
                os.write(out, piece)
        finally:
            os._exit(status)
    return Started([], folder, out, errors, pid)


def lines_of(stream: Lines) -> list[bytes]:
    return list(stream)


@settings(max_examples=40, deadline=None)
@given(st.lists(PIECE, max_size=6), st.sampled_from([0.0, 0.002]), st.booleans())
def test_the_lines_read_as_it_writes_are_those_of_its_whole_output(pieces, pause, context):
    started = writer(pieces, pause, status=1)
    output = Written(started, lambda: False, context=context)
    try:
        assert lines_of(output) == lines_of(Lines(b"".join(pieces), context=context))
        assert output.returncode == 1 and output.read_to == len(b"".join(pieces))
    finally:
        output.stop()
        started.close()


def test_work_put_off_is_done_while_it_writes_nothing():
    started = writer([b'{"type":"begin"}\n', b'{"type":"end"}\n'], pause=0.05)
    done = []
    output = Written(started, lambda: False, context=False)
    output.idle = lambda: bool(len(done) < 3 and not done.append(1))  # three pieces of work, then none
    try:
        assert lines_of(output) == [b'{"type":"begin"}\n', b'{"type":"end"}\n']
        assert len(done) == 3
    finally:
        output.stop()
        started.close()


def test_a_cancelled_call_kills_and_reaps_it():
    started = writer([b"late\n"], pause=30)
    asked = []
    output = Written(started, lambda: bool(asked.append(1) or len(asked) > 5), context=False)
    began = time.monotonic()
    try:
        with pytest.raises(Cancelled):
            lines_of(output)
    finally:
        output.stop()
        started.close()
    assert time.monotonic() - began < 5
    with pytest.raises(ChildProcessError):  # reaped: no zombie left behind
        os.waitpid(started.pid, os.WNOHANG)


def test_each_file_with_matches_is_prefetched_once_in_the_pauses_saying_whether_its_matches_are_kept(
    tmp_path,
):
    from lsp_agent.search.collector import Collector
    from lsp_agent.search.model import Match
    from lsp_agent.workspace import Workspace

    asked: list = []
    sink = Collector(
        Workspace([tmp_path]), None, set(), prefetch=lambda file, kept: asked.append((file.path.name, kept))
    )
    for name in ("a.py", "a.py", "b.py"):  # a file's second part: asked once
        sink.add(str(tmp_path / name), [Match(1, ("x",), 0, 1)], {}, 1)
    assert asked == []  # nothing until a pause
    while sink.idle_work():
        pass
    assert asked == [("a.py", True), ("b.py", True)]
    sink.drop_details()  # only counts are kept from here: nothing of the files is shown
    sink.add(str(tmp_path / "c.py"), [Match(1, ("x",), 0, 1)], {}, 1)
    while sink.idle_work():
        pass
    assert asked[2:] == [("c.py", False)]


def test_a_prefetch_that_wants_no_more_files_is_asked_no_more(tmp_path):
    from lsp_agent.search.collector import Collector
    from lsp_agent.search.model import Match
    from lsp_agent.workspace import Workspace

    asked: list[str] = []
    sink = Collector(
        Workspace([tmp_path]),
        None,
        set(),
        prefetch=lambda file, kept: asked.append(file.path.name) or len(asked) < 2,
    )
    for name in ("a.py", "b.py", "c.py"):
        sink.add(str(tmp_path / name), [Match(1, ("x",), 0, 1)], {}, 1)
    while sink.idle_work():
        pass
    sink.add(str(tmp_path / "d.py"), [Match(1, ("x",), 0, 1)], {}, 1)
    assert not sink.idle_work()
    assert asked == ["a.py", "b.py"] and not sink.arrived
