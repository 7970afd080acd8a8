"""SCIP indexes decoded by the protobuf runtime, from a descriptor written here from
scip.proto's field numbers: a second reader, independent of lsp_agent's, for the tests and
benchmarks that check its answers against the indexer's own occurrences."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from lsp_agent.semantic import Location

# message -> [(field, number, type, repeated, message type)], per scip.proto
MESSAGES = {
    "Index": [("metadata", 1, "message", False, "Metadata"), ("documents", 2, "message", True, "Document")],
    "Metadata": [("tool_info", 2, "message", False, "ToolInfo")],
    "ToolInfo": [("name", 1, "string", False, None), ("version", 2, "string", False, None)],
    "Document": [
        ("relative_path", 1, "string", False, None),
        ("occurrences", 2, "message", True, "Occurrence"),
        ("symbols", 3, "message", True, "SymbolInformation"),
    ],
    "Occurrence": [
        ("range", 1, "int32", True, None),
        ("symbol", 2, "string", False, None),
        ("symbol_roles", 3, "int32", False, None),
    ],
    "SymbolInformation": [
        ("symbol", 1, "string", False, None),
        ("relationships", 4, "message", True, "Relationship"),
    ],
    "Relationship": [("symbol", 1, "string", False, None), ("is_implementation", 3, "bool", False, None)],
}
TYPES = {
    "message": descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
    "string": descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
    "int32": descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
    "bool": descriptor_pb2.FieldDescriptorProto.TYPE_BOOL,
}


def index_class():
    proto = descriptor_pb2.FileDescriptorProto(name="scip_test.proto", package="sciptest", syntax="proto3")
    for name, fields in MESSAGES.items():
        message = proto.message_type.add(name=name)
        for field, number, kind, repeated, type_name in fields:
            entry = message.field.add(name=field, number=number, type=TYPES[kind])
            entry.label = entry.LABEL_REPEATED if repeated else entry.LABEL_OPTIONAL
            if type_name:
                entry.type_name = f".sciptest.{type_name}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("sciptest.Index"))


def occurrences_of(path: Path):
    """(document, 0-based range, symbol, roles) of every occurrence, by the protobuf runtime."""
    index = index_class()()
    index.ParseFromString(path.read_bytes())
    for document in index.documents:
        for occurrence in document.occurrences:
            span = list(occurrence.range)
            if len(span) == 3:
                span.insert(2, span[0])
            yield document.relative_path, tuple(span), occurrence.symbol, occurrence.symbol_roles


def expected(path: Path):
    """Per symbol: its occurrences and its definitions, as 1-based locations."""
    uses, definitions = defaultdict(set), defaultdict(set)
    root = path.parent
    for document, (line, start, end_line, end), symbol, roles in occurrences_of(path):
        key = key_of(document, symbol)
        if not (root / document).read_text():
            continue  # a module's occurrence in an empty __init__.py: no line to show it on
        found = Location(root / document, line + 1, start + 1, end_line + 1, end + 1)
        uses[key].add(found)
        if roles & 1:
            definitions[key].add(found)
    return uses, definitions


def key_of(document: str, symbol: str) -> object:
    """A local symbol is one document's; a global one is the same everywhere."""
    return (document, symbol) if symbol.startswith("local ") else symbol


def sharing(path: Path) -> dict[tuple[str, tuple], set]:
    """(document, range) -> the keys of every symbol occurring at exactly that range: asked
    there, an answer is about all of them (a property that is a member of two types)."""
    found: dict[tuple[str, tuple], set] = defaultdict(set)
    for document, span, symbol, _ in occurrences_of(path):
        found[(document, span)].add(key_of(document, symbol))
    return found


def truth(uses: dict, definitions: dict, keys: set) -> tuple[set, set]:
    """The occurrences and definitions of every symbol in `keys`, together."""
    return set().union(*(uses.get(k, set()) for k in keys)), set().union(
        *(definitions.get(k, set()) for k in keys)
    )
