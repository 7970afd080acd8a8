"""The tool protocol a runtime puts in the system prompt, one per dialect, rendered from
the tools' JSON Schemas, so the model is told exactly the format that is decoded."""

from __future__ import annotations

import json

from .dialects import dialect, teaching
from .toolset import ToolSet, ToolSpec, properties, schema_types


def render_call(name_of_dialect: str, name: str, arguments: dict) -> str:
    """One call written in a dialect, exactly as the decoder reads it."""
    return dialect(name_of_dialect).render(name, arguments)


def example_value(schema: dict, name: str):
    if "default" in schema:
        return schema["default"]
    if schema.get("examples"):
        return schema["examples"][0]
    if schema.get("enum"):
        return schema["enum"][0]
    types = schema_types(schema)
    if "integer" in types or "number" in types:
        return schema.get("minimum", 1)
    if "boolean" in types:
        return True
    if "array" in types:
        return []
    if "object" in types:
        return {}
    return "README.md" if name in ("path", "file", "filename") else "…"


def example_call(tools: ToolSet) -> tuple[str, dict]:
    """A call to the first tool, with its required arguments."""
    if not tools.specs:
        return "tool_name", {"argument": "value"}
    spec = next(iter(tools.specs.values()))
    props = properties(spec.schema)
    required = [k for k in spec.schema.get("required", []) if k in props]
    return spec.name, {k: example_value(props[k], k) for k in required}


def tool_prompt(name_of_dialect: str, tools: ToolSet) -> str:
    """The prompt for a dialect, or for a model family (its first format)."""
    chosen = teaching(name_of_dialect)
    name, arguments = example_call(tools)
    example = chosen.render(name, arguments)
    rules = chosen.rules
    lines = [
        "# Tools",
        "",
        "You can call the tools listed below. To call one, write the call on its own lines, exactly in this form:",
        "",
        example,
        "",
        *rules,
        "- To make several calls, write several blocks, one after another.",
        "- Do not put calls inside ``` code fences of any other kind (```json, ```xml, …): those are examples and are not run.",
        "- After your calls, stop and wait: the results come back in the next message.",
        "",
        "## Available tools",
    ]
    for spec in tools.specs.values():
        lines += ["", *describe(spec, chosen.lists_parameters)]
    return "\n".join(lines) + "\n"


def describe(spec: ToolSpec, lists_parameters: bool) -> list[str]:
    out = [f"### {spec.name}"]
    if spec.description:
        out.append(spec.description)
    if lists_parameters:
        props = properties(spec.schema)
        required = set(spec.schema.get("required", []))
        if not props:
            out.append("Parameters: none.")
        else:
            out.append("Parameters:")
            for key, prop in props.items():
                kind = " or ".join(sorted(schema_types(prop))) or "any"
                need = "required" if key in required else "optional"
                desc = f": {prop['description']}" if prop.get("description") else ""
                out.append(f"- {key} ({kind}, {need}){desc}")
    else:
        out.append(
            "Parameters (JSON Schema): "
            + json.dumps(spec.schema, ensure_ascii=False, separators=(", ", ": "))
        )
    return out
