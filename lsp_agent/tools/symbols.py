"""symbols and find_symbol: outlines of files and folders, and definitions by name path.

Outlines shorten like search answers: the full tree when it fits the budget, else the
deepest depth that fits (hidden children counted), else symbol counts by kind per file, then
per folder; every answer names its stage and the arguments that show more.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from ..budget import fits, per_file, plural, rows_that_fit
from ..errors import Refusal
from ..paging import number_lines, page, symbol_label
from ..search import FileMatches, Query, check_query
from ..syntax import EXTENSIONS, KINDS, Symbol, language_for, name_path_matcher, outline, walk
from ..syntax.files import files_containing, globbed, source_files
from ..syntax.index import Entry, named, walk_order
from ..syntax.outline import TYPE_KINDS, last_segment
from ..workspace import Text, Workspace
from .registry import BUDGET, MAX_CHARS, Context, one_small_file, tool

SIGNATURES_PROPERTY = {
    "type": "boolean",
    "default": False,
    "description": "Show each signature (decorators, bases included) and the first line of its docstring.",
}

GLOB_PROPERTY = {
    "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
    "description": "As search's glob: '*.py' includes, '!*_test.py' excludes.",
}

SYMBOLS_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "default": ".",
            "description": "A file or a folder (recursive, .gitignore honoured), relative to the workspace root.",
        },
        "depth": {
            "type": "integer",
            "minimum": 1,
            "description": "Show symbols down to this nesting depth (1: top level).",
        },
        "signatures": SIGNATURES_PROPERTY,
        "glob": GLOB_PROPERTY,
        "max_chars": MAX_CHARS,
    },
    "additionalProperties": False,
}

SYMBOLS_SUMMARY = (
    "Outline a file or folder (recursive, .gitignore honoured): each definition's kind, name and line range, "
    "nested. Use it to see what a file or package defines before reading it, then "
    f"read path=FILE symbol=NAME for one definition. Over {BUDGET} it shortens to a shallower depth, "
    'then to counts by kind. Example: {"path": "src/models.py"}.'
)

FIND_SCHEMA = {
    "type": "object",
    "properties": {
        "name_path": {
            "type": "string",
            "minLength": 1,
            "description": "`to_dict`, `Message/to_dict` (or `Message.to_dict`); a leading / anchors at the top level.",
        },
        "path": {
            "type": "string",
            "description": "Search only this file or folder (default: the whole workspace).",
        },
        "glob": GLOB_PROPERTY,
        "kinds": {
            "type": "array",
            "items": {"enum": list(KINDS)},
            "description": "Only symbols of these kinds.",
        },
        "extends": {
            "type": "string",
            "minLength": 1,
            "description": "Only types inheriting from this name, directly or through other matches (by name).",
        },
        "signatures": SIGNATURES_PROPERTY,
        "substring": {
            "type": "boolean",
            "default": False,
            "description": "The last segment matches any name containing it, ignoring case.",
        },
        "include_body": {
            "type": "boolean",
            "default": False,
            "description": "Show the source (paged like read; several matches: all bodies if they fit).",
        },
        "start": {
            "type": "integer",
            "minimum": 1,
            "description": "With include_body: the line to read on from.",
        },
        "max_chars": MAX_CHARS,
    },
    "additionalProperties": False,
}

FIND_SUMMARY = (
    "Find definitions by name or name path (`save`, `Model/save`): each match's file, line range, "
    "kind and full name path. Use it rather than search to find where something is defined; "
    "include_body=true adds the source, signatures=true each signature, extends=Base the subclasses. Over "
    f'{BUDGET} it counts matches per file. Example: {{"name_path": "Model/save", "include_body": true}}.'
)


def span(symbol: Symbol | Entry) -> str:
    return (
        str(symbol.start_line)
        if symbol.start_line == symbol.end_line
        else f"{symbol.start_line}-{symbol.end_line}"
    )


def depth_of(symbols: list[Symbol]) -> int:
    return max((1 + depth_of(s.children) for s in symbols), default=0)


def count(symbols: list[Symbol]) -> int:
    return sum(1 for _ in walk(symbols))


Signer = Callable[[Symbol], list[str]]


def signer(path: Path, text: Text) -> Signer:
    """A symbol's signature as one line (its header lines joined), then its doc line."""

    from ..syntax.references import signature  # a one-shot find_symbol shows none: not imported

    def sign(symbol: Symbol) -> list[str]:
        found = signature(path, text, symbol)
        lines = [found.one_line()]
        return [*lines, f"# {found.doc}"] if found.doc else lines

    return sign


