"""Calls written as Python: a list of calls with keyword arguments whose values are Python
literals (Llama 3.2 and 4, Granite's pythonic mode, …):

    [read(path="a.py", start=3), overview()]

Llama 4 wraps the list in `<|python_start|>` … `<|python_end|>` (the end token may be left
out): that form is unambiguous and is the `llama4` dialect. A bare list (`pythonic`) is read
only when asked for by model family, since prose and code samples hold such lists too.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable
from keyword import iskeyword, kwlist
from typing import Any

from ..dialect import Dialect
from ..model import Decodable, Problem
from ..scan import (
    NAME_LIMIT,
    PARTIAL,
    WS_LIMIT,
    Opening,
    PythonListFinder,
    WithTrailer,
    run_end,
    skip_ws,
    starts,
)
from ..toolset import json_value

NAME, NAME_LLAMA4 = "pythonic", "llama4"
START, END = "<|python_start|>", "<|python_end|>"
IDENTIFIER = re.compile(r"[A-Za-z_][\w.]*")


def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    """`[` then a name and `(`: a bare list of calls."""
    if text[j] != "[":
        return None
    k = skip_ws(text, j + 1)
    if k == len(text):
        return None if final else PARTIAL
    e = run_end(IDENTIFIER, text, k, k + NAME_LIMIT + 1)
    if e == k or e - k > NAME_LIMIT:
        return None
    p = skip_ws(text, e)
    if p == len(text):
        return None if final else PARTIAL
    if text[p] != "(" or p > e + WS_LIMIT:
        return None
    return Opening(NAME, base + j, j, PythonListFinder(), decode, text[j : p + 1])


def opening_llama4(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    r = starts(text, j, START, final)
    if r is not True:
        return r or None
    end = j + len(START)
    return Opening(NAME_LLAMA4, base + j, end, WithTrailer(PythonListFinder(), END), decode_llama4, START)


def decode_llama4(block: str) -> list[Decodable | Problem]:
    return decode(block[len(START) :].rstrip().removesuffix(END))


def decode(block: str, mend: Callable[[str], str | None] | None = None) -> list[Decodable | Problem]:
    """The calls of a Python list; `mend`, asked only when the list does not parse, may give
    a reading that does (quotes_mended)."""
    try:
        tree = parse(block.strip())
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        mended = mend(block) if mend else None
        if mended is None:
            return [Problem(f"not a Python list of calls: {getattr(exc, 'msg', exc)}")]
        tree = parse(mended.strip())
    node = tree.body
    elements = node.elts if isinstance(node, ast.List) else [node]
    if not elements:
        return [Problem("an empty list: no call in it")]
    return [call_from(n, e) for n, e in enumerate(elements, 1)]


# A decimal integer with leading zeros (`07`), where the parser stops: read as decimal.
LEADING_ZEROS = re.compile(r"0+([0-9]+)(?![\w.])")
MAX_ZERO_FIXES = 64  # each fix parses again: bound the work an adversarial reply can ask for


def parse(source: str) -> ast.Expression:
    """The source as a Python expression; integers written with leading zeros (`month=07`,
    which Python refuses) read as decimal, as vLLM reads them. Each is found where the
    parser points (never inside a string, however it is quoted); any other literal with
    leading zeros (`0_7`) stays an error."""
    # The parser refuses a NUL character anywhere: it stands in a string (elsewhere it is an
    # error still), as a character the source does not hold, put back after parsing.
    stand_in = next(chr(c) for c in range(0xE000, 0xF900) if chr(c) not in source) if "\0" in source else ""
    source = source.replace("\0", stand_in) if stand_in else source
    source, renamed = keyword_arguments_renamed(source)
    for _ in range(MAX_ZERO_FIXES + 1):
        try:
            return restored(ast.parse(source, mode="eval"), stand_in, renamed)
        except SyntaxError as exc:
            at = zero_literal_at(source, exc)
            if at is None:
                raise
            m = LEADING_ZEROS.match(source, at)
            if m is None:
                raise
            source = source[:at] + str(int(m.group(1))) + source[m.end() :]
    raise SyntaxError(f"more than {MAX_ZERO_FIXES} integers written with leading zeros")


def restored(tree: ast.Expression, stand_in: str, renamed: dict[str, str]) -> ast.Expression:
    """The tree with the NUL characters and the argument names put back."""
    if not (stand_in or renamed):
        return tree
    for node in ast.walk(tree):
        if stand_in and isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = node.value.replace(stand_in, "\0")
        elif isinstance(node, ast.keyword) and node.arg in renamed:
            node.arg = renamed[node.arg]
    return tree


KEYWORD_ARGUMENT = re.compile(r"\b(?:" + "|".join(kwlist) + r")\s*=(?!=)")


def keyword_arguments_renamed(source: str) -> tuple[str, dict[str, str]]:
    """Arguments named like a Python keyword (`book_flight(from="SFO")`, as Ollama reads
    OLMo 3's) renamed so that the parser takes them, and the names to put back; the
    tokenizer finds them, so text in strings is never touched."""
    if not KEYWORD_ARGUMENT.search(source):
        return source, {}
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type != tokenize.NL]
    except (tokenize.TokenError, SyntaxError):
        return source, {}
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    edits: list[tuple[int, int, str]] = []
    for before, tok, after in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if (
            tok.type == tokenize.NAME
            and iskeyword(tok.string)
            and before.string in "(,"
            and after.string == "="
        ):
            edits.append(
                (starts[tok.start[0] - 1] + tok.start[1], starts[tok.end[0] - 1] + tok.end[1], tok.string)
            )
    renamed: dict[str, str] = {}
    for a, b, name in reversed(edits):
        alias = f"{name}_{len(source)}_"
        while alias in source:
            alias += "_"
        renamed[alias] = name
        source = source[:a] + alias + source[b:]
    return source, renamed


def zero_literal_at(source: str, exc: SyntaxError) -> int | None:
    """The index in `source` of the literal a leading-zeros error is about (the parser
    gives its line and its byte column)."""
    if "leading zeros" not in str(exc.msg) or not exc.lineno or not exc.offset:
        return None
    lines = source.splitlines(keepends=True)
    if exc.lineno > len(lines):
        return None
    line = lines[exc.lineno - 1]
    column = len(line.encode("utf-8")[: exc.offset - 1].decode("utf-8", "ignore"))
    return sum(map(len, lines[: exc.lineno - 1])) + column


def call_from(n: int, node: ast.expr) -> Decodable | Problem:
    if not isinstance(node, ast.Call):
        return Problem(f"element {n} is not a call")
    name = dotted(node.func)
    if name is None:
        return Problem(f"element {n}: the called thing is not a name")
    if node.args:
        return Problem(f"{name}: positional arguments; write each as NAME=value")
    arguments: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            return Problem(f"{name}: **arguments; write each as NAME=value")
        try:
            arguments[keyword.arg] = json_value(ast.literal_eval(JsonNames().visit(keyword.value)))
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return Problem(f"{name}: the value of {keyword.arg} is not a literal")
    return Decodable(name, arguments)


JSON_NAMES = {"true": True, "false": False, "null": None}


class JsonNames(ast.NodeTransformer):
    """JSON's true, false and null written in a Python call (as OLMo 3 writes them) read
    as Python's; a set as a list, in the order written (JSON has no sets)."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Constant(JSON_NAMES[node.id]) if node.id in JSON_NAMES else node

    def visit_Set(self, node: ast.Set) -> ast.AST:
        return ast.List([self.visit(e) for e in node.elts], ast.Load())


# A string value (`name='…`) and what may follow its closing quote: the next argument or the call's end.
QUOTED_VALUE = re.compile(r"[(,]\s*[A-Za-z_]\w*\s*=\s*(['\"])")
VALUE_END = re.compile(r"\s*(?:,\s*[A-Za-z_]\w*\s*=|\))")
MAX_QUOTE_TRIES = 16  # each try parses the whole list again: bound the work a reply can ask for
MAX_MENDED = 100_000  # characters: a longer list is read as written


def quotes_mended(source: str, prepare: Callable[[str], str] = lambda s: s) -> str | None:
    """For a list that does not parse: each string value that holds its own quote unescaped
    (a shell command as LFM2 writes it: `command='sed -n '1,5p' f.py'`) closed at the first
    quote of its kind after which the next argument or the call's end follows and the whole
    list parses, the value taken as written, as vLLM reads it; the mended list, prepared, or
    None when no such reading mends it (then it is reported)."""
    if len(source) > MAX_MENDED:
        return None
    found = mended(source, 0, prepare, [MAX_QUOTE_TRIES])
    return None if found is None else prepare(found)


def mended(source: str, at: int, prepare: Callable[[str], str], tries: list[int]) -> str | None:
    while m := QUOTED_VALUE.search(source, at):
        quote, start = m.group(1), m.end()
        end = string_end(source, start, quote)
        if end is not None and VALUE_END.match(source, end + 1):
            at = end + 1  # a string that ends where a value ends: not this one
            continue
        close = start - 1
        while (close := source.find(quote, close + 1)) != -1:
            if close == end or not VALUE_END.match(source, close + 1):
                continue
            tries[0] -= 1
            if tries[0] < 0:
                return None
            written = source[: m.start(1)] + repr(source[start:close])
            candidate = written + source[close + 1 :]
            if parses(prepare(candidate)):
                return candidate
            later = mended(candidate, len(written), prepare, tries)  # another value broken too
            if later is not None:
                return later
        return None
    return None


def string_end(source: str, start: int, quote: str) -> int | None:
    """Where a one-quote string opened before `start` ends, backslash escapes skipped."""
    i = start
    while i < len(source):
        if source[i] == "\\":
            i += 2
        elif source[i] == quote:
            return i
        else:
            i += 1
    return None


def parses(source: str) -> bool:
    try:
        parse(source.strip())
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def escape_line_breaks(source: str) -> str:
    """Raw line breaks inside string literals written as \\n, so that Python reads the
    string a model broke over lines."""
    out, quote, i = [], None, 0
    while i < len(source):
        c = source[i]
        if quote and c == "\\":
            out.append(source[i : i + 2])
            i += 2
            continue
        if c in "\"'" and quote in (None, c):
            quote = None if quote else c
        out.append("\\n" if quote and c == "\n" else c)
        i += 1
    return "".join(out)


def dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def render(name: str, arguments: dict) -> str:
    return f"[{name}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})]"


def render_llama4(name: str, arguments: dict) -> str:
    return f"{START}{render(name, arguments)}{END}"


RULES = (
    '- Write the calls as a Python list: [tool_name(argument="value", other=3)], keyword arguments only.',
    "- Values are Python literals: strings in quotes, numbers, True, False, None, lists and dicts.",
)
DIALECT = Dialect(
    name=NAME,
    label="[NAME(…)]",
    summary="a Python list of calls, [NAME(argument=value)] (Llama 3.2, Granite pythonic; asked for only)",
    prefixes=("[",),
    opening=opening,
    render=render,
    rules=RULES,
)
DIALECT_LLAMA4 = Dialect(
    name=NAME_LLAMA4,
    label="<|python_start|>",
    summary="<|python_start|>[NAME(argument=value)]<|python_end|> (Llama 4)",
    prefixes=(START,),
    opening=opening_llama4,
    render=render_llama4,
    rules=RULES,
    stray_closers=(END,),
)
