"""Each tool's arguments are declared twice, as its JSON Schema (what clients and models are
shown, and what `validate` checks) and as its handler's signature (what runs): they must
agree, for every tool, so that no argument is shown and ignored, or taken and not shown."""

from __future__ import annotations

import inspect
import keyword

import pytest

from lsp_agent.tools import REGISTRY


def parameters(name: str) -> dict[str, inspect.Parameter]:
    """The handler's arguments, without the Context."""
    found = dict(inspect.signature(REGISTRY[name].handler).parameters)
    del found[next(iter(found))]  # ctx
    return found


@pytest.mark.parametrize("name", list(REGISTRY))
def test_schema_and_signature_name_the_same_arguments(name):
    schema = REGISTRY[name].schema
    properties = set(schema.get("properties", {}))
    taken = {n for n, p in parameters(name).items() if p.kind is not inspect.Parameter.VAR_KEYWORD}
    rest = [p for p in parameters(name).values() if p.kind is inspect.Parameter.VAR_KEYWORD]
    assert taken <= properties, f"{name} takes arguments its schema does not show: {taken - properties}"
    unnamed = properties - taken
    # only a name Python cannot take as a parameter (search's `in`) may come through **kwargs
    assert all(keyword.iskeyword(n) for n in unnamed) and (rest or not unnamed), (
        f"{name}'s schema shows arguments its handler does not take: {unnamed}"
    )
    assert schema.get("additionalProperties") is False, f"{name} must refuse arguments it does not know"


@pytest.mark.parametrize("name", list(REGISTRY))
def test_required_arguments_are_those_without_a_default(name):
    schema = REGISTRY[name].schema
    required = set(schema.get("required", []))
    # max_chars has no default in the handler: `run` fills in the server's
    without_default = {
        n
        for n, p in parameters(name).items()
        if p.default is inspect.Parameter.empty and p.kind is not inspect.Parameter.VAR_KEYWORD
    } - {"max_chars"}
    assert required == without_default, f"{name}: schema requires {required}, the handler {without_default}"


@pytest.mark.parametrize("name", list(REGISTRY))
def test_a_default_the_schema_states_is_the_handlers(name):
    properties = REGISTRY[name].schema.get("properties", {})
    for argument, parameter in parameters(name).items():
        stated = properties.get(argument, {})
        if "default" in stated:
            assert parameter.default == stated["default"], (
                f"{name}.{argument}: the schema says default {stated['default']!r}, the handler {parameter.default!r}"
            )


def test_every_tool_is_checked():
    assert {"read", "search", "symbols", "find_symbol", "references", "definition", "list_files"} <= set(
        REGISTRY
    )
