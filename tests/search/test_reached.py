"""Each file a search reports is tested beneath the root before anything of it is answered:
most in rg's pauses, in batches (the collector's put-off work), the rest by the engine's check
after rg ended (RipgrepEngine.verify). A file is tested once, and only after its last report
(after rg read it): one withdrawn and searched again waits for its new report."""

from __future__ import annotations

from collections import Counter

from lsp_agent.search import Query, run_search, targets_of
from lsp_agent.search.collector import Collector
from lsp_agent.workspace import Beneath, Workspace


def test_files_are_tested_in_a_pause_after_their_report_only(tmp_path):
    sink = Collector(Workspace([tmp_path]), None, set())
    batches: list[list[str]] = []
    sink.check_beneath = lambda names: batches.append(names) or []
    a, b, c = (str(tmp_path / name) for name in ("a.py", "b.py", "c.py"))
    for name in (c, a, b):
        sink.add(name, [], {}, 1)
        sink.finished(name)
    sink.withdraw(b)  # (its folder searched again, say): its test waits for its next report
    assert sink.idle_work() and not sink.idle_work()
    assert batches == [[a, c]] and sink.reached == {a, c}  # in path order, as Beneath is quickest
    sink.add(b, [], {}, 1)
    sink.finished(b)
    while sink.idle_work():
        pass
    assert batches == [[a, c], [b]] and sink.reached == {a, b, c}
    sink.withdraw(a)
    assert sink.reached == {b, c}  # a withdrawn file's test is forgotten


def test_a_file_the_test_refuses_is_not_reached(tmp_path):
    sink = Collector(Workspace([tmp_path]), None, set())
    sink.check_beneath = lambda names: [n for n in names if n.endswith("link.py")]
    for name in ("a.py", "link.py"):
        sink.add(str(tmp_path / name), [], {}, 1)
        sink.finished(str(tmp_path / name))
    while sink.idle_work():
        pass
    assert sink.reached == {str(tmp_path / "a.py")}


def test_without_a_test_to_do_in_the_pauses_none_waits(tmp_path):
    sink = Collector(Workspace([tmp_path]), None, set())
    sink.finished(str(tmp_path / "a.py"))
    assert not sink.unchecked and not sink.idle_work()


def test_every_file_reported_is_tested_once_during_or_after_the_search(tmp_path, monkeypatch):
    for n in range(300):
        folder = tmp_path / f"d{n % 7}"
        folder.mkdir(exist_ok=True)
        (folder / f"m{n}.py").write_text("self.x = 1\n" * (n % 5 + 1))
    (tmp_path / "d0" / "none.py").write_text("no match\n")
    tested: Counter[str] = Counter()
    real = Beneath.unreached
    monkeypatch.setattr(
        Beneath, "unreached", lambda self, names, above: tested.update(names) or real(self, names, above)
    )
    ws = Workspace([tmp_path])
    targets, _ = targets_of(ws, None)
    outcome = run_search(ws, Query("self"), targets, keep_details=lambda *_: False)
    assert len(outcome.files) == 300
    assert sorted(tested) == sorted(f.path.as_posix() for f in outcome.files)
    assert set(tested.values()) == {1}


def test_a_file_that_is_a_link_when_tested_is_left_out(tmp_path, monkeypatch):
    """Replaced by a link to a file outside after rg read it: whenever it is tested (in a
    pause or after), it is not answered."""
    outside = tmp_path / "outside.py"
    outside.write_text("self.secret = 1\n")
    root = tmp_path / "ws"
    root.mkdir()
    for n in range(50):
        (root / f"m{n}.py").write_text("self.x = 1\n")
    real = Beneath.unreached

    def swapped(self, names, above):  # m7.py is swapped for a link before any test
        if not (root / "m7.py").is_symlink():
            (root / "m7.py").unlink()
            (root / "m7.py").symlink_to(outside)
        return real(self, names, above)

    monkeypatch.setattr(Beneath, "unreached", swapped)
    ws = Workspace([root])
    targets, _ = targets_of(ws, None)
    outcome = run_search(ws, Query("self"), targets, keep_details=lambda *_: False)
    assert sorted(f.shown for f in outcome.files) == sorted(f"m{n}.py" for n in range(50) if n != 7)


SWAPPING_RG = """#!/bin/bash
# The real rg, but a/ is swapped for a link to ../secret after it reported a/1.py and before
# it reads a/2.py (as a racing writer could swap it). After each report it waits until the
# search tested it (a mark in $MARKS; at most 10 s), as rg's own pauses let it.
set -- "${@:1:$#-1}"
"$REAL" --threads=1 --sort=path --with-filename "$@" ./a/1.py
printf '\\n'
for _ in $(seq 1000); do [ -e "$MARKS/1" ] && break; sleep 0.01; done
mv a a_old && ln -s ../secret a
"$REAL" --threads=1 --sort=path --with-filename "$@" ./a/2.py
printf '\\n'
for _ in $(seq 1000); do [ -e "$MARKS/2" ] && break; sleep 0.01; done
"""


def test_a_folder_swapped_for_a_link_between_two_pauses_is_seen(tmp_path, monkeypatch):
    """a/1.py is tested in a pause; a/ is then swapped for a link out, and rg reads a/2.py
    through it. Its test opens a/ again (a folder kept open from the first test would still
    be the real one) and leaves it out: nothing of the outside file is answered."""
    from lsp_agent.search import ripgrep
    from lsp_agent.search.walk import find_rg

    root = tmp_path / "ws"
    (root / "a").mkdir(parents=True)
    for n in (1, 2):
        (root / "a" / f"{n}.py").write_text("self\n")
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "2.py").write_text("self self self\n")
    fake = tmp_path / "rg"
    fake.write_text(SWAPPING_RG)
    fake.chmod(0o755)
    monkeypatch.setenv("REAL", find_rg())
    monkeypatch.setenv("LSP_AGENT_RG", str(fake))
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("MARKS", str(marks))
    tested: list[list[str]] = []
    real = ripgrep.unreached_now

    def marked(root, names):
        refused = real(root, names)
        tested.append(names)
        (marks / str(len(tested))).touch()
        return refused

    monkeypatch.setattr(ripgrep, "unreached_now", marked)
    ws = Workspace([root])
    targets, _ = targets_of(ws, None)
    outcome = run_search(ws, Query("self"), targets, keep_details=lambda *_: False)
    assert (root / "a").is_symlink()  # the swap happened while rg ran
    assert [f.shown for f in outcome.files] == ["a/1.py"]
    # each tested in the pause after its report: a/2.py after the swap
    assert tested == [[str(root / "a" / "1.py")], [str(root / "a" / "2.py")]]


def test_a_binary_file_the_check_refuses_is_not_named(tmp_path):
    """With count_binary, a binary file that matches is named in the answer's notes: one the
    check beneath the root withdraws (reached through a link, say) is not."""
    sink = Collector(Workspace([tmp_path]), None, set())
    kept, refused = str(tmp_path / "kept.bin"), str(tmp_path / "refused.bin")
    for name in (kept, refused):
        sink.add_binary(name, matched=True)
    sink.withdraw(refused)
    assert sink.outcome("ripgrep", False).binary == ["kept.bin"]
