"""search's symbol labels from the symbol index: a record gives the labels the outline gives,
the server takes them from its index (loaded warm from disk) without parsing, and never from
a record older than the file."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
import pytest_lsp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pytest_lsp import LanguageClient

from lsp_agent.search import find_rg
from lsp_agent.syntax import clear_caches, language_for, line_symbols
from lsp_agent.syntax.index import SymbolIndex, read_record
from lsp_agent.syntax.parsing import PARSES
from lsp_agent.tools import Context, call
from lsp_agent.tools import search as search_module
from lsp_agent.workspace import Workspace
from tests.support.grammar_fixtures import fixtures_of
from tests.support.lsp_client import CONFIG, initialize_params, request

# --- a record's labels are the outline's, for any source ----------------------------------------

# Pieces of code put together at random, into a language's fixture or alone: definitions
# nested (braces, indentation, `end`), siblings on one line, decorators and attributes,
# file-scoped namespaces, macros (whose range ends at the start of the next line), non-ASCII
# names (their columns differ between encodings), broken syntax.
PIECES = {
    "python": ("m.py", ["class C:", "    ", "def f(x):", "def g(): pass", "@dec", "@名前.setter", "def méthode(self): return 1", "class K: x = 1", "pass", "x = 1; y = 2", "async def a():", "(", ")", ":", "'''", "# é"]),
    "javascript": ("m.js", ["function f() {", "}", "{", "class A {", "m() {}", "n() { return 1 }", "const g = () => {};", "function h() {} function i() {}", "@dec", "/*", "*/", "const é = { p() {}, q: function () {} };", "export default class {}", "let 名前 = class {};"]),
    "typescript": ("m.ts", ["interface I {", "m(): void;", "}", "namespace N {", "class A {", "constructor() {}", "@dec", "f(): 𝔵 {", "type T = { a: number };", "enum E { A, B }", "function g<T>(x: T) {} function h() {}", "{"]),
    "go": ("m.go", ["package p", "func f() {", "}", "type T struct {", "x int", "func (t *T) M() {}", "type I interface { M() }", "func a() {}; func b() {}", "var v = 1", "const Ĉ = 1", "{"]),
    "rust": ("m.rs", ["fn f() {", "}", "impl T {", "struct S { x: i32 }", "#[derive(Debug)]", "mod m {", "trait Tr { fn t(&self); }", "enum E { A, B }", "fn a() {} fn b() {}", "fn é() {}", "macro_rules! m { () => {} }", "{"]),
    "csharp": ("m.cs", ["namespace N;", "namespace M {", "}", "class C {", "void M() {}", "[Attr]", "interface I { void J(); }", "record R(int X);", "public int P { get; set; }", "class Ä { void B() {} void D() {} }", "{"]),
    "cpp": ("m.cpp", ["namespace n {", "}", "class C {", "void m();", "};", "void C::m() {}", "struct S { int x; };", "template <typename T> void f(T t) {}", "int 𝔵() { return 0; }", "#define N 1", "#define M(x) (x)", "{"]),
    "ruby": ("m.rb", ["class A", "def m", "end", "module M", "def self.s; end", "attr_reader :x", "def é() = 1", "class B < A; def n; end; end", "{", "do"]),
    "php": ("m.php", ["<?php", "namespace A;", "namespace B {", "}", "class C {", "function m() {}", "#[Attr]", "function f() {} function g() {}", "trait T {", "é"]),
}  # fmt: skip
SEPARATORS = [" ", "\n", "\n    ", "\n\n", ""]


@st.composite
def sources(draw) -> tuple[str, bytes]:
    """(file name, content) in one of PIECES' languages."""
    language = draw(st.sampled_from(sorted(PIECES)))
    name, pieces = PIECES[language]
    chosen = draw(st.lists(st.tuples(st.sampled_from(pieces), st.sampled_from(SEPARATORS)), max_size=30))
    code = "".join(piece + separator for piece, separator in chosen)
    base = draw(st.sampled_from(["", fixtures_of(language)[0].read_text()]))
    at = draw(st.integers(0, len(base)))
    text = base[:at] + code + base[at:]
    if draw(st.booleans()):
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    data = text.encode()
    if draw(st.booleans()):  # a byte that is not UTF-8
        at = draw(st.integers(0, len(data)))
        data = data[:at] + b"\xff" + data[at:]
    return name, data


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(  # two definitions of one range (a namespace in a constant's value): siblings, not nested
    source=("m.php", b"<?php\nnamespace S;\n\nconst T =namespace A;  0.2;\n\nfunction f() {}\n"),
    encoding="utf-8",
)
@given(source=sources(), encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"]))
def test_a_records_labels_are_the_outlines(tmp_path_factory, source, encoding):
    """The record a worker makes (columns in the client's encoding) labels every line as the
    outline does, and names the same symbol on each line."""
    name, data = source
    path = tmp_path_factory.mktemp("labels", numbered=True).resolve() / name
    path.write_bytes(data)
    language = language_for(path)
    assert language is not None
    record = read_record(str(path), language, encoding, [str(path.parent)])
    assert record is not None
    text = Workspace([path.parent]).text(path)
    from_record, from_outline = record.line_symbols(), line_symbols(path, text)
    assert from_record.named_on == from_outline.named_on
    lines = range(text.line_count + 3)
    assert [from_record.around(n) for n in lines] == [from_outline.around(n) for n in lines]


# --- the search tool, in process ------------------------------------------------------------------

BANK = """\
import functools


class Account:
    @functools.cache
    def deposit(self, amount):
        return amount

    class Ledger:
        def deposit(self): return 0


def deposit(): pass
"""
# `later`'s name comes after a non-ASCII string on its line: its columns differ by encoding.
WIDGETS = 'const s = "𝄞é"; function deposit() { return 1 } function later() { deposit() }\n'


def write_project(root: Path) -> list[Path]:
    (root / "src").mkdir(parents=True)
    files = [root / "src" / "bank.py", root / "src" / "widgets.js"]
    files[0].write_text(BANK)
    files[1].write_text(WIDGETS)
    old = time.time_ns() - 3_600 * 10**9  # written long ago: the index trusts a record by its stat
    for path in files:
        os.utime(path, ns=(old, old))
    return files


def searched(ctx: Context, pattern: str) -> dict:
    return call(ctx, "search", {"pattern": pattern, "max_chars": 4000})


def test_a_search_takes_its_labels_from_a_current_record_without_parsing(tmp_path, monkeypatch):
    files = write_project(tmp_path / "ws")
    cache = tmp_path / "cache"
    SymbolIndex(Workspace([tmp_path / "ws"]), cache=cache).build()  # saved to the cache
    clear_caches()
    ws = Workspace([tmp_path / "ws"])
    index = SymbolIndex(ws, cache=cache)
    index.load()  # a warm start: the records from disk, nothing parsed
    monkeypatch.setattr(search_module, "LINE_SYMBOLS", search_module.LineSymbolsCache())
    answer = searched(Context(ws, index=index), "deposit")
    assert not any(PARSES.holds(path) for path in files)
    text = answer["text"]
    for label in ("6 Account:", "10 Account/Ledger:", "13 <module>:", "1 deposit:"):
        assert label in text
    monkeypatch.setattr(search_module, "LINE_SYMBOLS", search_module.LineSymbolsCache())
    assert searched(Context(Workspace([tmp_path / "ws"])), "deposit") == answer  # from the outlines

    # changed on disk since it was indexed: the record is not used
    files[0].write_text("# moved down\n" + BANK.replace("class Ledger", "class Journal"))
    assert index.current(files[0]) is None
    changed = searched(Context(ws, index=index), "deposit")
    assert PARSES.holds(files[0])
    assert "11 Account/Journal:" in changed["text"] and "Ledger" not in changed["text"]
    monkeypatch.setattr(search_module, "LINE_SYMBOLS", search_module.LineSymbolsCache())
    assert searched(Context(Workspace([tmp_path / "ws"])), "deposit") == changed


# --- over LSP, in the real server ---------------------------------------------------------------


@pytest.fixture
def project(tmp_path, index_cache) -> Path:
    """Two files, indexed before the server starts (as by an earlier session), so that the
    server loads its index warm from disk."""
    root = tmp_path.resolve()
    write_project(root)
    SymbolIndex(Workspace([root]), cache=index_cache).build()  # utf-16, as the client negotiates
    return root


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, project: Path):
    await lsp_client.initialize_session(initialize_params(project))
    yield
    await lsp_client.shutdown_session()


