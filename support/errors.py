"""The exceptions Strata raises for user mistakes. Each message is a self-contained
diagnostic (what, where, what was expected); tools print it and exit non-zero."""


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
