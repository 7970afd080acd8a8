"""The symbol index on disk, so that a restart parses only the files that changed.

One file per workspace (its roots) and position encoding, in a cache folder outside the
workspace: `$LSP_AGENT_CACHE_DIR`, else `$XDG_CACHE_HOME/lsp-agent`, else
`~/.cache/lsp-agent`. A record is reused when its file's size and mtime_ns are unchanged
(a record its stat cannot vouch for has size -1, see index.trusted_stat) and its language's
grammar version (the grammar wheel's version and the query text) is the one that made it.

Writing is atomic (a temporary file renamed over the old one), so concurrent servers never
see half a file: the last writer wins. The payload is a pickle of plain values only (loading
refuses any class) under a checksum; a file that is corrupt, truncated or of another format
is ignored, and the index is built afresh.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import pickle
import tempfile
from array import array
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import BinaryIO

from .languages import GRAMMARS, query_source
from .records import FileRecord

log = logging.getLogger(__name__)

FORMAT = b"lsp-agent symbol index 2\n"  # 2: versions of 8 hex digits
DIGEST = 32


def cache_folder() -> Path:
    if folder := os.environ.get("LSP_AGENT_CACHE_DIR"):
        return Path(folder)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "lsp-agent"


def index_file(folder: Path, roots: list[Path], encoding: str) -> Path:
    key = "\n".join([encoding, *map(str, roots)]).encode("utf-8", "surrogatepass")
    return folder / "index" / f"{hashlib.blake2b(key, digest_size=12).hexdigest()}.symbols"


@cache
def grammar_version(language: str) -> str:
    """What an outline depends on besides the source: the grammar wheel's version and the query."""
    try:
        version = metadata.version(GRAMMARS[language].package)
    except metadata.PackageNotFoundError:
        version = "?"
    query = hashlib.blake2b(query_source(language).encode("utf-8"), digest_size=8).hexdigest()
    return f"{version}/{query}"


def save(folder: Path, roots: list[Path], encoding: str, files: dict[Path, FileRecord]) -> None:
    target = index_file(folder, roots, encoding)
    rows = [
        (
            str(path),
            r.size,
            r.mtime_ns,
            r.version,
            r.language,
            r.names,
            r.containers,
            r.kinds,
            r.ranges.tobytes(),
        )
        for path, r in files.items()
    ]
    languages = {r.language for r in files.values()}
    saved = {"grammars": {lang: grammar_version(lang) for lang in languages}, "files": rows}
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(FORMAT + bytes(DIGEST))  # the checksum follows the payload's last frame
                payload = _Frames(out)
                pickle.dump(saved, payload, protocol=pickle.HIGHEST_PROTOCOL)
                out.seek(len(FORMAT))
                out.write(payload.checksum.digest())
            os.replace(temporary, target)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as exc:
        log.warning("symbol index not saved to %s: %s", target, exc)


class _Frames:
    """The payload's file as the pickler writes it or the unpickler reads it: a frame (64 KiB)
    a call, each call Python code where other threads may take the GIL. In one call, the
    pickle of a monorepo's index held it for 70 ms, the server's requests waiting."""

    def __init__(self, file: BinaryIO):
        self.file = file
        self.checksum = hashlib.blake2b(digest_size=DIGEST)

    def write(self, data: bytes) -> int:
        self.checksum.update(data)
        return self.file.write(data)

    def read(self, size: int = -1) -> bytes:
        return self.file.read(size)

    def readline(self) -> bytes:
        return self.file.readline()


class _PlainValues(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        raise pickle.UnpicklingError(f"the index file holds a {module}.{name}: refused")


def load(folder: Path, roots: list[Path], encoding: str) -> dict[Path, FileRecord]:
    """The saved records whose grammar is unchanged; {} when there is no usable file."""
    source = index_file(folder, roots, encoding)
    try:
        data = source.read_bytes()
    except OSError:
        return {}
    head, digest, payload = (
        data[: len(FORMAT)],
        data[len(FORMAT) : len(FORMAT) + DIGEST],
        data[len(FORMAT) + DIGEST :],
    )
    if head != FORMAT or hashlib.blake2b(payload, digest_size=DIGEST).digest() != digest:
        log.warning("symbol index %s is not usable: rebuilding it", source)
        return {}
    try:
        saved = _PlainValues(_Frames(io.BytesIO(payload))).load()
        current = {
            lang
            for lang, version in saved["grammars"].items()
            if lang in GRAMMARS and grammar_version(lang) == version
        }
        records = {}
        for path, size, mtime, version, language, names, containers, kinds, ranges in saved["files"]:
            record = FileRecord(size, mtime, version, language, names, containers, kinds, array("I", ranges))
            if language in current and _whole(record):
                records[Path(path)] = record
        return records
    except Exception as exc:  # a valid checksum over a payload of another shape
        log.warning("symbol index %s is not usable (%s): rebuilding it", source, exc)
        return {}


def _whole(record: FileRecord) -> bool:
    """Whether a record's parts agree on its number of definitions."""
    n = len(record.kinds)
    lines = record.names.count("\n") + 1 if n else 0
    return len(record.ranges) == 8 * n and lines == n and record.containers.count("\n") + 1 == max(n, 1)
