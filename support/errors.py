"""The exceptions Strata raises for user mistakes. Each message is a self-contained
diagnostic (what, where, what was expected); tools print it and exit non-zero."""

import re

_LOCATION = re.compile(r"\S.*:\d+:\d+")


def one_line(message: str) -> str:
    """A diagnostic on one line. xDSL's parse errors span several (a header or
    `file:line:col`, the source line, a caret, the message): they become the message,
    prefixed with `file:line:col: error: ` where the first line is a location."""
    lines = message.splitlines()
    if len(lines) <= 1:
        return message
    carets = [i for i, line in enumerate(lines) if line.strip().startswith("^")]
    if not carets:
        return " ".join(line.strip() for line in lines if line.strip())
    rest = " ".join(line.strip() for line in lines[carets[0] + 1 :] if line.strip()) or "cannot parse"
    return f"{lines[0]}: error: {rest}" if _LOCATION.fullmatch(lines[0]) else rest


class StrataError(Exception):
    """Base of every user-facing Strata error."""


class IRError(StrataError):
    """Text that does not parse, or IR that does not verify."""


class InputError(StrataError):
    """Arguments that do not match the entry function (count, shape, dtype)."""


class ExecutionError(StrataError):
    """A run-time check failed while executing a program (e.g. an id out of range)."""


class BuildError(StrataError):
    """A builder-API call whose operands break the op's shape or type rules."""


class TargetUnavailableError(StrataError):
    """The requested target cannot run here (e.g. no GPU or driver for "cuda")."""


class UnsupportedOpError(StrataError):
    """A program from another framework uses an operation Strata cannot translate (the
    message names the operation, where the model uses it, and what is supported)."""
