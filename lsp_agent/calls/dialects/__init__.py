"""The registry of dialects, the model families that write them, and the tables a scrubber
reads for a chosen set of them.

Adding a dialect is writing its module (one `Dialect` record) and listing it here. The order
matters where two dialects claim the same opener (Granite 3.1's `<tool_call> [` is tried
before tagged JSON's `<tool_call>`; GLM's `<tool_call>NAME` after it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache

from ..dialect import Dialect, OpeningFn
from ..scan import Opening, ReasoningFinder, reasoning_decoder
from . import (
    apertus,
    cohere,
    deepseek,
    deepseek_dsml,
    fenced,
    function_xml,
    functionary,
    functools_list,
    glm,
    granite,
    harmony,
    hunyuan,
    internlm,
    invoke_xml,
    json_list,
    kimi,
    kimi_k3,
    lfm2,
    llama,
    longcat,
    minimax,
    minimax_m3,
    mistral,
    olmo3,
    pythonic,
    seed_oss,
    step3,
    tagged_json,
    think,
    tool_calls_tag,
)

DIALECTS: dict[str, Dialect] = {
    d.name: d
    for d in (
        tagged_json.DIALECT,
        function_xml.DIALECT,
        invoke_xml.DIALECT,
        mistral.DIALECT,
        fenced.DIALECT,
        granite.DIALECT_31,
        glm.DIALECT,
        minimax.DIALECT,
        deepseek.DIALECT,
        deepseek_dsml.DIALECT,
        kimi.DIALECT,
        harmony.DIALECT,
        granite.DIALECT,
        cohere.DIALECT,
        cohere.DIALECT_ACTION,
        llama.DIALECT,
        llama.DIALECT_BARE,
        pythonic.DIALECT_LLAMA4,
        pythonic.DIALECT,
        think.DIALECT,
        think.DIALECT_BRACKETS,
        think.DIALECT_APRIEL,
        think.DIALECT_MINIMAX,
        kimi_k3.DIALECT,
        seed_oss.DIALECT,
        seed_oss.DIALECT_THINK,
        olmo3.DIALECT,
        lfm2.DIALECT,
        minimax_m3.DIALECT,
        step3.DIALECT,
        tool_calls_tag.DIALECT,
        hunyuan.DIALECT,
        longcat.DIALECT,
        functools_list.DIALECT,
        internlm.DIALECT,
        apertus.DIALECT,
        json_list.DIALECT,
        functionary.DIALECT,
    )
}
# Where two dialects claim the same opener, the first in this order is asked first.
PRECEDENCE = ("granite_31", "tagged_json")

# Read when a runtime names no dialect: the ones whose openers never occur in ordinary prose.
# Bare JSON, bare pythonic lists, Cohere's `Action:` line, Granite 3.1's unclosed tag and
# the words of Apriel's reasoning and Hunyuan's answer tags are read only when asked for.
ASKED_FOR_ONLY = frozenset(
    {
        "llama_json",
        "pythonic",
        "cohere_action",
        "granite_31",
        "functools",
        "json_list",
        "apriel_think",
        "hunyuan_answer",
    }
)
DEFAULT = tuple(name for name in DIALECTS if name not in ASKED_FOR_ONLY)

# Model families, for runtimes that know the model rather than its dialect.
FAMILIES: dict[str, tuple[str, ...]] = {
    "hermes": ("tagged_json",),
    "qwen2.5": ("tagged_json",),
    "qwen3": ("tagged_json", "think"),
    "qwq": ("tagged_json", "think"),
    "qwen3-coder": ("function_xml", "tagged_json", "think"),
    "llama3": ("llama", "llama_json"),
    "llama3.2": ("llama", "llama_json", "pythonic"),
    "llama4": ("llama4", "pythonic"),
    "mistral": ("mistral", "mistral_think"),
    "magistral": ("mistral", "mistral_think"),
    "deepseek-v3": ("deepseek", "think"),
    "deepseek-r1": ("deepseek", "think"),
    "deepseek-v3.1": ("deepseek", "think"),
    "deepseek-v3.2": ("deepseek_dsml", "think"),
    "deepseek-v4": ("deepseek_dsml", "think"),
    "kimi-k2": ("kimi_k2", "think"),
    "glm-4.5": ("glm", "think"),
    "glm-4.6": ("glm", "think"),
    "glm-4.7": ("glm", "think"),
    "gpt-oss": ("harmony",),
    "granite": ("granite", "granite_31", "tagged_json"),
    "cohere": ("cohere", "cohere_action"),
    "minimax-m2": ("minimax", "think"),
    "nemotron": ("tagged_json", "think"),
    "nemotron-3": ("function_xml", "tagged_json", "think"),
    "step-3.5": ("function_xml", "tagged_json", "think"),
    "kimi-k3": ("kimi_k3",),
    "seed-oss": ("seed_oss", "seed_think"),
    "olmo3": ("olmo3", "think"),
    "lfm2": ("lfm2", "think"),
    "lfm2.5": ("lfm2", "think"),
    "minimax-m3": ("minimax_m3", "minimax_think", "think"),
    "step3": ("step3", "think"),
    "hunyuan-a13b": ("tool_calls_tag", "hunyuan_answer", "think"),
    "jamba": ("tool_calls_tag",),
    "apriel": ("tool_calls_tag", "apriel_think"),
    "xlam": ("json_list", "tagged_json"),
    "longcat": ("longcat", "think"),
    "phi-4-mini": ("functools",),
    "firefunction-v2": ("functools",),
    "internlm2": ("internlm",),
    "apertus": ("apertus",),
    "functionary-v3.1": ("function_xml", "llama"),
    "functionary-v3.2": ("functionary",),
}


# The families whose chat template ends the prompt inside the reasoning (`<think>` and the
# like), whatever the request: their replies start inside it. For a family that thinks only
# when asked, the runtime says so itself: reasoning="open".
OPENS_REASONING = frozenset(
    {"deepseek-r1", "qwq", "minimax-m2", "kimi-k3", "nemotron-3", "step-3.5", "apriel"}
)
REASONING_MODES = ("open", "closed")


def prompt_opened_reasoning(names: list[str] | None, reasoning: str | None) -> Opening | None:
    """The block a reply starts inside when its prompt opened the reasoning (None: it did
    not): it ends at the closer of any chosen reasoning dialect (`</think>` when none is)."""
    if reasoning is not None and reasoning not in REASONING_MODES:
        raise ValueError(f"reasoning must be one of {', '.join(REASONING_MODES)}, not {reasoning!r}")
    implied = any(n in OPENS_REASONING for n in names or ())
    if reasoning == "closed" or (reasoning is None and not implied):
        return None
    reasoners = [DIALECTS[n] for n in chosen(names) if DIALECTS[n].reasoning_closer] or [DIALECTS["think"]]
    closers = tuple(dict.fromkeys(d.reasoning_closer for d in reasoners))
    decode = reasoning_decoder(tuple(d.reasoning_opener for d in reasoners if d.reasoning_opener), closers)
    return Opening(reasoners[0].name, 0, 0, ReasoningFinder(closers), decode, "the reasoning", open_ok=True)


def dialect(name: str) -> Dialect:
    try:
        return DIALECTS[name]
    except KeyError:
        raise ValueError(f"unknown dialect {name!r}; dialects: {', '.join(DIALECTS)}") from None


def chosen(names: Iterable[str] | None) -> tuple[str, ...]:
    """The dialects to read, in registry order, for names of dialects or model families
    (None: DEFAULT)."""
    if names is None:
        return DEFAULT
    wanted: set[str] = set()
    for name in names:
        if name in FAMILIES:
            wanted.update(FAMILIES[name])
        elif name in DIALECTS:
            wanted.add(name)
        else:
            raise ValueError(
                f"unknown dialect or model family {name!r}; dialects: {', '.join(DIALECTS)}; "
                f"families: {', '.join(FAMILIES)}"
            )
    return tuple(n for n in DIALECTS if n in wanted)


def teaching(name: str) -> Dialect:
    """The dialect tool_prompt teaches for a dialect or a model family (its first format)."""
    if name in FAMILIES:
        name = next(n for n in FAMILIES[name] if DIALECTS[n].teaches)
    return dialect(name)


PARTIAL_CACHE = 4096


@dataclass(frozen=True)
class Openers:
    """The dialects whose openers begin with one character, narrowed down by the literal
    prefix at a position (one regex match instead of asking every dialect)."""

    prefix: re.Pattern  # the longest known prefix at a position
    by_prefix: dict[str, tuple[Dialect, ...]]  # a prefix -> the dialects of it and of its own prefixes
    dialects: tuple[Dialect, ...]
    longest: int

    partial: dict[tuple[str, str], tuple[Dialect, ...]] = field(default_factory=dict, compare=False)

    def at(self, text: str, j: int, final: bool) -> tuple[Dialect, ...]:
        m = self.prefix.match(text, j)
        found = self.by_prefix[m.group()] if m else ()
        rest = text[j : j + self.longest]
        if final or len(rest) >= self.longest:
            return found
        # The window ends inside what may still become a longer prefix: ask those dialects too
        # (remembered: streaming asks at every window's end).
        key = (m.group() if m else "", rest)
        got = self.partial.get(key)  # (shared by threads: read once, never after a clear)
        if got is None:
            got = tuple(
                d
                for d in self.dialects
                if d in found or any(len(p) > len(rest) and p.startswith(rest) for p in d.prefixes)
            )
            if len(self.partial) >= PARTIAL_CACHE:  # the window's ends are arbitrary text: bound it
                self.partial.clear()
            self.partial[key] = got
        return got


def openers_of(picked: list[Dialect]) -> Openers:
    prefixes = sorted({p for d in picked for p in d.prefixes}, key=len, reverse=True)
    by_prefix = {p: tuple(d for d in picked if any(p.startswith(q) for q in d.prefixes)) for p in prefixes}
    pattern = re.compile("|".join(re.escape(p) for p in prefixes))
    return Openers(pattern, by_prefix, tuple(picked), len(prefixes[0]))


@dataclass(frozen=True)
class Lexicon:
    """What a scrubber looks for, for one set of dialects."""

    candidate: re.Pattern  # a character where an opener or a stray closer may start
    openers: dict[str, Openers]  # by first character: dialects that open anywhere
    line_openers: dict[str, Openers]  # by first character: dialects that open at line starts
    stray_closers: dict[str, str]  # closer -> the dialect it betrays
    stray_closer: re.Pattern  # any of them (the longest first)
    closers_from: dict[str, tuple[str, ...]]  # first character -> the closers it begins
    longest_closer: int
    reply_start_hooks: tuple[OpeningFn, ...]  # openers only at the reply's start


@cache
def lexicon(names: tuple[str, ...] = DEFAULT) -> Lexicon:
    ordered = sorted(names, key=lambda n: PRECEDENCE.index(n) if n in PRECEDENCE else len(PRECEDENCE))
    picked = [dialect(n) for n in ordered]
    closers = {c: d.name for d in picked for c in d.stray_closers}
    return Lexicon(
        candidate=re.compile(
            "[" + re.escape("".join(sorted({p[0] for d in picked for p in d.prefixes}))) + "]"
        ),
        openers=by_first_char([d for d in picked if not d.line_start]),
        line_openers=by_first_char([d for d in picked if d.line_start]),
        stray_closers=closers,
        stray_closer=re.compile(
            "|".join(re.escape(c) for c in sorted(closers, key=len, reverse=True)) or "(?!)"
        ),
        closers_from={c[0]: tuple(t for t in closers if t[0] == c[0]) for c in closers},
        longest_closer=max(map(len, closers), default=0),
        reply_start_hooks=tuple(d.reply_start for d in picked if d.reply_start is not None),
    )


def by_first_char(picked: list[Dialect]) -> dict[str, Openers]:
    chars = sorted({p[0] for d in picked for p in d.prefixes})
    return {c: openers_of([d for d in picked if any(p[0] == c for p in d.prefixes)]) for c in chars}
