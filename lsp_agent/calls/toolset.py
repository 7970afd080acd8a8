"""The tools a reply's calls are checked against: the registry's agent tools by default,
or the runtime's own list (name + JSON Schema), so a runtime with other tools can decode too.
"""

from __future__ import annotations

import ast
import difflib
import json
import math
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import jsonschema
import regex  # type: ignore[import-untyped]  # no stubs in the wheel
from referencing.exceptions import Unresolvable  # jsonschema's own dependency: a $ref to nowhere

from ..errors import ArgumentError
from .jsoncall import MAX_DEPTH, depth, load

ANY_OBJECT = {"type": "object"}
CLOSEST_MARGIN = 0.2  # closest(): how much less alike than the best a suggestion may be


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    schema: dict


def spec_from(entry: Any, where: str = "tool") -> ToolSpec:
    """One tool description in any of the usual shapes: {name, inputSchema} (MCP, our
    catalog), {name, input_schema}, {name, parameters}, or {type: "function", function: {...}}.
    A refusal names the tool (`where`: its place in the list) and the field at fault."""
    if not isinstance(entry, dict):
        raise ArgumentError(f"{where}: a tool must be an object with a name, got {type(entry).__name__}")
    if entry.get("type") == "function" and isinstance(entry.get("function"), dict):
        entry = entry["function"]
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ArgumentError(f"{where}: `name` must be a non-empty string, got {json.dumps(name)[:40]}")
    where = f"{where} ({name})"
    schema = entry.get("inputSchema", entry.get("input_schema", entry.get("parameters")))
    if schema is None:
        schema = ANY_OBJECT
    if not isinstance(schema, dict):
        raise ArgumentError(f"{where}: its parameters (JSON Schema) must be an object")
    schema = with_standard_types(schema)
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        field = "/".join(str(p) for p in exc.path) or "the schema"
        raise ArgumentError(f"{where}: invalid JSON Schema at {field}: {exc.message}") from None
    except RecursionError:
        raise ArgumentError(f"{where}: its JSON Schema is nested too deeply to check") from None
    if _uses(schema, "unevaluatedProperties") and _uses(schema, "patternProperties"):
        # jsonschema matches those patterns itself, with no bound on the time a pattern takes
        raise ArgumentError(f"{where}: unevaluatedProperties beside patternProperties is not supported")
    return ToolSpec(name, str(entry.get("description", "")), schema)


def _uses(schema: Any, keyword: str) -> bool:
    """Whether `keyword` is a key anywhere in the schema (iterative)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if keyword in node:
                return True
            stack += node.values()
        elif isinstance(node, list):
            stack += node
    return False


# --- patterns from the runtime's schema, in bounded time --------------------------------------

# A runtime's schema may hold a pattern that takes exponential time on some text ("^(a|a)*$"):
# every pattern is matched by the `regex` module with a timeout (it also lets other threads
# run meanwhile), and all the patterns of one check share this many seconds.
PATTERN_SECONDS = 0.5
_deadline = threading.local()


class PatternTimeout(Exception):
    """A pattern of the runtime's schema did not finish in time: the call cannot be checked."""


def search(pattern: str, text: str) -> bool:
    """Whether `pattern` (a runtime's) matches somewhere in `text`, within the check's time."""
    left = getattr(_deadline, "at", time.monotonic() + PATTERN_SECONDS) - time.monotonic()
    try:
        return regex.search(pattern, text, timeout=max(left, 0.001), concurrent=True) is not None
    except TimeoutError:
        raise PatternTimeout(
            f"the pattern {pattern[:60]!r} did not finish within its time ({PATTERN_SECONDS} s for all the patterns of a call)"
        ) from None
    except regex.error as exc:
        raise PatternTimeout(f"the pattern {pattern[:60]!r} is not one this server can run ({exc})") from None


def _pattern(validator, pattern, instance, schema):
    if validator.is_type(instance, "string") and not search(pattern, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator, patterns, instance, schema):
    if validator.is_type(instance, "object"):
        for pattern, subschema in patterns.items():
            for key, value in instance.items():
                if search(pattern, key):
                    yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator, additional, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    named, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
    extras = [k for k in instance if k not in named and not any(search(p, k) for p in patterns)]
    if additional is False and extras:
        yield jsonschema.ValidationError(
            f"additional properties are not allowed ({', '.join(map(repr, extras))})"
        )
    elif isinstance(additional, dict):
        for key in extras:
            yield from validator.descend(instance[key], additional, path=key)


BoundedValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    },
)


# Type names real runtimes and fixtures write (Python's, mostly) for JSON Schema's own.
TYPE_ALIASES = {
    "float": "number",
    "double": "number",
    "int": "integer",
    "long": "integer",
    "str": "string",
    "text": "string",
    "bool": "boolean",
    "dict": "object",
    "map": "object",
    "list": "array",
    "tuple": "array",
    "none": "null",
}
SCHEMA_KEYWORDS_TYPES = ("string", "number", "integer", "boolean", "object", "array", "null")