def tree_lines(
    symbols: list[Symbol], depth: int, indent: str = "", parent: str = "", sign: Signer | None = None
) -> list[str]:
    """The outline to `depth`, each symbol named by its name path below `parent`: the name,
    or with its owner when defined outside it (a Go method `Server/Handle`); with `sign`, its
    line range then its signature and doc line."""
    lines = []
    for s in symbols:
        if sign is not None:
            first, *doc = sign(s)
            line = f"{indent}{span(s)}  {first}"
            if doc:
                line += f"\n{indent}  {doc[0]}"
        else:
            line = f"{indent}{s.kind} {s.name_path[len(parent) + 1 :] if parent else s.name_path}  {span(s)}"
        if depth <= 1:
            if hidden := count(s.children):
                line += f"  (+{hidden} inside)"
            lines.append(line)
        else:
            lines.append(line)
            lines += tree_lines(s.children, depth - 1, indent + "  ", s.name_path, sign)
    return lines


def kind_counts(symbols: list[Symbol]) -> str:
    counts = Counter(s.kind for s in walk(symbols))
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


@dataclass
class Outlined:
    """What a symbols answer outlines: the files with symbols and the sources they came from."""

    shown: str
    folder: bool
    files: list[tuple[str, list[Symbol]]]  # (file as shown, its outline), files with symbols
    sources: dict[str, tuple[Path, Text]]
    every: list[tuple[Path, Text]]  # every source file read, for the ranked map
    scanned: int
    version: str | None = None  # of the one file outlined
    globs: tuple[str, ...] = ()  # choosing the files of a folder

    @property
    def total(self) -> int:
        return sum(count(s) for _, s in self.files)

    @property
    def what(self) -> str:
        chosen = f" (glob {', '.join(self.globs)})" if self.globs else ""
        return plural(self.total, "symbol") + (
            f" in {plural(len(self.files), 'file')}{chosen}" if self.folder else ""
        )

    @property
    def empty(self) -> str:
        left = self.scanned - len(self.files)
        return f"; {plural(left, 'file')} without symbols not listed" if self.folder and left > 0 else ""

    def body(self, d: int, signed: bool = False) -> list[str]:
        def sign(name: str) -> Signer | None:
            return signer(*self.sources[name]) if signed else None

        if not self.folder:
            return tree_lines(self.files[0][1], d, sign=sign(self.files[0][0]))
        out = []
        for name, file_symbols in self.files:
            out.append(f"{name}  ({plural(count(file_symbols), 'symbol')})")
            out += tree_lines(file_symbols, d, "  ", sign=sign(name))
        return out


def globs_of(glob: str | list[str] | None) -> tuple[str, ...]:
    """The `glob` argument as search takes it (one or several), checked as search checks it."""
    globs = tuple([glob] if isinstance(glob, str) else glob or [])
    check_query(Query("glob", globs=globs))
    return globs


def outlined(ctx: Context, path: str, globs: tuple[str, ...] = ()) -> Outlined:
    """The outline of one source file, or of every source file under a folder (that `globs`
    choose: a file named is outlined whatever they say, as search searches it)."""
    ws = ctx.workspace
    target = ws.resolve(path)
    shown = ws.display(target)
    if not target.is_dir():
        text = ws.text(target)  # refuses missing and binary files
        if language_for(target) is None:
            raise Refusal(
                "no_grammar",
                f"{shown}: no symbols for this kind of file; outlines cover {', '.join(sorted(EXTENSIONS))}.",
            )
        return Outlined(
            shown, False, [(shown, outline(target, text))], {shown: (target, text)}, [], 1, text.version
        )
    found = Outlined(shown, True, [], {}, [], 0, globs=globs)
    paths = list(source_files(ws, target, check=ctx.check_cancelled, globs=globs))
    found.scanned = len(paths)
    for n, file in enumerate(paths, 1):
        ctx.check_cancelled()
        ctx.progress_of(n, found.scanned, "outlining")
        try:
            file_text = ws.text(file)
        except Refusal:
            continue
        found.every.append((file, file_text))
        if file_symbols := outline(file, file_text):
            found.files.append((ws.display(file), file_symbols))
            found.sources[ws.display(file)] = (file, file_text)
    return found


