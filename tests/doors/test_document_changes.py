"""didChange applied in one pass over the text gives the text pygls's line-by-line
rebuilding gives, for any buffer and change (line breaks of every kind, characters beyond
the BMP, positions past a line's end or the buffer's)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import PositionCodec, TextDocument

from lsp_agent.rpc import apply_change

CHARS = st.sampled_from(["a", "b", " ", "\n", "\r\n", "\r", "é", "𝄞", "\u2028", "\x0c", "\t"])
TEXTS = st.lists(CHARS, max_size=40).map("".join)
POSITIONS = st.builds(types.Position, line=st.integers(0, 8), character=st.integers(0, 12))
ENCODINGS = st.sampled_from(list(types.PositionEncodingKind))


def document(source: str, encoding: types.PositionEncodingKind) -> TextDocument:
    return TextDocument("file:///m.py", source, position_codec=PositionCodec(encoding))


@settings(max_examples=400)
@given(source=TEXTS, start=POSITIONS, end=POSITIONS, text=TEXTS, encoding=ENCODINGS)
def test_a_change_applies_as_pygls_applies_it(source, start, end, text, encoding):
    if (start.line, start.character) > (end.line, end.character):
        start, end = end, start  # a reversed range never reaches a document (rpc.py refuses it)
    ours, theirs = document(source, encoding), document(source, encoding)
    change = types.TextDocumentContentChangePartial(range=types.Range(start=start, end=end), text=text)
    apply_change(ours, change)
    theirs.apply_change(
        types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(start.line, start.character), end=types.Position(end.line, end.character)),
            text=text,
        )
    )  # fmt: skip
    assert ours.source == theirs.source


@given(source=TEXTS, text=TEXTS)
def test_a_change_without_a_range_replaces_the_text(source, text):
    ours = document(source, types.PositionEncodingKind.Utf16)
    apply_change(ours, types.TextDocumentContentChangeWholeDocument(text=text))
    assert ours.source == text
