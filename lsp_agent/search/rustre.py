"""Rust regex syntax (ripgrep's) translated to Python's `re`, for the Python engine.

The translation runs a pattern exactly as ripgrep would, or refuses it:

- `Invalid`: not a valid Rust regex either (look-around, backreferences, bad escapes, …);
- `Unsupported`: valid for ripgrep, but Python's `re` cannot run it identically
  (`\\p{…}` classes, nested classes and set operations, `\\<`, flags other than i/m/s, …).

Where the two engines' built-in classes differ, the translation spells the Rust meaning out:
`\\s` is Unicode White_Space (Python's `\\s` adds U+001C-U+001F), and on text that is not
pure ASCII `\\w`/`\\b` use Rust's Unicode word class (letters, marks, decimal digits,
connector punctuation, joiners). In line mode (no `multiline`) nothing may match a line
break: ripgrep refuses a literal `\\n` and removes it from every class, and so do we.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache


class Invalid(ValueError):
    """Not a valid pattern in Rust regex syntax."""


class Unsupported(ValueError):
    """Valid for ripgrep, but not runnable identically by Python's `re`."""


# Rust's \s: the Unicode White_Space property.
SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
POSIX = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\x0b\\x0c\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
WORD_CATEGORIES = {"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "Pc"}
# Other_Alphabetic characters that are not marks: circled and squared Latin letters.
EXTRA_ALPHABETIC = [
    (0x24B6, 0x24E9),
    (0x1F130, 0x1F149),
    (0x1F150, 0x1F169),
    (0x1F170, 0x1F189),
    (0x200C, 0x200D),
]
SIMPLE_ESCAPES = {"t": "\\t", "r": "\\r", "f": "\\f", "v": "\\v", "a": "\\a", "n": "\\n"}


@lru_cache(maxsize=1)
def word_class() -> str:
    """Rust's Unicode \\w as the inside of a Python character class (built once)."""
    ranges: list[list[int]] = []
    for cp in range(0x110000):
        if unicodedata.category(chr(cp)) in WORD_CATEGORIES or any(a <= cp <= b for a, b in EXTRA_ALPHABETIC):
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1][1] = cp
            else:
                ranges.append([cp, cp])
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


def hexcode(p: str, i: int, letter: str) -> tuple[int, int]:
    """Parse \\xHH, \\x{H…}, \\uHHHH, \\u{…}, \\UHHHHHHHH, \\U{…} starting after the letter."""
    if p.startswith("{", i):
        end = p.find("}", i)
        digits = p[i + 1 : end] if end != -1 else ""
        nxt = end + 1
    else:
        size = {"x": 2, "u": 4, "U": 8}[letter]
        digits = p[i : i + size]
        nxt = i + size
        if len(digits) != size:
            digits = ""
    if not digits or not all(c in "0123456789abcdefABCDEF" for c in digits):
        raise Invalid(f"invalid hexadecimal escape at offset {i - 2}")
    value = int(digits, 16)
    if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
        raise Invalid(f"hexadecimal escape at offset {i - 2} is not a Unicode scalar value")
    return value, nxt


@dataclass
class Risk:
    """What a group holds that makes repeating it backtrack badly in Python's re."""

    repeats: bool = False
    alternatives: bool = False

    def absorb(self, inner: Risk) -> None:
        self.repeats |= inner.repeats
        self.alternatives |= inner.alternatives


