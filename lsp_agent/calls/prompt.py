"""The tool protocol a runtime puts in the system prompt, one per dialect, rendered from
the tools' JSON Schemas, so the model is told exactly the format that is decoded."""

from __future__ import annotations

import json

from .toolset import ToolSet, ToolSpec, schema_types

DIALECTS = {
    "tagged_json": "<tool_call> tags around a JSON object (Hermes, Qwen 2.5)",
    "function_xml": "<function=NAME> XML inside <tool_call> (Qwen3-Coder)",
    "invoke_xml": '<invoke name="NAME"> XML inside <function_calls>',
    "mistral": "[TOOL_CALLS]NAME[ARGS]{…} (Mistral)",
    "fenced_json": "a ```tool_call fenced block holding a JSON object",
}


def render_call(dialect: str, name: str, arguments: dict) -> str:
    """One call written in `dialect`, exactly as the decoder reads it."""
    if dialect in ("tagged_json", "fenced_json"):
        body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
        return (
            f"<tool_call>\n{body}\n</tool_call>" if dialect == "tagged_json" else f"```tool_call\n{body}\n```"
        )
    if dialect == "mistral":
        return f"[TOOL_CALLS]{name}[ARGS]{json.dumps(arguments, ensure_ascii=False)}"
    if dialect == "function_xml":
        params = "".join(f"<parameter={k}>\n{as_text(v)}\n</parameter>\n" for k, v in arguments.items())
        return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"
    if dialect == "invoke_xml":
        params = "".join(f'<parameter name="{k}">{as_text(v)}</parameter>\n' for k, v in arguments.items())
        return f'<function_calls>\n<invoke name="{name}">\n{params}</invoke>\n</function_calls>'
    raise ValueError(f"unknown dialect {dialect!r}; dialects: {', '.join(DIALECTS)}")


def as_text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


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
    props = spec.schema.get("properties") or {}
    required = [k for k in spec.schema.get("required", []) if k in props]
    return spec.name, {k: example_value(props[k], k) for k in required}


def tool_prompt(dialect: str, tools: ToolSet | None = None) -> str:
    tools = tools if tools is not None else ToolSet.from_registry()
    name, arguments = example_call(tools)
    example = render_call(dialect, name, arguments)
    rules = RULES[dialect]
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
        lines += ["", *describe(spec, dialect)]
    return "\n".join(lines) + "\n"


JSON_RULES = [
    '- The block holds one JSON object: "name" is the tool\'s name, "arguments" an object of its parameters.',
    '- Write valid JSON: escape line breaks inside strings as \\n and quotes as \\".',
]
XML_RULES = [
    "- Write each parameter's value as plain text (no escaping, no quotes); numbers, booleans, arrays and objects as JSON.",
    "- Close every tag you open.",
]
RULES = {
    "tagged_json": JSON_RULES,
    "fenced_json": JSON_RULES,
    "mistral": [
        "- Write [TOOL_CALLS], the tool's name, [ARGS], then the arguments as one JSON object, with nothing between them.",
        "- Write valid JSON: escape line breaks inside strings as \\n.",
    ],
    "function_xml": XML_RULES,
    "invoke_xml": XML_RULES,
}


def describe(spec: ToolSpec, dialect: str) -> list[str]:
    out = [f"### {spec.name}"]
    if spec.description:
        out.append(spec.description)
    if dialect in ("function_xml", "invoke_xml"):
        props = spec.schema.get("properties") or {}
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