def depth_stages(ctx: Context, o: Outlined, depth: int | None, signatures: bool, budget: int) -> dict | None:
    """The outline at the deepest depth that fits (with signatures where they fit too)."""
    deepest = max((depth_of(s) for _, s in o.files), default=0)
    for d in range(min(depth or deepest, deepest), 0, -1):
        ctx.check_cancelled()
        if d == deepest:
            stage, trailer = "full tree", None
        else:
            stage = f"depth {d} of {deepest}"
            why = f"depth={depth} was asked" if d == depth else f"the full tree is over max_chars={budget}"
            trailer = (
                f"[{why}: deeper symbols are counted as (+N inside); see them with depth={d + 1} "
                f"(and a larger max_chars) or a narrower path=FILE]"
            )
        named = "" if trailer is None else f" · stage: {stage}"  # the full tree needs no stage
        lines = [f"{o.shown} · {o.what}{named}{o.empty}", *o.body(d), *([trailer] if trailer else [])]
        if not fits(lines, budget):
            continue
        if signatures:  # signatures are longer than names: only where the names fit
            signed = [f"{o.shown} · {o.what} · stage: {stage}, with signatures{o.empty}", *o.body(d, True)]
            signed += [trailer] if trailer else []
            if fits(signed, budget):
                return {"text": "\n".join(signed), "stage": f"{stage}, with signatures", "depth": d}
            if d > 1:
                continue
        return {"text": "\n".join(lines), "stage": stage, "depth": d}
    return None


def ranked_stage(ctx: Context, o: Outlined, budget: int) -> dict | None:
    """The most used definitions, ranked, rather than every folder's counts."""
    from ..syntax.ranking import ranked_map  # here: find_symbol, a one-shot's, never ranks

    head = (
        f"{o.shown} · {o.what} · stage: ranked map, the most used definitions (the outline at depth 1 is "
        f"over max_chars={budget}: outline one file with path=FILE){o.empty}"
    )
    try:
        # the files overview ranks
        ranked = ranked_map(ctx.workspace, o.shown, o.every, 0, budget, head, index=ctx.index)
    except Refusal:
        return None
    if not ranked["shown"]:
        return None
    return {"text": ranked["text"], "stage": "ranked map", "depth": 0, "next": ranked["next"]}


def count_stages(o: Outlined, budget: int) -> dict:
    """Counts by kind: per file, then per folder, then as many folders as fit."""
    hint = "outline one file with path=FILE, or a subfolder with path=FOLDER"
    lines = [
        f"{o.shown} · {o.what} · stage: counts by kind per file (the outline at depth 1 is over max_chars={budget}){o.empty}",
        *per_file({name: kind_counts(s) for name, s in o.files}),
        f"[{hint}]",
    ]
    if fits(lines, budget):
        return {"text": "\n".join(lines), "stage": "counts per file", "depth": 0}
    folders: dict[str, list[Symbol]] = {}
    for name, file_symbols in o.files:
        folders.setdefault(name.rsplit("/", 1)[0] + "/" if "/" in name else "./", []).extend(file_symbols)
    head = f"{o.shown} · {o.what} · stage: counts by kind per folder (counts per file are over max_chars={budget}){o.empty}"
    rows = per_file({name: kind_counts(s) for name, s in folders.items()})
    lines = [head, *rows, f"[{hint}]"]
    if fits(lines, budget):
        return {"text": "\n".join(lines), "stage": "counts per folder", "depth": 0}
    lines = rows_that_fit(
        head,
        rows,
        budget,
        lambda left: f"[{left} more folders not listed: {hint}]",
        f"an outline of {o.shown}",
    )
    return {"text": "\n".join(lines), "stage": "counts per folder, cut", "depth": 0}


