"""Command line: argument parsing only. Each tool subcommand prints exactly the `text` an
agent would get (or the whole answer as JSON with --json)."""

from __future__ import annotations

import argparse
import json
import logging
import sys

from . import __version__
from .config import Settings


def settings_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("settings (the same as initializationOptions)")
    group.add_argument(
        "--root", action="append", help="workspace root (repeatable; default: the current directory)"
    )
    group.add_argument(
        "--default-max-chars", dest="default_max_chars", type=int, help="default answer budget"
    )
    group.add_argument("--search-engine", choices=["auto", "rg"], help="search engine: ripgrep (both values)")
    group.add_argument("--max-nudges", type=int, help="nudges per turn for undecodable tool calls")


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
    serve.add_argument("--log-file", help="write the server's log here")
    settings_flags(serve)

    mcp = sub.add_parser(
        "mcp", help="serve the agent tools over MCP stdio (needs the extra: pip install 'lsp-agent[mcp]')"
    )
    mcp.add_argument("--log-file", help="write the server's log here (default: warnings to stderr)")
    mcp.add_argument(
        "--structured-content",
        action="store_true",
        help="also send each whole answer as structuredContent (off by default: some clients then show the "
        "model that JSON instead of the text; the answer is always in _meta)",
    )
    settings_flags(mcp)

    sub.add_parser("tools", help="print the tool catalog (names, descriptions, JSON Schemas) as JSON")

    read = sub.add_parser("read", help="read a file in pages, as an agent sees it")
    read.add_argument("path")
    read.add_argument("--start", type=int, default=1, help="first line (1-based)")
    read.add_argument("--col", type=int, default=1, help="first column of line START (1-based)")
    read.add_argument("--max-chars", type=int, help="budget of the answer")
    read.add_argument("--if-version", help="answer briefly if the file still has this version")
    read.add_argument("--symbol", help="read only this symbol's lines (name path: Class/method)")
    read.add_argument("--json", action="store_true", help="print the whole answer as JSON")
    settings_flags(read)

    search = sub.add_parser(
        "search", help="search file contents (Rust regex), answer shortened to fit the budget"
    )
    search.add_argument("pattern")
    search.add_argument(
        "paths", nargs="*", metavar="PATH", help="files or folders to search (default: the workspace)"
    )
    search.add_argument("--max-chars", type=int, help="budget of the answer")
    search.add_argument(
        "-g", "--glob", action="append", help="include (GLOB) or exclude (!GLOB) files; repeatable"
    )
    search.add_argument("-i", "--ignore-case", action="store_true", help="match case-insensitively")
    search.add_argument("-F", "--fixed-strings", action="store_true", help="the pattern is literal text")
    search.add_argument("-U", "--multiline", action="store_true", help="let matches span lines")
    search.add_argument("-A", "--after-context", type=int, help="lines of context after each match")
    search.add_argument("-B", "--before-context", type=int, help="lines of context before each match")
    search.add_argument(
        "--count-binary", action="store_true", help="read binary files to name those that match"
    )
    search.add_argument("--offset", type=int, help="page the full matches: skip this many")
    search.add_argument("--limit", type=int, help="page the full matches: show at most this many")
    search.add_argument("--json", action="store_true", help="print the whole answer as JSON")
    settings_flags(search)

    symbols = sub.add_parser("symbols", help="outline a file or folder (kinds, names, line ranges)")
    symbols.add_argument("path", nargs="?", default=".")
    symbols.add_argument("--depth", type=int, help="show symbols down to this depth (1: top level)")
    symbols.add_argument("--max-chars", type=int, help="budget of the answer")
    symbols.add_argument("--json", action="store_true", help="print the whole answer as JSON")
    settings_flags(symbols)

    find = sub.add_parser("find-symbol", help="find definitions by name or name path (Class/method)")
    find.add_argument("name_path", metavar="NAME")
    find.add_argument("path", nargs="?", help="a file or folder to search (default: the workspace)")
    find.add_argument(
        "--kind", action="append", dest="kinds", help="only this kind (repeatable): class, method, …"
    )
    find.add_argument(
        "--substring", action="store_true", help="the last segment may be part of a name (any case)"
    )
    find.add_argument("--body", action="store_true", dest="include_body", help="show the source of the match")
    find.add_argument("--start", type=int, help="with --body: the line to read on from")
    find.add_argument("--max-chars", type=int, help="budget of the answer")
    find.add_argument("--json", action="store_true", help="print the whole answer as JSON")
    settings_flags(find)

    decode = sub.add_parser("decode", help="decode the tool calls written as text in a reply read from stdin")
    decode.add_argument(
        "--finish-reason",
        help='the model\'s finish reason ("length"/"max_tokens": open blocks are truncated)',
    )
    decode.add_argument("--max-chars", type=int, help="budget of the report")
    decode.add_argument("--json", action="store_true", help="print the whole answer as JSON")
    settings_flags(decode)

    run = sub.add_parser(
        "run", help="decode a reply from stdin and run its calls against the workspace's tools"
    )
    run.add_argument(
        "--finish-reason",
        help='the model\'s finish reason ("length"/"max_tokens": open blocks are truncated)',
    )
    run.add_argument("--max-chars", type=int, help="budget of the report")
    run.add_argument("--json", action="store_true", help="print the whole answer as JSON")
    settings_flags(run)
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


