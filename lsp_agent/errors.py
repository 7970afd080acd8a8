"""The two ways a tool call can fail.

A `Refusal` is an answer: the tool understood the call and declines it, saying what to do
instead (start past the end, path outside the workspace, binary file, budget too small).
An `ArgumentError` is a malformed call (wrong types, unknown arguments): the LSP front door
turns it into JSON-RPC InvalidParams.
"""


class Refusal(Exception):
    def __init__(self, code: str, message: str, **fields):
        super().__init__(message)
        self.code = code
        self.message = message
        self.fields = fields

    def __reduce__(self):
        # pickled whole (a worker process's pipe): Exception's reduction keeps only the message
        return (refused, (self.code, self.message, self.fields))

    def answer(self) -> dict:
        return {"text": self.message, "error": {"code": self.code, "message": self.message}, **self.fields}


def refused(code: str, message: str, fields: dict) -> Refusal:
    return Refusal(code, message, **fields)


class ArgumentError(ValueError):
    """Arguments that do not match a tool's JSON Schema; the message names the argument."""


class Cancelled(Exception):
    """Raised inside a tool when its caller cancelled the request."""


def logger(name: str):
    """The logger of module `name`, logging imported on first use: a one-shot command that
    logs nothing does not pay its import."""
    import logging

    return logging.getLogger(name)