@tool("symbols", "Outline symbols", SYMBOLS_SUMMARY, SYMBOLS_SCHEMA, light=one_small_file)
def symbols(
    ctx: Context,
    *,
    max_chars: int,
    path: str = ".",
    depth: int | None = None,
    signatures: bool = False,
    glob: str | list[str] | None = None,
) -> dict:
    o = outlined(ctx, path, globs_of(glob))
    fields = {
        "path": o.shown,
        "files": len(o.files),
        "files_scanned": o.scanned,
        "symbols": o.total,
        "max_depth": max((depth_of(s) for _, s in o.files), default=0),
    }
    if not o.folder:
        fields["version"] = o.version
    if o.total == 0:
        where = (
            f"no definitions found in {plural(o.scanned, 'source file')}"
            if o.folder
            else "no definitions found"
        )
        if o.folder and o.globs and not o.scanned:
            where = f"no source file matches glob {', '.join(o.globs)}"
        return {"text": f"{o.shown} · {where}", "stage": "full tree", "depth": 0, **fields}
    answer = depth_stages(ctx, o, depth, signatures, max_chars) or (
        o.folder and ranked_stage(ctx, o, max_chars)
    )
    return (answer or count_stages(o, max_chars)) | fields


# --- find_symbol ----------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """A definition found for find_symbol, in the file shown."""

    shown: str  # the file as shown to the agent
    path: Path
    symbol: Symbol | Entry
    ws: Workspace

    @property
    def text(self) -> Text:
        return self.ws.text(self.path)

    def location(self) -> str:
        return f"{self.shown}:{span(self.symbol)}  {self.symbol.kind} {self.symbol.name_path}"

    def outlined(self) -> Symbol:
        """The syntax tree's symbol (an index entry's ranges are in the client's encoding)."""
        if isinstance(self.symbol, Symbol):
            return self.symbol
        entry = self.symbol
        for symbol in walk(outline(self.path, self.text)):
            if symbol.start_line == entry.start_line and symbol.name_path == entry.name_path:
                return symbol
        raise Refusal("changed", f"{self.shown} changed while it was read; ask again.")


def locations(found: list[Found]) -> list[str]:
    """Each file's path once, then its matches as `LINES kind name_path`, as search lists matches."""
    lines: list[str] = []
    heading = None
    for f in found:
        if f.shown != heading:
            heading = f.shown
            lines.append(heading)
        lines.append(f"{span(f.symbol)} {f.symbol.kind} {f.symbol.name_path}")
    return lines


def matching(
    ctx: Context,
    name_path: str | None,
    path: str | None,
    targets: list[Path],
    kinds: list[str] | None,
    extends: str | None,
    substring: bool,
) -> list[Found]:
    """The definitions asked for: subclasses of `extends` (named `name_path` when given), or
    those `name_path` names, under `targets` (`path`, or the workspace's roots)."""
    if extends is not None:
        found = subclasses(ctx, extends, [path] if path is not None else None)
        if name_path is not None:
            matches = name_path_matcher(name_path, substring=substring)
            found = [f for f in found if matches(f.symbol.name_path)]
        return [f for f in found if not kinds or f.symbol.kind in kinds]
    if name_path is not None:
        return find_definitions(ctx, targets, name_path, substring=substring, kinds=kinds)
    raise Refusal("no_name", "Give name_path= (a name or Class/method), or extends= (a base class) or both.")


def signed_stage(header: str, found: list[Found]) -> list[str]:
    """Each match's signature (which names the symbol; a member's owner is named before it)."""
    signed = [header + " · stage: locations with signatures"]
    for f in found:
        first, *doc = signer(f.path, f.text)(f.outlined())
        owner = f.symbol.name_path.rpartition("/")[0]
        signed.append(f"{f.shown}:{span(f.symbol)}  {owner + ': ' if owner else ''}{first}")
        signed += [f"  {line}" for line in doc]
    return signed


def match_stages(found: list[Found], include_body: bool, signatures: bool, budget: int) -> dict:
    """Signatures or bodies where asked and they fit, else locations, else counts per file."""
    header = f"{plural(len(found), 'match')} in {plural(len({f.shown for f in found}), 'file')}"
    trailer = None
    if signatures and not include_body and fits(signed := signed_stage(header, found), budget):
        return {"text": "\n".join(signed), "stage": "locations with signatures"}
    if include_body:
        if fits(blocks := bodies(header, found), budget):
            return {"text": "\n".join(blocks), "stage": "bodies"}
        header += " · stage: locations"
        trailer = (
            "[the bodies are over max_chars: read one with read path=FILE symbol=NAME_PATH, "
            "or narrow this search to one match to page its body]"
        )
    lines = [header, *locations(found)] + ([trailer] if trailer else [])
    if fits(lines, budget):
        return {"text": "\n".join(lines), "stage": "locations"}
    return {"text": counts_per_file(header, found, budget), "stage": "counts per file"}


