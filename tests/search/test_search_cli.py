"""lsp-agent search prints exactly the text an agent gets."""

from __future__ import annotations

from lsp_agent.cli import main


def test_cli_search_with_every_flag(tmp_path, capsys):
    (tmp_path / "a.py").write_text("class A:\n    def f(self):\n        return FOO\n")
    (tmp_path / "b.txt").write_text("foo in text\n")
    (tmp_path / "c.md").write_text("FOO in markdown\n")
    status = main(
        ["search", "foo", "--root", str(tmp_path), "-i", "-g", "*.py", "-g", "*.txt", "-B", "1", "-A", "1"]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert out == "\n".join(
        [
            "2 matches in 2 files",
            "a.py",
            "2-    def f(self):",
            "3 A/f:        return FOO",
            "b.txt",
            "1:foo in text",
            "",
        ]
    )
    assert main(["search", "a.c", "--root", str(tmp_path), "-F"]) == 0
    assert "no matches" in capsys.readouterr().out


def test_cli_search_refusal_exits_1(tmp_path, capsys):
    assert main(["search", "(", "--root", str(tmp_path)]) == 1
    assert "regex" in capsys.readouterr().out
    assert main(["search", "x", "../elsewhere", "--root", str(tmp_path)]) == 1
    assert "outside the workspace" in capsys.readouterr().out
