"""Command line: argument parsing only. Each tool subcommand prints exactly the `text` an
agent would get (or the whole answer as JSON with --json).

The tool subcommands are generated from the registry: each argument of a tool's JSON Schema
is a flag named after it (`max_chars` is `--max-chars`), typed and range-checked by its
schema; the tables below only say which arguments are positional, which flags have
grep-style spellings, and which subcommands have shorter names.

Ordinary misuse ends in one line naming the command and the argument, after that
command's usage, never a traceback: EXIT_CODES below are what `--help` documents.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Callable
from importlib.util import find_spec
from typing import Any

from . import __version__, head_start, oneshot
from .config import Settings
from .errors import ArgumentError
from .tools import REGISTRY, catalog
from .tools.registry import RUNS_OTHERS
from .workspace import Workspace

# Subcommands whose name is not the tool's (otherwise `find_symbol` is `find-symbol`).
COMMAND_NAMES = {"decode_calls": "decode", "run_calls": "run"}
# Tools that keep state between calls: a one-shot command cannot use them.
NO_COMMAND = {"stream_open", "stream_feed", "stream_flush"}
# Positional arguments of each command, in order (the others are flags).
POSITIONAL = {
    "read": ["path"],
    "search": ["pattern", "paths"],
    "symbols": ["path"],
    "find_symbol": ["name_path", "path"],
    "references": ["name"],
    "definition": ["name"],
    "list_files": ["path"],
    "overview": ["path"],
    "edit": ["path"],
    "edit_symbol": ["path", "symbol"],
    "create_file": ["path"],
    "implementations": ["name"],
    "callers": ["name"],
    "callees": ["name"],
}
# The argument read from stdin rather than the command line.
STDIN_ARGUMENT = "reply"
# Option strings that are not `--<argument>`: ripgrep's short flags, shorter names.
FLAGS = {
    "glob": ["-g", "--glob"],
    "ignore_case": ["-i", "--ignore-case"],
    "fixed_strings": ["-F", "--fixed-strings"],
    "multiline": ["-U", "--multiline"],
    "context_after": ["-A", "--after-context"],
    "context_before": ["-B", "--before-context"],
    "kinds": ["--kind"],
    "include_body": ["--body"],
}
METAVARS = {"name_path": "NAME", "paths": "PATH"}
# The list of subcommands' line for a tool whose summary's first clause is too long for it.
ONE_LINE = {"run_calls": "decode the tool calls in a model's reply and run them"}

EXIT_CODES = """exit status:
  0    the answer, in full or paged (a `next` says how to go on)
  1    the tool refused the call (its message says what to do instead), a reply had
       undecodable calls, or the server could not start (a port in use)
  2    misuse: an unknown command or flag, a missing or malformed argument, a workspace
       root that is not a directory
  65   serve: the client sent a message too large to read
  130  interrupted (Ctrl-C)
  141  the reader of the output went away (`lsp-agent … | head`)"""
INTERRUPTED, BROKEN_PIPE = head_start.INTERRUPTED, head_start.BROKEN_PIPE


class Parser(argparse.ArgumentParser):
    """argparse without abbreviations, whose errors name the subcommand once, after its
    own usage, and suggest the nearest spelling of a mistyped command or flag."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:  # argparse's contract: it does not return
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: {message}{self.suggestion(message)}\n")

    def suggestion(self, message: str) -> str:
        import difflib

        if found := re.search(r"invalid choice: '([^']*)'", message):
            choices = [c for a in self._actions if a.choices for c in a.choices]
            near = difflib.get_close_matches(found[1], [str(c) for c in choices], n=1)
            return f" (did you mean '{near[0]}'?)" if near else ""
        if found := re.search(r"unrecognized arguments: (\S+)", message):
            flags = [o for a in self._actions for o in a.option_strings]
            near = difflib.get_close_matches(found[1].split("=")[0], flags, n=1)
            return f" (did you mean {near[0]}?)" if near else ""
        return ""


def integer(schema: dict) -> Callable[[str], int]:
    """argparse type: an integer within the schema's bounds, refused in the CLI's words."""
    low, high = schema.get("minimum"), schema.get("maximum")

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
        if low is not None and value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high}, got {value}")
        return value

    parse.__name__ = "integer"
    return parse


def port(text: str) -> int:
    return integer({"minimum": 0, "maximum": 65535})(text)


def directory(text: str) -> str:
    """argparse type of --root: a folder that exists (else every command would fail late)."""
    if not os.path.isdir(text):
        problem = "does not exist" if not os.path.exists(text) else "is not a directory"
        raise argparse.ArgumentTypeError(f"the workspace root {text!r} {problem}")
    return text


