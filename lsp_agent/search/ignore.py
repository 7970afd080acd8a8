"""Which files a search visits: ripgrep's default rules, reproduced for the Python engine and
for open editor buffers.

The rules, as ripgrep 14 applies them with the flags the ripgrep engine passes
(`--no-require-git --no-ignore-global --no-ignore-parent`, plus the folders between the
workspace root and a searched folder given as one `--ignore-file`):

1. `glob` overrides come first. `!GLOB` excludes; once any plain GLOB is given, a file
   matching none of them is excluded. An override match beats every rule below, hidden
   files included.
2. Ignore files in the searched folder and below: `.rgignore` beats `.ignore` beats
   `.gitignore` beats `.git/info/exclude`; within each kind the deepest folder decides.
3. Ignore files of the folders above a searched folder, inside the workspace (lowest).
4. Hidden entries (a name starting with ".") are skipped unless a rule above whitelisted them.

Symlinks met while walking are not followed (ripgrep's default), so a walk never leaves the
workspace. Ignore-file patterns are parsed by pathspec; `{a,b}` alternatives, which
ripgrep's globs support and gitignore does not, are expanded first.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from pathspec import GitIgnoreSpec

IGNORE_FILES = (".rgignore", ".ignore", ".gitignore")  # highest precedence first


def expand_braces(pattern: str) -> list[str]:
    """`a.{py,pyi}` -> [`a.py`, `a.pyi`] (nested braces too); backslash escapes respected."""
    depth, start = 0, 0
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                inner, parts, level, j0 = pattern[start + 1 : i], [], 0, 0
                for j, ch in enumerate(inner):
                    if ch == "{":
                        level += 1
                    elif ch == "}":
                        level -= 1
                    elif ch == "," and level == 0 and (j == 0 or inner[j - 1] != "\\"):
                        parts.append(inner[j0:j])
                        j0 = j + 1
                parts.append(inner[j0:])
                head, tail = pattern[:start], pattern[i + 1 :]
                return [e for p in parts for e in expand_braces(head + p + tail)]
        i += 1
    return [pattern]


def read_rules(path: Path) -> list[str]:
    try:
        text = path.read_text("utf-8", errors="replace")
    except OSError:
        return []
    return [e for line in text.splitlines() for e in expand_braces(line)]


def spec_of(lines: list[str]) -> GitIgnoreSpec | None:
    lines = [line for line in lines if line.strip() and not line.startswith("#")]
    return GitIgnoreSpec.from_lines(lines) if lines else None


def check(spec: GitIgnoreSpec | None, rel: str, is_dir: bool) -> bool | None:
    """True: ignored, False: whitelisted (a `!` rule), None: no rule matched."""
    if spec is None or not rel:
        return None
    return spec.check_file(rel + "/" if is_dir else rel).include


# --- glob overrides (ripgrep's -g) -------------------------------------------------------


def glob_regex(glob: str) -> tuple[re.Pattern, bool]:
    """One -g glob as (regex over the root-relative path, whitelist?). Gitignore syntax as
    ripgrep reads it: no "/" matches the name at any depth, a trailing "/" only folders."""
    whitelist = not glob.startswith("!")
    glob = glob[1:] if not whitelist else glob
    dir_only = glob.endswith("/") and len(glob) > 1
    glob = glob.rstrip("/") if dir_only else glob
    anchored = "/" in glob
    glob = glob.lstrip("/") if glob.startswith("/") else glob
    out = [] if anchored or glob.startswith("**/") else ["(?:.*/)?"]
    i = 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i) and (i == 0 or glob[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i) and (i == 0 or glob[i - 1] == "/") and i + 2 == len(glob):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = glob.find("]", i + 2 if glob[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end == -1:
                raise ValueError(f"error parsing glob {glob!r}: unclosed character class; missing ']'")
            body = glob[i + 1 : end]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            out.append("[" + ("^/" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif c == "{":
            end = glob.find("}", i)
            if end == -1:
                raise ValueError(f"error parsing glob {glob!r}: unclosed alternate group; missing '}}'")
            alternatives = glob[i + 1 : end].split(",")
            out.append("(?:" + "|".join(glob_regex("/" + a)[0].pattern for a in alternatives) + ")")
            i = end + 1
        elif c == "\\" and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    body = "".join(out)
    return re.compile(body + ("/" if dir_only else "")), whitelist


@dataclass
class Overrides:
    """ripgrep's -g globs: the last matching glob decides."""

    globs: list[tuple[re.Pattern, bool]] = field(default_factory=list)

    @classmethod
    def parse(cls, globs: list[str]) -> Overrides:
        return cls([glob_regex(g) for g in globs])

    def check(self, rel: str, is_dir: bool) -> bool | None:
        """True: excluded, False: whitelisted, None: no glob decides."""
        if not self.globs:
            return None
        candidate = rel + "/" if is_dir else rel
        for regex, whitelist in reversed(self.globs):
            if regex.fullmatch(candidate) or (is_dir and regex.fullmatch(rel)):
                return not whitelist
        if not is_dir and any(w for _, w in self.globs):
            return True
        return None


