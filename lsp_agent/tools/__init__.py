"""The agent tools: one module per tool, each a plain function registered in the one
registry (registry.py) by `@tool`. Every front door (LSP requests and commands, MCP, the CLI,
text-dialect call dispatch) reaches them through `call` (or the door kit, doors.py). Tools
know nothing of LSP, and no tool module imports another: what two tools share lives below
them (search/, syntax/, budget.py, paging.py) or in registry.py.
"""

from .registry import (
    BUDGET,
    MAX_CHARS,
    POSITION,
    REGISTRY,
    SMALL_FILE_BYTES,
    Context,
    Tool,
    call,
    catalog,
    describe_schema_error,
    internal_error,
    is_light,
    one_small_file,
    run,
    tool,
    validate,
)

# isort: split
# Tool modules register themselves on import, in catalog order.
from . import read, search, symbols, references, definition, list_files, overview, calls  # noqa: F401, I001
from . import hierarchy  # noqa: F401
from . import edit, edit_symbol, create_file  # noqa: F401
from . import rename  # noqa: F401

__all__ = [
    "BUDGET",
    "MAX_CHARS",
    "POSITION",
    "REGISTRY",
    "SMALL_FILE_BYTES",
    "Context",
    "Tool",
    "call",
    "catalog",
    "describe_schema_error",
    "internal_error",
    "is_light",
    "one_small_file",
    "run",
    "tool",
    "validate",
]