def text_of(schema: dict) -> Callable[[str], str]:
    """argparse type of a string argument: non-empty where the schema says so."""
    least = schema.get("minLength", 0)

    def parse(text: str) -> str:
        if len(text) < least:
            raise argparse.ArgumentTypeError("must not be empty")
        return text

    parse.__name__ = "text"
    return parse


def one_line(name: str, summary: str) -> str:
    """A tool's summary cut to its first clause, for the list of subcommands."""
    if name in ONE_LINE:
        return ONE_LINE[name]
    first = re.split(r" \(|\. |: |; |, ", summary, maxsplit=1)[0].rstrip(".")
    return first[:1].lower() + first[1:]


def wrapped(text: str) -> str:
    """A paragraph wrapped as argparse wraps help (the epilogs are laid out by hand)."""
    return textwrap.fill(text, max(shutil.get_terminal_size().columns - 2, 40))


def settings_flags(parser: argparse.ArgumentParser, tool_arguments: dict | None = None) -> None:
    group = parser.add_argument_group("settings (the same as initializationOptions)")
    group.add_argument(
        "--root",
        action="append",
        type=directory,
        help="workspace root (repeatable; default: the current directory)",
    )
    group.add_argument(
        "--default-max-chars",
        dest="default_max_chars",
        type=integer({"minimum": 200}),
        metavar="N",
        help="default answer budget (at least 200)",
    )
    if "max_nudges" not in (tool_arguments or {}):  # else the tool's own flag says the same
        group.add_argument(
            "--max-nudges",
            type=integer({"minimum": 0}),
            metavar="N",
            help="nudges per turn for undecodable tool calls",
        )
    if "edits" not in (tool_arguments or {}):  # the edit tool's --edits is its list of edits
        group.add_argument(
            "--edits", dest="edits_setting", choices=["on", "off"], help="off: serve no edit tools"
        )
    if "precision" not in (tool_arguments or {}):
        group.add_argument(
            "--precision",
            choices=["auto", "syntax"],
            help="navigation: ask the language's server (auto) or not",
        )
    group.add_argument(
        "--semantic-servers",
        dest="semantic_servers",
        type=json_value,
        metavar="JSON",
        help='language servers per language, e.g. {"python": ["basedpyright-langserver", "--stdio"]}',
    )
    group.add_argument(
        "--scip-indexes",
        dest="scip_indexes",
        type=json_value,
        metavar="JSON",
        help='SCIP index files besides those found in the workspace, e.g. ["build/index.scip"]',
    )


def log_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("log")
    group.add_argument(
        "--log-level",
        choices=["debug", "info", "warning", "error"],
        default="warning",
        help="least severe messages logged (default warning; debug adds the protocol messages)",
    )
    group.add_argument("--log-file", help="write the log here (default: stderr)")


def setup_logging(args: argparse.Namespace) -> None:
    level = getattr(logging, args.log_level.upper())
    handler = logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    # pygls logs every message sent and received at INFO: only with --log-level debug.
    logging.getLogger("pygls").setLevel(max(level, logging.WARNING) if level > logging.DEBUG else level)


def json_value(text: str) -> Any:
    return json.loads(text)


# Help for arguments whose schema says nothing (the catalog keeps what every tool shares short)
PLAIN_HELP = {"max_chars": f"Budget of the answer's text in characters (default {Settings.max_chars:,})."}


def argument_options(name: str, schema: dict) -> dict[str, Any]:
    """argparse options for one argument, from its JSON Schema."""
    flag = "--" + name.replace("_", "-")
    # JSON's list examples in the CLI's words: ["llama3"] is `--dialects llama3` here
    described = schema.get("description") or PLAIN_HELP.get(name, name.replace("_", " ").capitalize() + ".")
    help_text = re.sub(r'\["([^"\]]+)"\]', rf"{flag} \1", described)
    kind = schema.get("type")
    if kind == "boolean" and schema.get("default") is True:  # on unless --no-… turns it off
        return {"action": argparse.BooleanOptionalAction, "default": None, "help": help_text}
    if kind == "boolean":
        return {"action": "store_true", "default": None, "help": help_text}
    if kind == "integer":
        return {"type": integer(schema), "metavar": "N", "help": help_text}
    if "enum" in schema:
        return {"choices": schema["enum"], "help": help_text}
    items = schema.get("items") or next(
        (s.get("items") for s in schema.get("anyOf", []) if s.get("type") == "array"), None
    )
    if items is not None and "enum" in items:
        listed = ", ".join(items["enum"])
        return {
            "action": "append",
            "choices": items["enum"],
            "metavar": name.removesuffix("s").upper(),
            "help": f"{help_text} Repeatable; one of {listed}.",
        }
    if items is not None and items.get("type") == "string":
        return {"action": "append", "help": help_text + " Repeatable."}
    if kind in ("string", ["string", "null"]):
        return {"type": text_of(schema), "help": help_text}
    return {"type": json_value, "metavar": "JSON", "help": help_text + " (JSON)"}