@tool("find_symbol", "Find symbol definitions", FIND_SUMMARY, FIND_SCHEMA, light=one_small_file)
def find_symbol(
    ctx: Context,
    name_path: str | None = None,
    *,
    max_chars: int,
    path: str | None = None,
    kinds: list[str] | None = None,
    extends: str | None = None,
    substring: bool = False,
    include_body: bool = False,
    signatures: bool = False,
    start: int | None = None,
    glob: str | list[str] | None = None,
) -> dict:
    ws = ctx.workspace
    globs = globs_of(glob)
    targets = [ws.resolve(path)] if path is not None else list(ws.roots)
    scope = ws.display(targets[0]) if path is not None else "the workspace"
    found = matching(ctx, name_path, path, targets, kinds, extends, substring)
    what = f'find_symbol "{name_path or "*"}"' + (f" ({', '.join(kinds)})" if kinds else "")
    what += (f" extends {extends}" if extends else "") + f" in {scope}"
    unglobbed = None
    if globs:
        found, unglobbed = chosen_by(ctx, found, targets, globs)
        what += f" (glob {', '.join(globs)})"
    fields = {"matches": [{"path": f.shown, "name_path": f.symbol.name_path, "kind": f.symbol.kind,
                           "start_line": f.symbol.start_line, "end_line": f.symbol.end_line} for f in found]}  # fmt: skip
    if not found and unglobbed:
        return {"text": f"{what}: no matches ({unglobbed}).", "stage": "locations", **fields}
    if not found:
        hint = "try substring=true" if not substring else "try a shorter name"
        return {
            "text": f"{what}: no matches ({hint}, or outline a file with symbols path=FILE).",
            "stage": "locations",
            **fields,
        }
    if include_body and len(found) == 1:
        return body_page(found[0], name_path or "", start, max_chars) | {"stage": "body"} | fields
    # a subclass's header shows what it inherits from
    answer = match_stages(found, include_body, signatures or extends is not None, max_chars)
    if answer["stage"] == "counts per file":
        del fields["matches"][200:]  # structured matches stay bounded too
    return answer | fields


def chosen_by(
    ctx: Context, found: list[Found], targets: list[Path], globs: tuple[str, ...]
) -> tuple[list[Found], str | None]:
    """The matches in the files `globs` choose under `targets` (as search's glob chooses),
    and what the glob left out when it left out anything."""
    allowed = globbed(ctx.workspace, targets, globs, check=ctx.check_cancelled)
    kept = [f for f in found if f.path in allowed]
    if not allowed:
        return kept, "the glob matches no file there"
    left = len(found) - len(kept)
    return kept, (f"{plural(left, 'match')} in files the glob leaves out" if left else None)


def find_definitions(
    ctx: Context, targets: list[Path], name_path: str, *, substring: bool, kinds: list[str] | None
) -> list[Found]:
    """The definitions `name_path` names under `targets`, in the order of a walk: from the
    symbol index once it is built, else from the files whose text holds the name."""
    ws, built = ctx.workspace, ctx.index  # the server's (a one-shot's is loaded later, while rg runs)
    folders = [t for t in targets if t.is_dir()]
    found = []
    for file in (t for t in targets if not t.is_dir()):
        text = ws.text(file)  # refuses missing and binary files
        found += [Found(ws.display(file), file, s, ws) for s in named(ctx.symbol_index(), file, text, name_path, substring=substring, kinds=kinds)]  # fmt: skip
    if not folders:
        return found
    if built is not None and built.ready.is_set():
        hits = built.find(name_path, substring=substring, kinds=kinds, under=folders)
        if stale := {path for path, _ in hits if not built.is_current(path)}:
            for path in stale:
                built.update(path)
            hits = built.find(name_path, substring=substring, kinds=kinds, under=folders)
        return found + [Found(ws.display(path), path, entry, ws) for path, entry in hits]
    files = sorted(candidates(ctx, folders, name_path, substring), key=lambda p: walk_order(ws.roots, p))
    index = ctx.symbol_index()
    for n, file in enumerate(files, 1):
        ctx.check_cancelled()
        ctx.progress_of(n, len(files), "looking in")
        try:
            text = ws.text(file)
        except Refusal:
            continue
        for symbol in named(index, file, text, name_path, substring=substring, kinds=kinds):
            found.append(Found(ws.display(file), file, symbol, ws))
    return found