def run_tool(args: argparse.Namespace, name: str, arguments: dict) -> int:
    from .errors import ArgumentError
    from .tools import Context, call
    from .workspace import Workspace

    try:
        ctx = Context(Workspace(args.root), settings_from(args))
        answer = call(ctx, name, {k: v for k, v in arguments.items() if v is not None})
    except (ArgumentError, ValueError) as exc:
        print(f"lsp-agent {name}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(answer, indent=2, ensure_ascii=False))
    else:
        print(answer["text"])
    failed = any("error" in r or "error" in r.get("answer", {}) for r in answer.get("results", []))
    return 1 if "error" in answer or answer.get("diagnostics") or failed else 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        return serve(args)
    if args.command == "mcp":
        return mcp(args)
    if args.command == "tools":
        from .tools import catalog

        print(json.dumps(catalog(), indent=2))
        return 0
    if args.command == "read":
        arguments = {"path": args.path, "start": args.start, "col": args.col, "max_chars": args.max_chars}
        arguments["if_version"] = args.if_version
        arguments["symbol"] = args.symbol
        return run_tool(args, "read", arguments)
    if args.command == "search":
        arguments = {
            "pattern": args.pattern,
            "paths": args.paths or None,
            "glob": args.glob,
            "ignore_case": args.ignore_case or None,
            "fixed_strings": args.fixed_strings or None,
            "multiline": args.multiline or None,
            "count_binary": args.count_binary or None,
            "context_after": args.after_context,
            "context_before": args.before_context,
            "max_chars": args.max_chars,
            "offset": args.offset,
            "limit": args.limit,
        }
        return run_tool(args, "search", arguments)
    if args.command == "symbols":
        return run_tool(
            args, "symbols", {"path": args.path, "depth": args.depth, "max_chars": args.max_chars}
        )
    if args.command == "find-symbol":
        arguments = {k: getattr(args, k) for k in ("name_path", "path", "kinds", "start", "max_chars")}
        arguments |= {"substring": args.substring or None, "include_body": args.include_body or None}
        return run_tool(args, "find_symbol", arguments)
    if args.command in ("decode", "run"):
        arguments = {
            "reply": sys.stdin.read(),
            "finish_reason": args.finish_reason,
            "max_chars": args.max_chars,
        }
        status = run_tool(args, f"{args.command}_calls", arguments)
        return status  # 1 when the reply had diagnostics
    raise AssertionError(args.command)


def serve(args: argparse.Namespace) -> int:
    from .server import create_server

    if args.log_file:
        logging.basicConfig(filename=args.log_file, level=logging.INFO)
    else:
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    server = create_server(settings_from(args), args.root)
    if args.tcp is not None:
        server.start_tcp(args.host, args.tcp)
    elif args.ws is not None:
        server.start_ws(args.host, args.ws)
    else:
        server.start_io()
    return 0


def mcp(args: argparse.Namespace) -> int:
    try:
        from .mcp import serve as serve_mcp
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("mcp", "mcp_types"):
            raise
        raise SystemExit(
            "lsp-agent mcp needs the MCP Python SDK, an optional extra; install it with\n"
            "  pip install 'lsp-agent[mcp]'      (in a checkout: pip install -e '.[mcp]')"
        ) from None
    logging.basicConfig(filename=args.log_file, level=logging.INFO if args.log_file else logging.WARNING)
    return serve_mcp(settings_from(args), args.root, structured_content=args.structured_content)