def add_tool_command(sub: Any, name: str) -> None:
    tool = REGISTRY[name]
    properties: dict[str, dict] = tool.schema.get("properties", {})
    stdin = f" The {STDIN_ARGUMENT} is read from stdin." if STDIN_ARGUMENT in properties else ""
    command = sub.add_parser(
        COMMAND_NAMES.get(name, name.replace("_", "-")),
        help=one_line(name, tool.summary),
        description=wrapped(tool.summary + stdin),
        epilog=EXIT_CODES,
    )
    required = tool.schema.get("required", [])
    for argument in POSITIONAL.get(name, []):
        schema = properties[argument]
        options: dict[str, Any] = {"help": schema.get("description", ""), "metavar": METAVARS.get(argument)}
        if schema.get("type") == "array":
            options |= {"nargs": "*", "default": []}  # a default, or argparse calls it required
        elif argument not in required:
            options |= {"nargs": "?", "default": schema.get("default")}
        if schema.get("type") == "string":
            options["type"] = text_of(schema)
        command.add_argument(argument, **options)
    for argument, schema in properties.items():
        if argument in POSITIONAL.get(name, []) or argument == STDIN_ARGUMENT:
            continue
        flags = FLAGS.get(argument, ["--" + argument.replace("_", "-")])
        command.add_argument(*flags, dest=argument, **argument_options(argument, schema))
    command.add_argument("--json", action="store_true", help="print the whole answer as JSON")
    settings_flags(command, properties)
    command.set_defaults(handler=run_tool, tool_name=name, parser=command)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; with `only` (a tool's name), of that tool's alone
    among the tools (a one-shot command imports no other tool's module)."""
    parser = Parser(
        prog="lsp-agent",
        description="A language server that serves tools to AI coding agents.\n"
        "`lsp-agent COMMAND --help` describes each command.",
        epilog=EXIT_CODES,
    )
    parser.add_argument("--version", action="version", version=f"lsp-agent {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)

    serve = sub.add_parser(
        "serve",
        help="run the language server (stdio by default)",
        description="Run the language server for an editor or an agent runtime: LSP over stdio "
        "(the default), one client over TCP, or websocket clients.",
        epilog=EXIT_CODES,
    )
    transport = serve.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="speak LSP on stdin/stdout (default)")
    transport.add_argument("--tcp", type=port, metavar="PORT", help="listen for one client on TCP PORT")
    transport.add_argument("--ws", type=port, metavar="PORT", help="listen for websocket clients on PORT")
    serve.add_argument("--host", default="127.0.0.1", help="address for --tcp/--ws (default 127.0.0.1)")
    log_flags(serve)
    settings_flags(serve)
    serve.set_defaults(handler=serve_lsp, parser=serve)

    mcp = sub.add_parser(
        "mcp",
        help="serve the agent tools over MCP stdio (Claude Code, Codex, …)",
        description="Serve the agent tools over MCP stdio. Needs the MCP Python SDK, the extra "
        "`mcp` (make install-cli includes it).",
        epilog=EXIT_CODES,
    )
    log_flags(mcp)
    mcp.add_argument(
        "--structured-content",
        action="store_true",
        help="also send each whole answer as structuredContent (off by default: some clients then show the "
        "model that JSON instead of the text; the answer is always in _meta)",
    )
    settings_flags(mcp)
    mcp.set_defaults(handler=serve_mcp, parser=mcp)

    add_other_commands(sub)

    for name in REGISTRY if only is None else [only]:
        if name not in NO_COMMAND:
            add_tool_command(sub, name)
    return parser


def tool_of_command(command: str) -> str | None:
    """The tool a subcommand runs, known without importing any tool's module."""
    return next(
        (
            n
            for n in REGISTRY.names()
            if COMMAND_NAMES.get(n, n.replace("_", "-")) == command and n not in NO_COMMAND
        ),
        None,
    )


def add_other_commands(sub) -> None:
    """doctor, index and tools: the commands that are neither a server nor a tool."""
    doctor = sub.add_parser(
        "doctor",
        help="say per language which source answers navigation, and why",
        description="Say per language which source answers navigation (the language's own server or the syntax), and why.",
        epilog=EXIT_CODES,
    )
    settings_flags(doctor)
    doctor.set_defaults(handler=print_doctor, parser=doctor)

    index = sub.add_parser(
        "index",
        help="build precise indexes for navigation (index scip: the SCIP indexers)",
        description="Build precise indexes for navigation: `index scip` runs scip-python and scip-typescript where installed.",
        epilog=EXIT_CODES,
    )
    index.add_argument(
        "format", choices=["scip"], help="scip: run scip-python, scip-typescript where installed"
    )
    index.add_argument("--root", default=".", help="the folder to index (default: the current one)")
    index.add_argument(
        "--bin", action="append", default=[], metavar="DIR", help="look for indexers here first"
    )
    index.add_argument(
        "--only", metavar="FOLDER", help="index only this folder of the root (scip-python's --target-only)"
    )
    index.set_defaults(handler=index_scip, parser=index)

    tools = sub.add_parser(
        "tools",
        help="print the tool catalog (names, descriptions, JSON Schemas) as JSON",
        description="Print the tool catalog as JSON: what a runtime registers as function tools.",
        epilog=EXIT_CODES,
    )
    tools.add_argument(
        "--edits", dest="edits_setting", choices=["on", "off"], help="off: without the edit tools"
    )
    tools.set_defaults(handler=print_catalog, parser=tools)


def settings_from(args: argparse.Namespace) -> Settings:
    options = {}
    if getattr(args, "default_max_chars", None) is not None:
        options["max_chars"] = args.default_max_chars
    if getattr(args, "max_nudges", None) is not None:
        options["max_nudges"] = args.max_nudges
    if getattr(args, "edits_setting", None) is not None:
        options["edits"] = args.edits_setting
    if getattr(args, "tool_name", None) is None and getattr(args, "precision", None) is not None:
        options["precision"] = args.precision
    if getattr(args, "semantic_servers", None) is not None:
        options["semantic_servers"] = args.semantic_servers
    if getattr(args, "scip_indexes", None) is not None:
        options["scip_indexes"] = args.scip_indexes
    settings, problems = Settings.from_options(options)
    if problems:  # the flags' types check the same: a setting refused here is a bug of theirs
        args.parser.error("; ".join(problems))
    return settings


def tool_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The tool's arguments given on the command line (and stdin); unset flags are left out."""
    properties = REGISTRY[args.tool_name].schema.get("properties", {})
    arguments = {k: getattr(args, k) for k in properties if k != STDIN_ARGUMENT}
    if STDIN_ARGUMENT in properties:
        if sys.stdin.isatty():  # else it looks hung: say what it waits for
            print(
                f"{args.parser.prog}: reading the {STDIN_ARGUMENT} from stdin (end it with Ctrl-D)",
                file=sys.stderr,
            )
        arguments[STDIN_ARGUMENT] = sys.stdin.read()
    return {k: v for k, v in arguments.items() if v is not None and v != []}


JSON_TYPES = {
    "integer": "an integer",
    "string": "a string",
    "boolean": "true or false",
    "array": "a list",
    "object": "an object",
}
PYTHON_VALUE = re.compile(r"argument '(?P<name>[^']+)': (?P<value>.+) is not of type '(?P<type>\w+)'")


def in_cli_words(name: str, message: str) -> str:
    """A tool's argument error as the CLI says it: without the tool's name (the command is
    named already), values in JSON's words (`got null`, not `None is not of type`)."""
    message = message.removeprefix(f"{name}: ")
    found = PYTHON_VALUE.fullmatch(message)
    if found is None:
        return message
    import ast

    try:
        value = json.dumps(ast.literal_eval(found["value"]))
    except (ValueError, SyntaxError):
        value = found["value"]
    kind = JSON_TYPES.get(found["type"], found["type"])
    return f"argument '{found['name']}' must be {kind}, got {value}"


def asked(name: str, args: argparse.Namespace, arguments: dict[str, Any]) -> dict | None:
    """A running server's answer for the same roots (local.py), for a call that only reads
    and sets no setting (the server has its own); None: answer alone."""
    tool = REGISTRY[name]
    if tool.writes or name in RUNS_OTHERS or settings_from(args) != Settings():
        return None
    if os.environ.get("LSP_AGENT_NO_SERVER") or head_start.ASKED:  # before local.py's imports
        return None
    from .local import ask

    if "max_chars" in tool.schema.get("properties", {}):  # the default a command's answer has
        arguments = {"max_chars": Settings.max_chars, **arguments}
    return ask(Workspace(args.root).roots, name, arguments)


def run_tool(args: argparse.Namespace) -> int:
    name = args.tool_name
    try:
        arguments = tool_arguments(args)
        answer = asked(name, args, arguments) or oneshot.answer(
            name, arguments, args.root, settings_from(args)
        )
    except ArgumentError as exc:
        args.parser.error(in_cli_words(name, str(exc)))
    except ValueError as exc:
        args.parser.error(str(exc))
    return head_start.printed(answer, as_json=args.json)


def print_doctor(args: argparse.Namespace) -> int:
    from .semantic import describe

    workspace = Workspace(args.root)
    print(
        "navigation sources (references, definition, implementations, callers, callees); in an editor"
        " whose plugin answers lspAgent/semantic (VS Code, Neovim), its own language features first:"
    )
    for family, source, why in describe(workspace, settings_from(args)):
        print(f"{family:<11} {source:<27} {why}")
    from .semantic.scip import describe as describe_indexes

    indexes = describe_indexes(
        workspace, settings_from(args).scip_indexes, lambda line: print(line, flush=True)
    )
    if indexes:
        print("SCIP indexes (answer first for the documents they hold as they are):")
        print("\n".join(f"  {line}" for line in indexes))
    return 0


def index_scip(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .semantic.scip_indexers import run

    return run(Path(args.root).resolve(), args.bin, lambda line: print(line, flush=True), args.only)


def print_catalog(args: argparse.Namespace) -> int:
    print(json.dumps(catalog(edits=settings_from(args).edits == "on"), indent=2))
    return 0


def serve_lsp(args: argparse.Namespace) -> int:
    from .server import create_server

    if args.ws is not None and find_spec("websockets") is None:
        raise SystemExit(
            "lsp-agent serve --ws needs websockets, an optional extra; install it with\n"
            f"  {sys.executable} -m pip install 'websockets>=13'\n"
            "(in a clone, make install-cli installs lsp-agent with its extras)"
        )
    setup_logging(args)
    server = create_server(settings_from(args), args.root)
    server.log_to_client()
    try:
        if args.tcp is not None:
            server.start_tcp(args.host, args.tcp)
        elif args.ws is not None:
            server.start_ws(args.host, args.ws)
        else:
            return server.start_io()  # 0, 1 on exit without shutdown, rpc.EXIT_OVERSIZED
    except OSError as exc:  # the port is taken, the address is not this machine's, …
        where = f"{args.host}:{args.tcp if args.tcp is not None else args.ws}"
        # asyncio puts its own sentence in strerror; the errno's words say it once
        reason = os.strerror(exc.errno) if exc.errno and exc.errno > 0 else exc.strerror or str(exc)
        print(f"lsp-agent serve: cannot listen on {where}: {reason.lower()}", file=sys.stderr)
        return 1
    return 0


def serve_mcp(args: argparse.Namespace) -> int:
    try:
        from .mcp import serve
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("mcp", "mcp_types", "anyio"):  # the extra's
            raise
        raise SystemExit(
            "lsp-agent mcp needs the MCP Python SDK, an optional extra; install it with\n"
            f"  {sys.executable} -m pip install 'mcp>=2.3,<3'\n"
            "(in a clone, make install-cli installs lsp-agent with its extras)"
        ) from None
    setup_logging(args)
    return serve(settings_from(args), args.root, structured_content=args.structured_content)


def parse(argv: list[str] | None) -> argparse.Namespace:
    """The arguments; a flag unknown to the subcommand is an error of the subcommand's own
    (argparse would hand it up and print the top-level usage)."""
    given = sys.argv[1:] if argv is None else argv
    parser = build_parser(tool_of_command(given[0]) if given else None)
    if given and given[0].startswith("-") and given[0] not in ("-h", "--help", "--version"):
        parser.error(f"unrecognized arguments: {given[0]}")  # else: 'COMMAND is required'
    args, unknown = parser.parse_known_args(given)
    if unknown:
        args.parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args: argparse.Namespace | None = None
    try:
        args = parse(argv)
        command: Callable[[argparse.Namespace], int] = args.handler
        return command(args)
    except (KeyboardInterrupt, BrokenPipeError) as exc:
        # Ctrl-C: one line, no traceback; a server's threads are not waited for
        status = head_start.ended_by(exc, args.parser.prog if args is not None else "lsp-agent")
        if isinstance(exc, KeyboardInterrupt) and args is not None and args.handler in (serve_lsp, serve_mcp):
            os._exit(status)
        return status
