"""Command line: argument parsing only. Each tool subcommand prints exactly the `text` an
agent would get (or the whole answer as JSON with --json).

The tool subcommands are generated from the registry: each argument of a tool's JSON Schema
is a flag named after it (`max_chars` is `--max-chars`), typed by its schema; the tables
below only say which arguments are positional, which flags have grep-style spellings, and
which subcommands have shorter names.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import sys
from collections.abc import Callable
from importlib.util import find_spec
from typing import Any

from . import __version__
from .config import Settings
from .errors import ArgumentError
from .tools import REGISTRY, Context, call, catalog
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


def settings_flags(parser: argparse.ArgumentParser, tool_arguments: dict | None = None) -> None:
    group = parser.add_argument_group("settings (the same as initializationOptions)")
    group.add_argument(
        "--root", action="append", help="workspace root (repeatable; default: the current directory)"
    )
    group.add_argument(
        "--default-max-chars", dest="default_max_chars", type=int, help="default answer budget"
    )
    group.add_argument("--search-engine", choices=["auto", "rg"], help="search engine: ripgrep (both values)")
    if "max_nudges" not in (tool_arguments or {}):  # else the tool's own flag says the same
        group.add_argument("--max-nudges", type=int, help="nudges per turn for undecodable tool calls")


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


def argument_options(name: str, schema: dict) -> dict[str, Any]:
    """argparse options for one argument, from its JSON Schema."""
    help_text = schema.get("description", "")
    kind = schema.get("type")
    if kind == "boolean":
        return {"action": "store_true", "default": None, "help": help_text}
    if kind == "integer":
        return {"type": int, "metavar": "N", "help": help_text}
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
        return {"help": help_text}
    return {"type": json_value, "metavar": "JSON", "help": help_text + " (JSON)"}


def add_tool_command(sub: Any, name: str) -> None:
    tool = REGISTRY[name]
    properties: dict[str, dict] = tool.schema.get("properties", {})
    stdin = f" The {STDIN_ARGUMENT} is read from stdin." if STDIN_ARGUMENT in properties else ""
    command = sub.add_parser(
        COMMAND_NAMES.get(name, name.replace("_", "-")), help=tool.summary, description=tool.summary + stdin
    )
    required = tool.schema.get("required", [])
    for argument in POSITIONAL.get(name, []):
        schema = properties[argument]
        options: dict[str, Any] = {"help": schema.get("description", ""), "metavar": METAVARS.get(argument)}
        if schema.get("type") == "array":
            options["nargs"] = "*"
        elif argument not in required:
            options |= {"nargs": "?", "default": schema.get("default")}
        command.add_argument(argument, **options)
    for argument, schema in properties.items():
        if argument in POSITIONAL.get(name, []) or argument == STDIN_ARGUMENT:
            continue
        flags = FLAGS.get(argument, ["--" + argument.replace("_", "-")])
        command.add_argument(*flags, dest=argument, **argument_options(argument, schema))
    command.add_argument("--json", action="store_true", help="print the whole answer as JSON")
    settings_flags(command, properties)
    command.set_defaults(handler=run_tool, tool_name=name)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lsp-agent", description="A language server that serves tools to AI coding agents."
    )
    parser.add_argument("--version", action="version", version=f"lsp-agent {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the language server (stdio by default)")
    transport = serve.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="speak LSP on stdin/stdout (default)")
    transport.add_argument("--tcp", type=int, metavar="PORT", help="listen for one client on TCP PORT")
    transport.add_argument("--ws", type=int, metavar="PORT", help="listen for websocket clients on PORT")
    serve.add_argument("--host", default="127.0.0.1", help="address for --tcp/--ws (default 127.0.0.1)")
    log_flags(serve)
    settings_flags(serve)
    serve.set_defaults(handler=serve_lsp)

    mcp = sub.add_parser(
        "mcp", help="serve the agent tools over MCP stdio (needs the extra: pip install 'lsp-agent[mcp]')"
    )
    log_flags(mcp)
    mcp.add_argument(
        "--structured-content",
        action="store_true",
        help="also send each whole answer as structuredContent (off by default: some clients then show the "
        "model that JSON instead of the text; the answer is always in _meta)",
    )
    settings_flags(mcp)
    mcp.set_defaults(handler=serve_mcp)

    tools = sub.add_parser("tools", help="print the tool catalog (names, descriptions, JSON Schemas) as JSON")
    tools.set_defaults(handler=print_catalog)

    for name in REGISTRY:
        if name not in NO_COMMAND:
            add_tool_command(sub, name)
    return parser


def settings_from(args: argparse.Namespace) -> Settings:
    options = {}
    if getattr(args, "default_max_chars", None) is not None:
        options["max_chars"] = args.default_max_chars
    if getattr(args, "search_engine", None) is not None:
        options["search_engine"] = args.search_engine
    if getattr(args, "max_nudges", None) is not None:
        options["max_nudges"] = args.max_nudges
    settings, problems = Settings.from_options(options)
    if problems:
        raise SystemExit("lsp-agent: " + "; ".join(problems))
    return settings


def tool_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The tool's arguments given on the command line (and stdin); unset flags are left out."""
    properties = REGISTRY[args.tool_name].schema.get("properties", {})
    arguments = {k: getattr(args, k) for k in properties if k != STDIN_ARGUMENT}
    if STDIN_ARGUMENT in properties:
        arguments[STDIN_ARGUMENT] = sys.stdin.read()
    return {k: v for k, v in arguments.items() if v is not None and v != []}


