"""A one-shot command's head start (issue 28): the commonest commands, `search PATTERN` and
`find-symbol NAME` with no flag but `--root`, are read from argv before anything else is
imported, so that
- asking a server running for the same roots costs a socket and some JSON (local.ask), not
  the tools' imports;
- answering alone, the ripgrep they run (search's; find-symbol's for the files holding the
  name) starts at once, on the other core, while the interpreter imports the tools; the
  engine takes it over when it would start that very rg in that very folder
  (RipgrepEngine.search), else it is killed at the end (ahead.py).
Everything else, and these too once started, goes on through cli.main, which parses and
answers as always: a head start changes when work happens, never what is answered.

Only os and sys are imported here until a command is known to be one of these.
"""

from __future__ import annotations

import os
import sys

from .ahead import search_ahead

INTERRUPTED = 130
BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a tool ended by a closed pipe

# The arguments a head start sends a server: the command's positionals by tool.
COMMANDS = {"search": ("search", "pattern", "paths"), "find-symbol": ("find_symbol", "name_path", "path")}
# A command's answer budget, Settings.max_chars (a test checks they agree): sent to a server,
# whose own default a client may have set otherwise; config.py's dataclasses import is not paid.
MAX_CHARS = 20_000
ASKED = False  # a server was asked already (and did not answer): the CLI need not ask again


def command_of(argv: list[str]) -> tuple[str, list[str], str | None] | None:
    """(command, positionals, root) of argv when it is one of COMMANDS with at most one
    `--root DIR` and no other flag; None otherwise (cli.main parses it)."""
    if not argv or argv[0] not in COMMANDS:
        return None
    positionals, root, rest = [], None, argv[1:]
    while rest:
        word = rest.pop(0)
        if word == "--root" and rest and root is None:
            root = rest.pop(0)
        elif word.startswith("-") or not word:
            return None  # a flag (or `--`, or an empty argument): argparse's to read
        else:
            positionals.append(word)
    most = 2 if argv[0] == "find-symbol" else len(positionals)  # search: any number of paths
    return (argv[0], positionals, root) if 1 <= len(positionals) <= most else None


def call_of(argv: list[str]) -> tuple[str, dict, list[str] | None] | None:
    """(tool, arguments, roots as given) of a command of COMMANDS; None for any other."""
    found = command_of(argv)
    if found is None:
        return None
    command, positionals, root = found
    tool, first, second = COMMANDS[command]
    arguments: dict = {first: positionals[0]}
    if len(positionals) > 1:
        arguments[second] = positionals[1:] if tool == "search" else positionals[1]
    return tool, arguments, None if root is None else [root]


def start(argv: list[str]) -> int | None:
    """For a command of COMMANDS: a running server's answer (printed; its exit status is
    returned), else, answering alone, search's ripgrep started; None: the CLI goes on."""
    found = call_of(argv)
    if found is None:
        return None
    tool, arguments, roots = found
    try:
        root = os.path.realpath(os.path.expanduser(roots[0]) if roots else os.getcwd())
    except OSError:
        return None
    if not os.environ.get("LSP_AGENT_NO_SERVER"):
        answered = ask(tool, arguments, root)
        if answered is not None:
            return answered
    if tool == "search" and list(arguments) == ["pattern"]:
        search_ahead(arguments["pattern"], root)
    elif tool == "find_symbol" and list(arguments) == ["name_path"] and is_a_name(arguments["name_path"]):
        from .syntax.languages import EXTENSIONS, FILENAMES  # the files that may define it

        globs = [f"*{extension}" for extension in EXTENSIONS] + list(FILENAMES)
        search_ahead(arguments["name_path"], root, fixed_strings=True, globs=globs)
    return None


def is_a_name(name_path: str) -> bool:
    """Whether a name path is a single name, which find_symbol looks for in the files that
    hold it as written (symbols.candidates: no "/" or "." to split it at, no space)."""
    return not any(c in name_path for c in "/.") and name_path.split() == [name_path]


def ask(tool: str, arguments: dict, root: str) -> int | None:
    """A running server's answer, printed as run_tool prints it; None without one."""
    global ASKED
    from .local import ask, listening

    if not listening([root]):
        return None
    ASKED = True
    answer = ask([root], tool, {"max_chars": MAX_CHARS, **arguments})
    return None if answer is None else printed(answer, as_json=False)


def answer_alone(argv: list[str]) -> int | None:
    """A command of COMMANDS answered alone, its parser never built; None for any other, or
    for arguments refused (the CLI then says why in its parser's words)."""
    found = call_of(argv)
    if found is None:
        return None
    from .oneshot import plain

    answer = plain(*found)
    return None if answer is None else printed(answer, as_json=False)


def printed(answer: dict, *, as_json: bool) -> int:
    """Print an answer's text (or the whole answer as JSON); the exit status it means."""
    import io

    if isinstance(sys.stdout, io.TextIOWrapper):
        # A lone surrogate (a model's "\\ud800", decoded by JSON) cannot be encoded: written as
        # that escape again, which keeps the JSON output valid and exact
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        if as_json:
            import json

            print(json.dumps(answer, indent=2, ensure_ascii=False))
        else:
            print(answer["text"])
        sys.stdout.flush()  # here, where a failed write is said (Python's own flush at exit would only warn)
    except BrokenPipeError:
        raise  # the reader went away: see ended_by
    except OSError as exc:
        return unwritten(exc)
    # 1 for a refusal, a reply with diagnostics, or a call in it that failed
    failed = any("error" in r or "error" in r.get("answer", {}) for r in answer.get("results", []))
    return 1 if "error" in answer or answer.get("diagnostics") or failed else 0


def unwritten(exc: OSError) -> int:
    """The exit status of an answer that could not be written (a full disk), said in one line.
    stdout then goes to /dev/null: Python's flush at exit would fail on it again."""
    print(f"lsp-agent: the answer could not be written: {exc.strerror or exc}", file=sys.stderr)
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 1


def ended_by(exc: BaseException, prog: str = "lsp-agent") -> int:
    """The exit status of a command ended by Ctrl-C (one line said, no traceback) or by its
    reader going away (`lsp-agent … | head`: quietly, as Unix tools end)."""
    if isinstance(exc, KeyboardInterrupt):
        print(f"\n{prog}: interrupted", file=sys.stderr, flush=True)
        return INTERRUPTED
    # Python would complain again when it flushes stdout at exit: stdout goes to /dev/null first
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return BROKEN_PIPE