def with_standard_types(schema: Any) -> Any:
    """The schema with type aliases ("float", "str", "dict", …) replaced by JSON Schema's
    types and `"type": "any"` dropped (iterative: no recursion on deep schemas)."""
    if not isinstance(schema, dict):
        return schema
    root: dict = dict(schema)
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            kind = node.get("type")
            if isinstance(kind, str):
                mapped = standard_type(kind)
                if mapped is None:
                    del node["type"]
                else:
                    node["type"] = mapped
            elif isinstance(kind, list):
                node["type"] = [t for t in (standard_type(k) if isinstance(k, str) else k for k in kind) if t]
            for key, value in node.items():
                if isinstance(value, (dict, list)) and key not in ("enum", "const", "default", "examples"):
                    copy = dict(value) if isinstance(value, dict) else list(value)
                    node[key] = copy
                    stack.append(copy)
        elif isinstance(node, list):
            for k, value in enumerate(node):
                if isinstance(value, (dict, list)):
                    copy = dict(value) if isinstance(value, dict) else list(value)
                    node[k] = copy
                    stack.append(copy)
    return root


def standard_type(kind: str) -> str | None:
    """JSON Schema's name for a type name; None for "any"; unknown names as they are."""
    lowered = kind.lower()
    if lowered == "any":
        return None
    if lowered in SCHEMA_KEYWORDS_TYPES:
        return lowered
    return TYPE_ALIASES.get(lowered, kind)


class ToolSet:
    """Names and schemas to check decoded calls against."""

    def __init__(self, specs: Iterable[ToolSpec]):
        self.specs = {s.name: s for s in specs}
        self._validators: dict[str, jsonschema.Draft202012Validator] = {}

    @classmethod
    def from_list(cls, entries: Iterable[Any]) -> ToolSet:
        return cls(spec_from(e, f"tools[{n}]") for n, e in enumerate(entries))

    def __contains__(self, name: str) -> bool:
        return name in self.specs

    def names(self) -> list[str]:
        return list(self.specs)

    def closest(self, name: str) -> list[str]:
        """Known names nearest to `name`, best first (up to three): at least half alike by
        spelling, and nearly as alike as the best one, so that a name sharing two letters
        ('edit' for 'raed': every letter differs) does not stand beside the evident one ('read')."""
        lowered = {n.lower(): n for n in self.specs}
        near = difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.5)

        def alike(known: str) -> float:  # as get_close_matches scores it
            return difflib.SequenceMatcher(None, known, name.lower()).ratio()

        best = alike(near[0]) if near else 0.0
        return [lowered[n] for n in near if alike(n) >= best - CLOSEST_MARGIN]

    def types_of(self, tool: str, argument: str) -> set[str]:
        spec = self.specs.get(tool)
        return schema_types(properties(spec.schema).get(argument, {})) if spec else set()

    def wants_text(self, tool: str, argument: str) -> bool:
        """Whether a raw-text argument should stay a string (its schema allows a string,
        or says nothing about its type)."""
        types = self.types_of(tool, argument)
        return not types or "string" in types

    def coerce(self, tool: str, arguments: dict, text_params: frozenset[str]) -> dict:
        """Raw-text arguments typed by the schema: JSON-decoded where it wants a non-string,
        where it allows an array or object besides a string and the text is one (as
        llama.cpp and Ollama read a union), and where it says nothing at all and the text is
        JSON (as transformers reads it). A lone `arguments` or `input` wrapper that the
        schema does not name, around an object of the parameters it does, is unwrapped (as
        vLLM repairs DeepSeek's)."""
        inner = self.unwrapped(tool, arguments, text_params)
        if inner is not None:
            return inner
        out = dict(arguments)
        for key in text_params:
            value = out.get(key)
            if isinstance(value, str):
                out[key] = self.typed(tool, key, value)
        return out

    def typed(self, tool: str, key: str, value: str) -> Any:
        types = self.types_of(tool, key)
        if not types:
            return json_or_text(value)
        if "string" not in types:
            scalar = spelled_scalar(value, types)
            return typed_value(value) if scalar is None else scalar
        if value.strip() in ("null", "None") and "null" in types:
            return None  # a nullable string written as the null literal
        if types & {"integer", "number", "boolean"}:
            # a union with string: a number or boolean written as JSON is one (as llama.cpp reads it)
            parsed = json_or_text(value.strip())
            if isinstance(parsed, bool) and "boolean" in types:
                return parsed
            if isinstance(parsed, int) and not isinstance(parsed, bool) and types & {"integer", "number"}:
                return parsed
            if isinstance(parsed, float) and "number" in types:
                return parsed
        if types & {"array", "object"} and value.strip()[:1] in ("[", "{"):
            parsed = json_or_text(value)
            if ("array" in types and isinstance(parsed, list)) or (
                "object" in types and isinstance(parsed, dict)
            ):
                return parsed
        return value

    def unwrapped(self, tool: str, arguments: dict, text_params: frozenset[str]) -> dict | None:
        spec = self.specs.get(tool)
        props = properties(spec.schema) if spec else {}
        if len(arguments) != 1 or not props:
            return None
        ((key, value),) = arguments.items()
        if key not in WRAPPERS or key in props:
            return None
        if isinstance(value, str) and key in text_params:
            value = json_or_text(value)
        if isinstance(value, dict) and value and set(value) <= set(props):
            return value
        return None

    def violations(self, tool: str, arguments: dict) -> list[tuple[str | None, str]]:
        """(argument, why) for each way `arguments` fails the tool's schema, first by path."""
        validator = self._validators.get(tool)
        if validator is None:
            validator = self._validators[tool] = BoundedValidator(self.specs[tool].schema)
        _deadline.at = time.monotonic() + PATTERN_SECONDS
        try:
            errors = sorted(
                validator.iter_errors(arguments), key=lambda e: (list(map(str, e.absolute_path)), e.message)
            )
        except (
            Unresolvable,
            re.error,
            PatternTimeout,
        ) as exc:  # the runtime's schema is at fault, not the call
            return [(None, f"the tool's schema cannot be checked: {exc}")]
        except RecursionError:  # a $ref loop that never reaches the call's values ({"$ref": "#"})
            return [(None, "the tool's schema cannot be checked: its $ref refers back to itself without end")]
        finally:
            del _deadline.at
        return [explain(e, arguments) for e in errors]


