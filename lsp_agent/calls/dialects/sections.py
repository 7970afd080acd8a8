"""Openers shared by the dialects whose block is a token or tag, a body, and a closing token
(`<tool_calls>[…]</tool_calls>`, `<|action_start|><|plugin|>{…}<|action_end|>`, …)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..dialect import OpeningFn
from ..model import Decodable, Problem
from ..scan import (
    PARTIAL,
    WS_LIMIT,
    ClosedAt,
    Finder,
    JsonValueFinder,
    Opening,
    TokenFinder,
    WithTrailer,
    skip_ws,
    starts,
)

Decoder = Callable[[str], Sequence[Decodable | Problem]]


def between(
    name: str,
    opener: str,
    closer: str | None,
    decode_body: Decoder,
    *,
    first: str = "",
    last_inner: str | None = None,
    cut_ok: bool = False,
) -> tuple[OpeningFn, Decoder]:
    """An opener that claims a block when the body starts (after whitespace) with one of
    `first` (any text when empty), and the block's decoder: `decode_body` of what lies
    between `opener` and `closer`. Without a closer the body is one JSON value whose brackets
    balance (then a closer some servers write is taken along: `last_inner`). `cut_ok`: a body
    the reply leaves open goes to `decode_body` too, which says whether it is whole."""

    def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
        r = starts(text, j, opener, final)
        if r is not True:
            return r or None
        end = j + len(opener)
        k = skip_ws(text, end)
        if first and k < len(text) and (k > end + WS_LIMIT or text[k] not in first):
            return None
        if first and k == len(text) and not final:
            return PARTIAL
        finder: Finder
        if closer is None:
            value = JsonValueFinder(first[:1] or "[", "the end of the JSON")
            finder = WithTrailer(value, last_inner) if last_inner else value
        else:
            finder = TokenFinder(closer, last_inner)
        return Opening(name, base + j, end, finder, decode, opener, cut_ok=cut_ok)

    def decode(block: str) -> Sequence[Decodable | Problem]:
        body = block[len(opener) :].rstrip()
        for tail in (closer, last_inner):
            if tail:
                body = body.removesuffix(tail)
        return decode_body(body)

    return opening, decode


def layout(name: str, tokens: tuple[str, ...]) -> OpeningFn:
    """An opener of layout tokens (`<answer>`, `[END FINAL RESPONSE]`): each is removed from
    the visible text, with one line break right after it."""

    def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
        partial = False
        for token in tokens:
            r = starts(text, j, token, final)
            if r is True:
                end = j + len(token)
                if end == len(text) and not final:
                    return PARTIAL  # a line break may follow
                end += text.startswith("\n", end)
                return Opening(name, base + j, end, ClosedAt(base + end), lambda block: [], token)
            partial = partial or r is PARTIAL
        return PARTIAL if partial else None

    return opening
