"""Diagnostics of the module DSL: an error code, `file:line:col` and the source line with
a caret under the column, never a traceback.

| code | meaning |
| --- | --- |
| E001 | syntax error |
| E002 | undefined identifier |
| E003 | type mismatch (a value of the wrong kind: a module where a tensor is expected, …) |
| E004 | shape mismatch |
| E005 | missing required gradient |
| E006 | saved tensor not available in backward |
| E007 | circular import (a file that imports itself through its imports) |
| E008 | invalid annotation |
| E009 | duplicate parameter name |
| E010 | invalid weight mapping |
| E011 | incompatible inheritance |
| E012 | missing required parameter |
| E014 | unsupported primitive |
| E015 | invalid dtype for operation |
| E016 | `if` guard must be a compile-time constant |
| E017 | tensor redefinition in the same scope |
| E018 | gradient shape mismatch |
| E022 | a value both saved and recomputed |
| E023 | import name conflict |
| E026 | invalid constraint expression |
| E027 | constraint violation |
"""

from __future__ import annotations

from strata.frontends.dsl.syntax import Loc
from strata.support.errors import StrataError


class DslError(StrataError):
    """A module DSL diagnostic; `code` is one of the table above."""

    def __init__(self, code: str, message: str, loc: Loc | None = None, path: str = "<dsl>", text: str | None = None):
        self.code, self.detail, self.loc, self.path = code, message, loc, path
        self.rendered = text is not None
        super().__init__(render(code, message, loc, path, text))

    def located(self, path: str, text: str) -> DslError:
        """The error rendered against the source it was found in (once: an error from a
        module instantiated inside another keeps the innermost file)."""
        return self if self.rendered else DslError(self.code, self.detail, self.loc, path, text)


def render(code: str, message: str, loc: Loc | None, path: str, text: str | None) -> str:
    if loc is None:
        return f"{path}: error {code}: {message}"
    head = f"{path}:{loc.line}:{loc.column}: error {code}: {message}"
    lines = text.splitlines() if text is not None else []
    if not 1 <= loc.line <= len(lines):
        return head
    source = lines[loc.line - 1].expandtabs(1)
    return f"{head}\n{source}\n{' ' * (loc.column - 1)}^"


def fail(code: str, message: str, loc: Loc | None = None) -> DslError:
    """An error to raise; the loader renders it against its file."""
    return DslError(code, message, loc)