MAX_LITERAL = 100_000  # characters: longer text is not read as a Python literal
WRAPPERS = ("arguments", "input")  # keys a model wraps the arguments in by mistake


def json_or_text(text: str) -> Any:
    """Raw text read as JSON, else the text itself."""
    try:
        return load(text)
    except ValueError:
        return text


def spelled_scalar(text: str, types: set[str]) -> int | bool | None:
    """An integer with leading zeros (`007`) or a boolean in any case (`FALSE`), where the
    schema allows no string, read as Ollama reads them; None when the text is neither."""
    word = text.strip()
    if types & {"integer", "number"} and INTEGER.fullmatch(word):
        return int(word)
    if "boolean" in types and word.lower() in ("true", "false"):
        return word.lower() == "true"
    return None


INTEGER = re.compile(r"[+-]?[0-9]{1,100}")


def typed_value(text: str) -> Any:
    """Raw text read as JSON, else as a Python literal (`True`, `None`, `{'a': 1}`, as
    SGLang and mlx-lm do), else left as text: the schema check says what is wrong with it."""
    try:
        return load(text)
    except ValueError:
        pass
    if len(text) > MAX_LITERAL:
        return text
    try:
        return json_value(ast.literal_eval(text.strip()))
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return text


def json_value(value: Any) -> Any:
    """A Python literal as JSON holds it (tuples as lists); anything JSON cannot hold (a
    set, an infinite number, nesting deeper than MAX_DEPTH) is refused with ValueError."""
    if depth(value) > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    return plain(value)


def plain(value: Any) -> Any:
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: plain(v) for k, v in value.items()}
    raise ValueError("not a JSON value")


def properties(schema: dict) -> dict[str, dict]:
    """The schema's properties; a boolean subschema (`true`: anything) reads as {}."""
    props = schema.get("properties") or {}
    return {k: v if isinstance(v, dict) else {} for k, v in props.items()}


def schema_types(schema: dict) -> set[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    types: set[str] = set()
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key) or []:
            if isinstance(option, dict):
                types |= schema_types(option)
    return types


def explain(error: jsonschema.ValidationError, arguments: dict) -> tuple[str | None, str]:
    """Name the argument a schema error is about, and say why in a few words."""
    path = [str(p) for p in error.absolute_path]
    expected: Any = error.validator_value
    schema: Any = error.schema
    if error.validator == "required" and not path:
        missing = [k for k in expected if k not in arguments]
        name = missing[0] if missing else None
        return name, f"argument {name!r} is required but missing"
    if error.validator == "additionalProperties" and not path:
        allowed = set((schema.get("properties") or {}).keys())
        extra = sorted(k for k in arguments if k not in allowed)
        known = ", ".join(sorted(allowed)) or "none"
        return (
            extra[0] if extra else None
        ), f"unexpected argument(s) {', '.join(map(repr, extra))} (known: {known})"
    if path:
        value = json.dumps(error.instance, ensure_ascii=False)
        if len(value) > 60:
            value = value[:59] + "…"
        return path[0], f"argument {'/'.join(path)!r} = {value}: {short_message(error)}"
    return None, error.message


def short_message(error: jsonschema.ValidationError) -> str:
    v = error.validator
    expected: Any = error.validator_value
    if v == "type":
        return f"must be of type {expected if isinstance(expected, str) else ' or '.join(expected)}"
    if v == "minimum":
        return f"must be >= {expected}"
    if v == "maximum":
        return f"must be <= {expected}"
    if v == "enum":
        return "must be one of " + ", ".join(json.dumps(x) for x in expected)
    return error.message