def run_tool(args: argparse.Namespace) -> int:
    name = args.tool_name
    try:
        ctx = Context(Workspace(args.root), settings_from(args))
        answer = call(ctx, name, tool_arguments(args))
    except (ArgumentError, ValueError) as exc:
        print(f"lsp-agent {name}: {exc}", file=sys.stderr)
        return 2
    if isinstance(sys.stdout, io.TextIOWrapper):
        # A lone surrogate (a model's "\\ud800", decoded by JSON) cannot be encoded: written as
        # that escape again, which keeps the JSON output valid and exact
        sys.stdout.reconfigure(errors="backslashreplace")
    if args.json:
        print(json.dumps(answer, indent=2, ensure_ascii=False))
    else:
        print(answer["text"])
    # 1 for a refusal, a reply with diagnostics, or a call in it that failed
    failed = any("error" in r or "error" in r.get("answer", {}) for r in answer.get("results", []))
    return 1 if "error" in answer or answer.get("diagnostics") or failed else 0


def print_catalog(args: argparse.Namespace) -> int:
    print(json.dumps(catalog(), indent=2))
    return 0


def serve_lsp(args: argparse.Namespace) -> int:
    from .server import create_server

    if args.ws is not None and find_spec("websockets") is None:
        raise SystemExit(
            "lsp-agent serve --ws needs websockets, an optional extra; install it with\n"
            "  pip install 'lsp-agent[ws]'      (in a checkout: pip install -e '.[ws]')"
        )
    setup_logging(args)
    server = create_server(settings_from(args), args.root)
    server.log_to_client()
    if args.tcp is not None:
        server.start_tcp(args.host, args.tcp)
    elif args.ws is not None:
        server.start_ws(args.host, args.ws)
    else:
        return server.start_io()  # 0, 1 on exit without shutdown, rpc.EXIT_OVERSIZED
    return 0


def serve_mcp(args: argparse.Namespace) -> int:
    try:
        from .mcp import serve
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("mcp", "mcp_types", "anyio"):  # the extra's
            raise
        raise SystemExit(
            "lsp-agent mcp needs the MCP Python SDK, an optional extra; install it with\n"
            "  pip install 'lsp-agent[mcp]'      (in a checkout: pip install -e '.[mcp]')"
        ) from None
    setup_logging(args)
    return serve(settings_from(args), args.root, structured_content=args.structured_content)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.handler
    try:
        return command(args)
    except BrokenPipeError:
        # The reader left (`lsp-agent … | head`): end quietly, as Unix tools do. Python would
        # complain again when it flushes stdout at exit, so stdout goes to /dev/null first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE: what a shell reports for a tool ended by a closed pipe