async def index_reports(client: LanguageClient, timeout: float = 30) -> list:
    """The progress reports of the server's index build, once it has ended."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for reports in list(client.progress_reports.values()):
            title = getattr(reports[0], "title", "") if reports else ""
            if title == "lsp-agent: indexing symbols" and reports[-1].kind == "end":
                return reports
        await asyncio.sleep(0.05)
    raise AssertionError("the index build never ended")


def labelled(answer: dict) -> list[str]:
    """The match lines of a search answer (after its header), `LINE[ SYMBOL]`, without their text."""
    return [line.split(":", 1)[0] for line in answer["text"].split("\n")[1:] if line[:1].isdigit()]


@pytest.mark.skipif(find_rg() is None, reason="no rg")
async def test_the_server_labels_a_search_from_its_warm_index_and_never_from_a_stale_record(
    client: LanguageClient, project: Path
):
    reports = await index_reports(client)
    assert reports[0].message == "indexing 2 of 2 files"  # both kept from the index on disk
    answer = await request(client, "search", pattern="deposit", max_chars=4000)
    assert labelled(answer) == ["6 Account", "10 Account/Ledger", "13 <module>", "1 deposit"]

    # rewritten behind the server's back (no didChangeWatchedFiles): its record is stale
    bank = project / "src" / "bank.py"
    bank.write_text("# moved down\n" + BANK.replace("class Ledger", "class Journal"))
    answer = await request(client, "search", pattern="deposit", max_chars=4000)
    assert labelled(answer) == ["7 Account", "11 Account/Journal", "14 <module>", "1 deposit"]

    # an editor's buffer: labelled from its own text, whether or not the index has caught up
    edited = "def deposit():\n    def inner(): deposit()\n"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=bank.as_uri(), language_id="python", version=1, text=edited)
        )
    )
    answer = await request(client, "search", pattern="deposit", paths=["src/bank.py"], max_chars=4000)
    assert labelled(answer) == ["1", "2 deposit"]