def take_record(ctx: Context, file: FileMatches, _shown: bool) -> None:
    """A file's record, taken from the index (a one-shot's saved one loaded on first use)."""
    if (index := ctx.symbol_index()) is not None:
        index.current(file.path)


def candidates(ctx: Context, folders: list[Path], name_path: str, substring: bool) -> Iterable[Path]:
    """The source files under `folders` that may define `name_path`: those whose text holds
    its last name (its longest piece without spaces, as outlines join names on spaces)."""
    needle = max(last_segment(name_path).split(), key=len, default="")
    if needle:
        try:
            return files_containing(
                ctx.workspace,
                folders,
                needle,
                ignore_case=substring,
                cancelled=ctx.cancel_event.is_set,
                prefetch=partial(take_record, ctx),  # each file's record, from a saved index while rg runs
            )
        except Refusal:  # a name the search engine cannot take
            pass
    return [f for folder in folders for f in source_files(ctx.workspace, folder, check=ctx.check_cancelled)]


def body_page(found: Found, asked: str, start: int | None, budget: int) -> dict:
    """A page of the one match's source, paged like read (`next` pages on with find_symbol)."""
    symbol = found.symbol
    answer = page(
        found.text, found.shown, start=start or symbol.start_line, max_chars=budget,
        first=symbol.start_line, last=symbol.end_line,
        part=symbol_label(symbol.kind, symbol.name_path, asked),
        then=f" symbol=/{symbol.name_path}",  # with read, or find_symbol start=
    )  # fmt: skip
    if answer.get("next"):
        answer["next"] = {
            "name_path": "/" + symbol.name_path,
            "path": found.shown,
            "include_body": True,
            **answer["next"],
        }
    return answer


def bodies(header: str, found: list[Found]) -> list[str]:
    """Every match's location and numbered source."""
    blocks = [header]
    for f in found:
        s = f.symbol
        blocks.append(f"── {f.location()}")
        blocks += number_lines(s.start_line, f.text.lines(s.start_line, min(s.end_line, f.text.line_count)))
    return blocks


def counts_per_file(header: str, found: list[Found], budget: int) -> str:
    """Match counts per file, as many files as fit."""
    hint = "narrow with path=FOLDER or FILE, kinds=, or a longer name path"
    head = f"{header} · stage: counts per file (the locations are over max_chars={budget})"
    rows = per_file({name: plural(n, "match") for name, n in Counter(f.shown for f in found).items()})
    tail = lambda left: f"[{left} more files not listed: {hint}]" if left else f"[{hint}]"  # noqa: E731
    return "\n".join(rows_that_fit(head, rows, budget, tail))


def subclasses(ctx: Context, base: str, paths: list[str] | None) -> list[Found]:
    """Types inheriting from `base` (its last name), directly or through each other: ripgrep
    finds the files naming a base, their outlines and headers say which types inherit."""
    from ..search import Query, run_search, targets_of
    from ..syntax.references import signature

    ws = ctx.workspace
    targets, _ = targets_of(ws, paths)
    frontier = {base.replace(".", "/").rsplit("/", 1)[-1]}
    done: set[str] = set()
    seen: set[tuple[Path, int]] = set()
    found = []
    while frontier:
        pattern = r"\b(?:" + "|".join(re.escape(n) for n in sorted(frontier)) + r")\b"
        words = re.compile(pattern)
        outcome = run_search(ws, Query(pattern), targets, cancelled=ctx.cancel_event.is_set)
        done |= frontier
        new: set[str] = set()
        for file in outcome.files:
            if language_for(file.path) is None:
                continue
            ctx.check_cancelled()
            lines = {m.line for m in file.matches}
            try:
                text = ws.text(file.path)
            except Refusal:
                continue
            for symbol in walk(outline(file.path, text)):
                if symbol.kind not in TYPE_KINDS or (file.path, symbol.start_line) in seen:
                    continue
                header_rows = range(symbol.start_line, symbol.selection[0] + 4)
                if not any(row in lines and words.search(text.line(row)) for row in header_rows):
                    continue
                if set(signature(file.path, text, symbol).bases) & (frontier | done):
                    seen.add((file.path, symbol.start_line))
                    found.append(Found(file.shown, file.path, symbol, ws))
                    new.add(symbol.name)
        frontier = new - done
    found.sort(key=lambda f: (f.shown, f.symbol.start_line))
    return found
