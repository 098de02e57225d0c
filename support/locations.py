"""Source locations of ops, as the `file:line:col: ` prefix every diagnostic starts with."""

from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation


def location_prefix(op: Operation) -> str:
    """'file:line:col: ' where the op was parsed from (see dialects/context.py's
    LocatingParser), or '' for ops built in memory."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}: "
    return ""