class Translator:
    def __init__(self, pattern: str, *, multiline: bool, unicode_text: bool):
        self.p = pattern
        self.multiline = multiline
        self.unicode_text = unicode_text  # the text is not pure ASCII: spell Rust's \w out

    def no_newline(self, cls: str) -> str:
        """In line mode nothing matches a line break (ripgrep strips it from classes)."""
        if not self.multiline and re.fullmatch(cls, "\n"):
            return "(?!\\n)" + cls
        return cls

    def word(self, negate: bool) -> str:
        inner = word_class() if self.unicode_text else "\\w"
        return self.no_newline(f"[{'^' if negate else ''}{inner}]")

    def boundary(self, negate: bool) -> str:
        if not self.unicode_text:
            return "\\B" if negate else "\\b"
        w = f"[{word_class()}]"
        if negate:
            return f"(?:(?<={w})(?={w})|(?<!{w})(?!{w}))"
        return f"(?:(?<={w})(?!{w})|(?<!{w})(?={w}))"

    def translate(self) -> str:
        p, out, i = self.p, [], 0
        atom = False  # may a repetition follow?
        # Per open group: does it hold a repetition or alternatives? Python's re backtracks,
        # so repeating such a group ((a+)+, (a|aa)+) can take exponential time on one line,
        # where ripgrep takes linear time: those patterns are refused, not run.
        groups: list[Risk] = []
        closed: Risk | None = None  # the group just closed, if it is what a repetition follows
        while i < len(p):
            c = p[i]
            if c not in "*+?{":
                closed = None
            if c == "\\":
                piece, i = self.escape(i)
                out.append(piece)
                atom = not piece.startswith(("\\b", "\\B", "(?:(?<"))
                continue
            if c == "[":
                piece, i = self.char_class(i)
                out.append(piece)
                atom = True
                continue
            if c == "(":
                piece, i = self.group(i, at_start=not out)
                if piece.endswith(")"):  # a flag group (?i): applies from here on
                    out.append(piece)
                    atom = False
                    continue
                out.append(piece)
                groups.append(Risk())
                atom = False
                continue
            if c == ")":
                if not groups:
                    raise Invalid(f"unopened group at offset {i}")
                closed = groups.pop()
                if groups:
                    groups[-1].absorb(closed)
                out.append(")")
                i += 1
                atom = True
                continue
            if c in "*+?{":
                if not atom:
                    raise Invalid(f"repetition operator missing expression at offset {i}")
                if c == "{":
                    m = re.compile(r"\{(\d+)(,(\d*))?\}").match(p, i)
                    if m is None:
                        raise Invalid(f"invalid counted repetition at offset {i}")
                    low, high = int(m.group(1)), m.group(3)
                    if high and int(high) < low:
                        raise Invalid(
                            f"invalid repetition range {m.group(0)}: the maximum is below the minimum"
                        )
                    out.append(m.group(0))
                    i = m.end()
                    many = int(high) > 1 if high else (low > 1 or m.group(2) is not None)
                    varies = m.group(2) is not None and high != str(low)  # {n,} or {n,m}, m > n
                else:
                    out.append(c)
                    i += 1
                    many, varies = c != "?", True
                if many and closed is not None and (closed.repeats or closed.alternatives):
                    raise Unsupported(
                        "a repeated group that holds a repetition or alternatives (like (a+)+ or (a|ab)*) "
                        "can take exponential time in Python's re (ripgrep's takes linear time)"
                    )
                if varies and groups:
                    groups[-1].repeats = True
                closed = None
                if i < len(p) and p[i] == "?":
                    out.append("?")
                    i += 1
                if i < len(p) and p[i] in "*+?{":
                    raise Unsupported(f"stacked repetition operators at offset {i}")
                atom = False
                continue
            if c == "\n" and not self.multiline:
                raise Invalid(
                    'the literal "\\n" is not allowed in a regex (set multiline to match across lines)'
                )
            if c == "|" and groups:
                groups[-1].alternatives = True
            if c in "^$|.":
                out.append(c)
                atom = c == "."
            else:
                out.append(re.escape(c))
                atom = True
            i += 1
        if groups:
            raise Invalid("unclosed group")
        return "".join(out)

    def group(self, i: int, at_start: bool) -> tuple[str, int]:
        p = self.p
        if not p.startswith("(?", i):
            return "(?:", i + 1  # numbering is irrelevant to a search: no capture
        if p.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
            raise Invalid("look-around, including look-ahead and look-behind, is not supported")
        named = re.compile(r"\(\?P?<([_0-9A-Za-z.\[\]]+)>").match(p, i)
        if named:
            return "(?:", named.end()
        m = re.compile(r"\(\?([A-Za-z-]*)([:)])").match(p, i)
        if m is None:
            raise Invalid(f"unrecognized group syntax at offset {i}")
        on, _, off = m.group(1).partition("-")
        for flag in on + off:
            if flag not in "imsxUuR":
                raise Invalid(f"unrecognized flag {flag!r} at offset {i}")
            if flag in "xUuR":
                raise Unsupported(f"the flag {flag!r} has no identical meaning in Python's re")
        if "m" in off:
            raise Unsupported("(?-m): ripgrep's ^ and $ always match at line boundaries")
        if not self.multiline:  # in line mode "." never matches a line break anyway
            on, off = on.replace("s", ""), off.replace("s", "")
        on, off = on.replace("m", ""), off.replace("m", "")
        flags = on + ("-" + off if off else "")
        if m.group(2) == ")":
            if not at_start:
                raise Unsupported(
                    "a flag group like (?i) in the middle of a pattern; use a scoped group (?i:…) instead"
                )
            return (f"(?{flags})" if on and not off else ""), m.end()
        return (f"(?{flags}:" if flags else "(?:"), m.end()

    def escape(self, i: int, in_class: bool = False) -> tuple[str, int]:
        p = self.p
        if i + 1 >= len(p):
            raise Invalid("incomplete escape sequence at the end of the pattern")
        c = p[i + 1]
        nxt = i + 2
        if c in "xuU":
            value, nxt = hexcode(p, i + 2, c)
            if value == 10 and not self.multiline:
                raise Invalid(
                    'the literal "\\n" is not allowed in a regex (set multiline to match across lines)'
                )
            return f"\\U{value:08x}", nxt
        if c == "n" and not self.multiline:
            raise Invalid('the literal "\\n" is not allowed in a regex (set multiline to match across lines)')
        if c in SIMPLE_ESCAPES:
            return SIMPLE_ESCAPES[c], nxt
        if c in "pP":
            raise Unsupported(
                f"\\{c}{{…}} Unicode classes are Rust-regex-only; Python's re has no equivalent"
            )
        if c == "d":
            return "\\d", nxt
        if c in "wWsSD" and in_class:
            if c == "w":
                return (word_class() if self.unicode_text else "\\w"), nxt
            if c == "s":
                return SPACE if self.multiline else SPACE.replace("\n", ""), nxt
            raise Unsupported(f"a negated class \\{c} inside [...]")
        if c == "D":
            return self.no_newline("[^\\d]"), nxt
        if c in "wW":
            return self.word(c == "W"), nxt
        if c == "s":
            return self.no_newline(f"[{SPACE}]"), nxt
        if c == "S":
            return self.no_newline(f"[^{SPACE}]"), nxt
        if c in "bB" and not in_class:
            if p.startswith("{", nxt):
                raise Unsupported("\\b{…} word-boundary variants have no equivalent in Python's re")
            return self.boundary(c == "B"), nxt
        if c in "<>":
            raise Unsupported(f"\\{c} (start/end of word) has no equivalent in Python's re")
        if c in "AzZ":
            raise Unsupported(f"\\{c}: whole-text anchors are not supported by the Python engine")
        if c.isdigit():
            raise Invalid("backreferences are not supported")
        if c.isascii() and c.isalnum():
            raise Invalid(f"unrecognized escape sequence \\{c}")
        return re.escape(c) if not in_class else "\\" + c, nxt

    def char_class(self, i: int) -> tuple[str, int]:
        p = self.p
        j = i + 1
        negate = p.startswith("^", j)
        if negate:
            j += 1
        items: list[str] = []
        if p.startswith("]", j):
            items.append("\\]")
            j += 1
        while True:
            if j >= len(p):
                raise Invalid(f"unclosed character class at offset {i}")
            c = p[j]
            if c == "]":
                j += 1
                break
            if c == "[":
                m = re.compile(r"\[:(\^?)([a-z]+):\]").match(p, j)
                if m is None:
                    raise Unsupported("nested character classes are Rust-regex-only")
                if m.group(2) not in POSIX:
                    raise Invalid(f"unrecognized ASCII class [:{m.group(2)}:]")
                if m.group(1):
                    raise Unsupported("negated ASCII classes [:^…:] inside [...]")
                items.append(POSIX[m.group(2)])
                j = m.end()
                continue
            if p.startswith(("&&", "--", "~~"), j):
                raise Unsupported("class set operations (&&, --, ~~) are Rust-regex-only")
            if c == "\\":
                piece, j = self.escape(j, in_class=True)
                items.append(piece)
                continue
            if c == "\n" and not self.multiline:
                raise Invalid(
                    'the literal "\\n" is not allowed in a regex (set multiline to match across lines)'
                )
            items.append("\\" + c if c in "\\[]^" else c)
            j += 1
        body = "".join(items)
        if negate:
            return "[^" + body + ("" if self.multiline else "\\n") + "]", j
        return self.no_newline("[" + body + "]"), j


def translate(pattern: str, *, multiline: bool = False, unicode_text: bool = True) -> str:
    """The Python regex that matches exactly what ripgrep's `pattern` matches, or raises
    Invalid / Unsupported."""
    python = Translator(pattern, multiline=multiline, unicode_text=unicode_text).translate()
    try:
        re.compile(python)
    except re.error as exc:  # a Rust pattern we let through that Python rejects
        raise Unsupported(f"Python's re cannot compile it ({exc})") from None
    return python


def needs_unicode_variant(pattern: str) -> bool:
    """Does the translation depend on whether the text is pure ASCII (\\w, \\W, \\b, \\B)?"""
    return bool(re.search(r"(?<!\\)(?:\\\\)*\\[wWbB]", pattern))
