"""Static bounds of index values inside a tile kernel, for the verifiers of tile loads,
stores and gathers: a tile index must stay inside its partition's tile grid.

`index_range(v)` is the inclusive [lo, hi] range `v` can take, or None where it cannot
be bounded: constants, `tile.program_id` (0 .. grid - 1 of its kernel), `scf.for`
induction variables (lower .. upper - 1 of bounded bounds) and arith add / sub / mul /
div / rem / min / max / casts of bounded values.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, BlockArgument, SSAValue

from strata.dialects.tile_program import KernelOp, ProgramIdOp

Range = tuple[int, int]


def _kernel_of(op) -> KernelOp | None:
    while op is not None and not isinstance(op, KernelOp):
        op = op.parent_op()
    return op


def index_range(value: SSAValue, depth: int = 0) -> Range | None:
    if depth > 32:
        return None
    if isinstance(value, BlockArgument):
        block = value.block
        parent = block.parent_op() if isinstance(block, Block) else None
        if isinstance(parent, scf.ForOp) and value.index == 0:
            lb, ub = index_range(parent.lb, depth + 1), index_range(parent.ub, depth + 1)
            if lb is None or ub is None:
                return None
            return (lb[0], max(lb[0], ub[1] - 1))
        return None
    op = value.owner
    if isinstance(op, arith.ConstantOp):
        return (op.value.value.data, op.value.value.data) if isinstance(op.value, IntegerAttr) else None
    if isinstance(op, ProgramIdOp):
        kernel = _kernel_of(op)
        if kernel is None or not 0 <= op.dim.value.data < len(kernel.grid_shape()):
            return None
        return (0, kernel.grid_shape()[op.dim.value.data] - 1)
    if isinstance(op, arith.IndexCastOp):
        return index_range(op.input, depth + 1)
    binary = (arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.DivUIOp, arith.DivSIOp, arith.FloorDivSIOp,
              arith.RemUIOp, arith.RemSIOp, arith.MinSIOp, arith.MaxSIOp, arith.MinUIOp, arith.MaxUIOp)
    if not isinstance(op, binary):
        return None
    a, b = index_range(op.lhs, depth + 1), index_range(op.rhs, depth + 1)
    if a is None or b is None:
        return None
    if isinstance(op, arith.AddiOp):
        return (a[0] + b[0], a[1] + b[1])
    if isinstance(op, arith.SubiOp):
        return (a[0] - b[1], a[1] - b[0])
    if isinstance(op, arith.MuliOp):
        corners = [x * y for x in a for y in b]
        return (min(corners), max(corners))
    if isinstance(op, (arith.MinSIOp, arith.MinUIOp)) and a[0] >= 0 and b[0] >= 0:
        return (min(a[0], b[0]), min(a[1], b[1]))
    if isinstance(op, (arith.MaxSIOp, arith.MaxUIOp)) and a[0] >= 0 and b[0] >= 0:
        return (max(a[0], b[0]), max(a[1], b[1]))
    if a[0] < 0 or b[0] < 1:
        return None  # division and remainder: only of non-negative values by positive ones
    if isinstance(op, (arith.DivUIOp, arith.DivSIOp, arith.FloorDivSIOp)):
        return (a[0] // b[1], a[1] // b[0])
    if isinstance(op, (arith.RemUIOp, arith.RemSIOp)):
        return (0, min(a[1], b[1] - 1))
    return None


def check_tile_index(op_name: str, value: SSAValue, axis: int, tiles: int) -> str | None:
    """An error message if `value`, a tile index along `axis` of a partition with `tiles`
    tiles there, is not proven to lie inside [0, tiles); None if it is. Every lowering
    emits bounded indices (program ids, constants, scf.for induction variables and
    arithmetic on them), so an index that cannot be bounded is rejected too."""
    bounds = index_range(value)
    if bounds is None:
        return (
            f"'{op_name}': tile index along axis {axis} cannot be bounded statically (use "
            f"tile.program_id, constants, scf.for induction variables with constant bounds and "
            f"arith on them), so it may fall outside the partition's {tiles} tiles there"
        )
    lo, hi = bounds
    if lo < 0 or hi >= tiles:
        shown = f"{lo}" if lo == hi else f"{lo}..{hi}"
        return (
            f"'{op_name}': tile index {shown} along axis {axis} is outside the partition's "
            f"{tiles} tile{'s' if tiles != 1 else ''} there (valid 0..{tiles - 1}): the kernel's grid "
            f"or the index reaches past the tensor"
        )
    return None