# --- one folder's ignore files --------------------------------------------------------------


@dataclass
class Level:
    rel: str  # the folder, relative to the root ("" for the root)
    specs: tuple  # (.rgignore, .ignore, .gitignore, .git/info/exclude) specs or None

    @classmethod
    def load(cls, folder: Path, rel: str) -> Level:
        specs = [spec_of(read_rules(folder / name)) for name in IGNORE_FILES]
        git = folder / ".git"
        specs.append(spec_of(read_rules(git / "info" / "exclude")) if git.is_dir() else None)
        return cls(rel, tuple(specs))

    @property
    def empty(self) -> bool:
        return all(s is None for s in self.specs)


def ancestor_rules(root: Path, rel_folder: str) -> list[str]:
    """The ignore rules of the folders strictly above `rel_folder`, inside the workspace,
    rewritten relative to the root: one ignore file for ripgrep's --ignore-file."""
    if not rel_folder:
        return []
    parts = rel_folder.split("/")
    out: list[str] = []
    for depth in range(len(parts)):  # root first: later (deeper) rules win
        rel = "/".join(parts[:depth])
        folder = root / rel if rel else root
        for name in reversed(IGNORE_FILES):  # .gitignore, .ignore, .rgignore: higher last
            for line in read_rules(folder / name):
                if not line.strip() or line.startswith("#"):
                    continue
                negate = line.startswith("!")
                body = line[1:] if negate else line
                trimmed = body.rstrip("/") if len(body) > 1 else body
                anchor = f"/{rel}/" if rel else "/"
                rewritten = anchor + body.lstrip("/") if "/" in trimmed else anchor + "**/" + body
                out.append(("!" if negate else "") + rewritten)
    return out


class Rules:
    """The visit decision for entries under one searched folder (ripgrep's order)."""

    def __init__(self, root: Path, folder_rel: str, globs: list[str]):
        self.root = root
        self.overrides = Overrides.parse(globs)
        self.explicit = spec_of(ancestor_rules(root, folder_rel))
        self._levels: dict[str, Level] = {}
        self.folder_rel = folder_rel

    def level(self, rel: str) -> Level:
        if rel not in self._levels:
            self._levels[rel] = Level.load(self.root / rel if rel else self.root, rel)
        return self._levels[rel]

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Is the entry at root-relative `rel` (below the searched folder) skipped?"""
        decided = self.overrides.check(rel, is_dir)
        if decided is not None:
            return decided
        verdict = self.matched_ignore(rel, is_dir)
        if verdict is not None:
            return verdict
        return rel.rsplit("/", 1)[-1].startswith(".")

    def matched_ignore(self, rel: str, is_dir: bool) -> bool | None:
        results: list[bool | None] = [None, None, None, None]
        parent = rel.rsplit("/", 1)[0] if "/" in rel else ""
        folders = []
        while True:  # from the entry's folder up to the searched folder
            folders.append(parent)
            if parent == self.folder_rel or not parent:
                break
            parent = parent.rsplit("/", 1)[0] if "/" in parent else ""
        for folder in folders:
            level = self.level(folder)
            if level.empty:
                continue
            local = rel[len(folder) + 1 :] if folder else rel
            for kind, spec in enumerate(level.specs):
                if results[kind] is None:
                    results[kind] = check(spec, local, is_dir)
        for verdict in results:
            if verdict is not None:
                return verdict
        return check(self.explicit, rel, is_dir)


def walk(root: Path, folder_rel: str, rules: Rules, cancelled=lambda: False):
    """Root-relative paths of the files ripgrep would search under `folder_rel`."""
    stack = [folder_rel]
    while stack:
        if cancelled():
            return
        current = stack.pop()
        try:
            entries = sorted(os.scandir(root / current if current else root), key=lambda e: e.name)
        except OSError:
            continue
        subfolders = []
        for entry in entries:
            rel = f"{current}/{entry.name}" if current else entry.name
            if entry.is_symlink():
                continue  # not followed, as ripgrep
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if not is_dir and not entry.is_file():
                continue
            if rules.ignored(rel, is_dir):
                continue
            if is_dir:
                subfolders.append(rel)
            else:
                yield rel
        stack.extend(reversed(subfolders))
