"""A reader of SCIP indexes (Sourcegraph's scip.proto), protobuf decoded by hand.

Only the fields navigation needs are read; every other field is skipped by its wire type.
Numbers, per scip.proto: Index.metadata=1 (Metadata.tool_info=2 -> ToolInfo.name=1,
version=2), documents=2; Document.relative_path=1, occurrences=2, symbols=3,
position_encoding=6; Occurrence.range=1 (packed int32: start line, start character,
[end line,] end character), symbol=2, symbol_roles=3 (bit 1: a definition);
SymbolInformation.symbol=1, documentation=3, relationships=4; Relationship.symbol=1,
is_implementation=3. Anything that is not a well-formed message raises Damaged with the
byte offset, never another exception: an index comes from elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

DEFINITION = 1  # SymbolRole.Definition
UTF8_POSITIONS = 1  # PositionEncoding.UTF8CodeUnitOffsetFromLineStart


class Damaged(ValueError):
    """Not a SCIP index (truncated, corrupted, or another file); the message says where."""


Range = tuple[int, int, int, int]  # 0-based start line, start character, end line, end character


@dataclass
class Symbol:
    name: str
    documentation: list[str] = field(default_factory=list)
    implements: list[str] = field(default_factory=list)  # relationships with is_implementation


@dataclass
class Document:
    path: str
    utf8_positions: bool = False
    occurrences: list[tuple[Range, str, int]] = field(default_factory=list)  # range, symbol, roles
    symbols: list[Symbol] = field(default_factory=list)


def varint(data: bytes | memoryview, at: int, end: int) -> tuple[int, int]:
    if at < end and data[at] < 0x80:  # most numbers of an index fit one byte
        return data[at], at + 1
    value = shift = 0
    while True:
        if at >= end:
            raise Damaged(f"truncated at byte {at}")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise Damaged(f"a number longer than 10 bytes at byte {at}")


def fields(data: bytes | memoryview, at: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """(field number, wire type, value or start, stop) of each field of one message: a varint
    has its value in the third place, a length-delimited field its bytes at [start, stop)."""
    while at < end:
        key, at = varint(data, at, end)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise Damaged(f"field number 0 at byte {at}")
        if wire == 0:
            value, at = varint(data, at, end)
            yield number, wire, value, at
        elif wire == 2:
            size, at = varint(data, at, end)
            if at + size > end:
                raise Damaged(f"a field of {size} bytes at byte {at} runs past its message's end {end}")
            yield number, wire, at, at + size
            at += size
        elif wire in (1, 5):
            at += 8 if wire == 1 else 4
            if at > end:
                raise Damaged(f"truncated at byte {end}")
        else:
            raise Damaged(f"wire type {wire} at byte {at} (groups are not used by SCIP)")


def text(data: bytes | memoryview, start: int, stop: int) -> str:
    try:
        return bytes(data[start:stop]).decode("utf-8")
    except UnicodeDecodeError:
        raise Damaged(f"a string that is not UTF-8 at byte {start}") from None


def packed(data: bytes | memoryview, start: int, stop: int) -> list[int]:
    numbers = []
    while start < stop:
        value, start = varint(data, start, stop)
        numbers.append(value - (1 << 64) if value >= 1 << 63 else value)  # int32 is sign-extended
    return numbers


def length_delimited(wire: int, number: int, at: int) -> None:
    if wire != 2:
        raise Damaged(f"field {number} at byte {at} has wire type {wire}, not a length-delimited one")


def occurrence(data: bytes | memoryview, start: int, stop: int) -> tuple[Range, str, int] | None:
    numbers: list[int] = []
    symbol, roles = "", 0
    for number, wire, a, b in fields(data, start, stop):
        if number == 1:
            numbers += packed(data, a, b) if wire == 2 else [a - (1 << 64) if a >= 1 << 63 else a]
        elif number == 2:
            length_delimited(wire, number, start)
            symbol = text(data, a, b)
        elif number == 3 and wire == 0:
            roles = a & 0xFFFFFFFF  # int32 in scip.proto: a wider number keeps its low bits
    if len(numbers) == 3:
        numbers.insert(2, numbers[0])  # a range on one line leaves out its end line
    if len(numbers) != 4 or min(numbers) < 0 or not symbol:
        return None  # no range or no symbol: nothing to navigate by
    return (numbers[0], numbers[1], numbers[2], numbers[3]), symbol, roles


def symbol_information(data: bytes | memoryview, start: int, stop: int) -> Symbol:
    found = Symbol("")
    for number, wire, a, b in fields(data, start, stop):
        if number in (1, 3, 4):
            length_delimited(wire, number, start)
        if number == 1:
            found.name = text(data, a, b)
        elif number == 3:
            found.documentation.append(text(data, a, b))
        elif number == 4:
            target, implementation = "", False
            for n, w, c, d in fields(data, a, b):
                if n == 1 and w == 2:
                    target = text(data, c, d)
                elif n == 3 and w == 0:
                    implementation = bool(c)
            if target and implementation:
                found.implements.append(target)
    return found


def document(data: bytes | memoryview, start: int, stop: int) -> Document:
    found = Document("")
    for number, wire, a, b in fields(data, start, stop):
        if number in (1, 2, 3):
            length_delimited(wire, number, start)
        if number == 1:
            found.path = text(data, a, b)
        elif number == 2:
            entry = occurrence(data, a, b)
            if entry is not None:
                found.occurrences.append(entry)
        elif number == 3:
            found.symbols.append(symbol_information(data, a, b))
        elif number == 6 and wire == 0:
            found.utf8_positions = a == UTF8_POSITIONS
    return found


def tool_of(data: bytes | memoryview, start: int, stop: int) -> str:
    """The indexer's name and version from Metadata.tool_info ("scip-python 0.6.6")."""
    for number, wire, a, b in fields(data, start, stop):
        if number == 2 and wire == 2:
            parts = {n: text(data, c, d) for n, w, c, d in fields(data, a, b) if n in (1, 2) and w == 2}
            return " ".join(p for p in (parts.get(1, ""), parts.get(2, "")) if p)
    return ""


def read_index(data: bytes | memoryview) -> Iterator[str | Document]:
    """The indexer's name (a str) once metadata is read, then each Document in order;
    Damaged at the first byte that is not SCIP. An empty file is refused: no indexer
    writes one."""
    if len(data) == 0:
        raise Damaged("empty file")
    for number, wire, a, b in fields(data, 0, len(data)):
        if number == 1:
            length_delimited(wire, number, 0)
            yield tool_of(data, a, b)
        elif number == 2:
            length_delimited(wire, number, a)
            try:
                found = document(bytes(data[a:b]), 0, b - a)  # a copy: bytes index faster than a map
            except Damaged as exc:
                raise Damaged(f"{exc} of the document at byte {a}") from None
            if not found.path:
                raise Damaged(f"a document without a relative path at byte {a}")
            yield found
