"""The command line: subcommands generated from the registry's schemas, help for every
argument, and plain endings (no traceback) for ordinary situations."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from lsp_agent.cli import COMMAND_NAMES, NO_COMMAND, STDIN_ARGUMENT, build_parser, main
from lsp_agent.tools import REGISTRY


def subcommands() -> dict[str, argparse.ArgumentParser]:
    [choices] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(choices.choices)


def test_every_tool_argument_has_a_flag_or_position_with_help():
    commands = subcommands()
    for name, tool in REGISTRY.items():
        if name in NO_COMMAND:
            continue
        parser = commands[COMMAND_NAMES.get(name, name.replace("_", "-"))]
        dests = {a.dest: a for a in parser._actions}
        for argument in tool.schema.get("properties", {}):
            if argument != STDIN_ARGUMENT:
                assert argument in dests, f"{name}: no flag for {argument}"
                assert dests[argument].help, f"{name}: {argument} has no help"


def test_every_positional_argument_has_help():
    for command, parser in subcommands().items():
        for action in parser._actions:
            if not action.option_strings:
                assert action.help, f"lsp-agent {command}: {action.dest} has no help"


def test_flags_people_use_keep_working(tmp_path, capsys):
    (tmp_path / "a.py").write_text("class A:\n    def run(self):\n        return 1\n")
    root = ["--root", str(tmp_path)]
    assert main(["search", "RETURN", "-i", "-F", "-g", "*.py", "-B", "1", "--max-chars", "500", *root]) == 0
    assert "2-    def run(self):\n3 A/run:        return 1" in capsys.readouterr().out
    assert main(["find-symbol", "run", "--kind", "method", "--body", *root]) == 0
    assert "method A/run" in capsys.readouterr().out
    assert main(["read", "a.py", "--start", "2", "--json", *root]) == 0
    assert '"start": 2' in capsys.readouterr().out
    assert main(["symbols", "--depth", "1", *root]) == 0
    assert "class A  1-3" in capsys.readouterr().out


def test_a_malformed_argument_is_one_line_and_status_2(tmp_path, capsys):
    assert main(["read", "a.py", "--max-chars", "5", "--root", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("lsp-agent read: read: argument 'max_chars'")


def test_output_into_a_closed_pipe_ends_quietly(tmp_path):
    (tmp_path / "big.txt").write_text("".join(f"line {n}\n" for n in range(100_000)))
    done = subprocess.run(
        ["bash", "-c", f"{sys.executable} -m lsp_agent read big.txt --max-chars 2000000 | head -1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.startswith("100000 lines · version ")
    assert done.stderr == ""


def test_websockets_without_the_extra_say_how_to_install_it():
    hide = "import sys; sys.modules['websockets'] = None; from lsp_agent.cli import main; main(['serve', '--ws', '0'])"
    done = subprocess.run(
        [sys.executable, "-c", hide], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 1
    assert "pip install 'lsp-agent[ws]'" in done.stderr
    assert "Traceback" not in done.stderr and "pygls" not in done.stderr


@pytest.mark.parametrize("command", ["decode", "run"])
def test_the_reply_comes_from_stdin(command, tmp_path, monkeypatch, capsys):
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO('<tool_call>{"name": "read", "arguments": {"path": "x"}'))
    assert main([command, "--finish-reason", "length", "--root", str(tmp_path)]) == 1
    assert "truncated" in capsys.readouterr().out
