"""`split-loops`: split an `scf.for` at the iteration where an induction-variable test flips.

Before:

    scf.for %i = %lb to %ub step %c1 {
      %c = arith.cmpi slt, %i, %v : index          // %v defined outside the loop
      scf.if %c {
        memref.store %x, %a[%i] : memref<64xf32>
      } else {
        memref.store %y, %a[%i] : memref<64xf32>
      }
    }

After:

    %0 = arith.minsi %v, %ub : index
    %split = arith.maxsi %0, %lb : index           // the split clamped into [lb, ub]
    scf.for %i = %lb to %split step %c1 {          // the condition holds here
      memref.store %x, %a[%i] : memref<64xf32>
    }
    scf.for %i = %split to %ub step %c1 {          // and fails here
      memref.store %y, %a[%i] : memref<64xf32>
    }

Rule (the idea of NVIDIA CUDA Tile IR's LoopSplit): an `scf.if` directly in the body whose
condition is `arith.cmpi <pred> %i, %v` or `arith.cmpi <pred> %v, %i`, with `%i` the
loop's induction variable and `%v` loop-invariant (defined outside the loop, or an
`arith.constant`), is monotone in `%i`: it changes at most once, at the first
iteration with `%i >= x`, where (after swapping operands so `%i` is on the left)

    %i <  %v : x = v,     true first       %i >  %v : x = v + 1, false first
    %i <= %v : x = v + 1, true first       %i >= %v : x = v,     false first

The loop becomes [lb, split) and [split, ub), each with the `scf.if` replaced by the
branch that runs there (its yielded values replace the if's results; a missing else is
nothing), and with any other use of the condition replaced by the constant it has there.

    split = lb + ceildiv(clamp(x, lb, ub) - lb, step) * step,   then min(split, ub)

i.e. the first iteration of the original loop at or past x; with step 1 it is just
clamp(x, lb, ub) = maxsi(minsi(x, ub), lb). x is clamped *before* subtracting lb, so
`x - lb` never goes negative (no underflow when the split point lies below the range)
nor past `ub - lb`; `min(v + 1, ub)` is formed as `min(v, ub - 1) + 1` when ub is a
constant (folded) and as `v < ub ? v + 1 : ub` otherwise, so `%i <= INT_MAX` never
wraps. An empty range (ub <= lb) gives two empty loops. When the split point lies
outside the range, one of the two loops simply runs zero iterations; when lb, ub, step
and v are all constants the split is computed here, and a split at or outside the
range leaves ONE loop (no empty loop is emitted). A part whose body is left empty (an
`scf.if` without else) is dropped, its loop-carried values passed through. Like the
loop itself, the arithmetic assumes `lb + trip_count * step` does not overflow.

Loop-carried values are threaded through: the second loop starts from the first loop's
results, and the second loop's results replace the original loop's. Nested loops are
split level by level (a loop created by a split is visited again), so a split is applied
until no loop has a splittable `scf.if` left: running the pass twice equals running it
once.

Unsigned predicates (ult, ule, ugt, uge) are monotone only when no induction value is
negative: they are split only when lb is provably nonnegative (a constant >= 0, the
induction variable of a loop whose lb is, or a `maxsi` with such a value).

Not split: eq / ne (the condition holds on a single point or all but one); a `%v`
computed inside the loop (a loaded value, another loop-carried value, anything derived
from `%i`); a comparison not involving this loop's induction variable; a constant
step <= 0; branches smaller than `threshold`.

Profitability: split when the then or the else branch holds at least `threshold` ops
(counted recursively, terminators excluded; default 1: any non-empty branch). Unlike
NVIDIA's heuristic, memory ops do not force a split, so `threshold` alone decides.
Each split duplicates the loop body: k conditions on the same loop are split one after
the other, giving up to 2^k loops (at most k + 1 of them run at all).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, i1
from xdsl.ir import Attribute, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

SWAPPED = {
    "slt": "sgt", "sle": "sge", "sgt": "slt", "sge": "sle",
    "ult": "ugt", "ule": "uge", "ugt": "ult", "uge": "ule",
}  # fmt: skip
"""The predicate of `v <pred> i` written as `i <SWAPPED[pred]> v`."""

TRUE_FIRST = {"slt", "sle", "ult", "ule"}
"""`i < x` forms: the condition holds before the split point, fails after it."""

INCLUSIVE = {"sle", "sgt", "ule", "ugt"}
"""Predicates whose split point is v + 1 rather than v."""


Int = int | SSAValue
"""A value that is either known (a Python int, in the signed range of its type) or not."""


def int_width(type_: Attribute) -> int:
    return 64 if isinstance(type_, IndexType) else type_.width.data


def to_signed(value: int, width: int) -> int:
    """`value` wrapped to `width` bits, read as two's complement."""
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


def constant_int(value: SSAValue) -> int | None:
    """The value of an integer `arith.constant`, in the signed range of its type."""
    if not isinstance(value.owner, arith.ConstantOp):
        return None
    attr = value.owner.value
    if not isinstance(attr, IntegerAttr):
        return None
    return to_signed(attr.value.data, int_width(attr.type))


def defined_outside(value: SSAValue, loop: scf.ForOp) -> bool:
    owner = value.owner if not isinstance(value, BlockArgument) else value.block.parent_op()
    return owner is None or not loop.is_ancestor(owner)


def invariant(value: SSAValue, loop: scf.ForOp) -> Int | None:
    """`value` as a constant, or itself if defined outside `loop`, or None."""
    if (known := constant_int(value)) is not None:
        return known
    return value if defined_outside(value, loop) else None


def known_nonnegative(value: SSAValue, depth: int = 8) -> bool:
    if (known := constant_int(value)) is not None:
        return known >= 0
    if depth == 0:
        return False
    if isinstance(value, BlockArgument) and isinstance(loop := value.block.parent_op(), scf.ForOp):
        return value.index == 0 and known_nonnegative(loop.lb, depth - 1)
    if isinstance(value.owner, arith.MaxSIOp):
        return any(known_nonnegative(v, depth - 1) for v in value.owner.operands)
    return False


def region_size(region: Region) -> int:
    return sum(1 for op in region.walk() if not isinstance(op, scf.YieldOp))


def is_int(value: Int, known: int) -> bool:
    return isinstance(value, int) and value == known


class IntBuilder:
    """Integer arithmetic on `type_` before the loop: known operands fold, identities
    (x + 0, x * 1, ...) vanish, and each constant is materialized once (reusing the
    loop's own constant operands)."""

    def __init__(self, type_: Attribute, known: Sequence[SSAValue] = ()):
        self.type = type_
        self.width = int_width(type_)
        self.ops: list[Operation] = []
        self.constants = {constant_int(v): v for v in known if constant_int(v) is not None}

    def wrap(self, value: int) -> int:
        return to_signed(value, self.width)

    def unsigned(self, value: int) -> int:
        return value & ((1 << self.width) - 1)

    def materialize(self, value: Int) -> SSAValue:
        if isinstance(value, SSAValue):
            return value
        if value not in self.constants:
            op = arith.ConstantOp(IntegerAttr(value, self.type))
            self.ops.append(op)
            self.constants[value] = op.result
        return self.constants[value]

    def binary(self, op_type: type[Operation], fold: Callable[[int, int], int], a: Int, b: Int) -> Int:
        if isinstance(a, int) and isinstance(b, int):
            return self.wrap(fold(a, b))
        op = op_type(self.materialize(a), self.materialize(b))
        self.ops.append(op)
        return op.result

    def add(self, a: Int, b: Int) -> Int:
        if is_int(a, 0) or is_int(b, 0):
            return b if is_int(a, 0) else a
        return self.binary(arith.AddiOp, lambda x, y: x + y, a, b)

    def sub(self, a: Int, b: Int) -> Int:
        if is_int(b, 0):
            return a
        return self.binary(arith.SubiOp, lambda x, y: x - y, a, b)

    def mul(self, a: Int, b: Int) -> Int:
        if is_int(a, 1) or is_int(b, 1):
            return b if is_int(a, 1) else a
        return self.binary(arith.MuliOp, lambda x, y: x * y, a, b)

    def ceildiv(self, a: Int, b: Int) -> Int:
        if is_int(b, 1):
            return a
        return self.binary(arith.CeilDivSIOp, lambda x, y: -(-x // y), a, b)

    def minsi(self, a: Int, b: Int) -> Int:
        return self.binary(arith.MinSIOp, min, a, b)

    def maxsi(self, a: Int, b: Int) -> Int:
        return self.binary(arith.MaxSIOp, max, a, b)

    def minui(self, a: Int, b: Int) -> Int:
        return self.binary(arith.MinUIOp, lambda x, y: min(x, y, key=self.unsigned), a, b)

    def min_successor(self, v: Int, ub: Int, unsigned: bool) -> Int:
        """min(v + 1, ub) in signed or unsigned order, without `v + 1` ever wrapping:
        `min(v, ub - 1) + 1` when `ub - 1` does not wrap, else `v < ub ? v + 1 : ub`."""
        minimum = self.minui if unsigned else self.minsi
        lowest = 0 if unsigned else -(1 << (self.width - 1))
        if isinstance(ub, int) and ub != lowest:
            return self.add(minimum(v, self.sub(ub, 1)), 1)
        if isinstance(v, int) and isinstance(ub, int):
            order = self.unsigned if unsigned else int
            return self.add(v, 1) if order(v) < order(ub) else ub
        below = arith.CmpiOp(self.materialize(v), self.materialize(ub), "ult" if unsigned else "slt")
        self.ops.append(below)
        select = arith.SelectOp(below.result, self.materialize(self.add(v, 1)), self.materialize(ub))
        self.ops.append(select)
        return select.result


@dataclass
class Split:
    """A splittable `scf.if` of a loop body, normalized to `i <predicate> bound`."""

    if_index: int
    cmp_index: int
    predicate: str
    bound: Int


def find_split(loop: scf.ForOp, threshold: int) -> Split | None:
    if (step := constant_int(loop.step)) is not None and step <= 0:
        return None
    iv = loop.body.block.args[0]
    ops = list(loop.body.block.ops)
    for if_index, if_op in enumerate(ops):
        if not isinstance(if_op, scf.IfOp) or not isinstance(cmp := if_op.cond.owner, arith.CmpiOp):
            continue
        if cmp.parent_block() is not loop.body.block:
            continue
        predicate = arith.CMPI_COMPARISON_OPERATIONS[cmp.predicate.value.data]
        if predicate not in SWAPPED:
            continue
        if cmp.lhs is iv and cmp.rhs is not iv:
            bound = invariant(cmp.rhs, loop)
        elif cmp.rhs is iv and cmp.lhs is not iv:
            bound, predicate = invariant(cmp.lhs, loop), SWAPPED[predicate]
        else:
            continue
        if bound is None:
            continue
        if predicate.startswith("u") and not known_nonnegative(loop.lb):
            continue
        sizes = (region_size(if_op.true_region), region_size(if_op.false_region))
        if max(sizes) < threshold:
            continue
        return Split(if_index, ops.index(cmp), predicate, bound)
    return None


def split_point(split: Split, loop: scf.ForOp, b: IntBuilder) -> Int:
    """The first iteration of `loop` at which the condition changes, in [lb, ub]."""
    lb, ub, step = (invariant(v, loop) for v in (loop.lb, loop.ub, loop.step))
    v = split.bound
    unsigned = split.predicate.startswith("u")
    if split.predicate in INCLUSIVE:
        high = b.min_successor(v, ub, unsigned)
    else:
        high = b.minui(v, ub) if unsigned else b.minsi(v, ub)
    if unsigned and not known_nonnegative(loop.ub):  # an empty loop may have ub < 0 <= lb
        high = b.minsi(high, ub)
    x = b.maxsi(high, lb)
    if step == 1:
        return x
    return b.minsi(b.add(lb, b.mul(b.ceildiv(b.sub(x, lb), step), step)), ub)


def inline_branch(if_op: scf.IfOp, take_then: bool) -> None:
    """Replace `if_op` (in a detached body) by the contents of one of its branches."""
    region = if_op.true_region if take_then else if_op.false_region
    if region.blocks:
        block = region.block
        terminator = block.last_op
        values = list(terminator.operands) if isinstance(terminator, scf.YieldOp) else []
        for op in list(block.ops):
            if op is terminator:
                break
            op.detach()
            if_op.parent_block().insert_op_before(op, if_op)
        for result, value in zip(if_op.results, values):
            result.replace_all_uses_with(value)
    Rewriter.erase_op(if_op)


def is_empty_loop(loop: scf.ForOp) -> bool:
    """A loop that does nothing but carry its values unchanged: its results are its inits."""
    block = loop.body.block
    terminator = block.last_op
    return (
        block.first_op is terminator
        and isinstance(terminator, scf.YieldOp)
        and list(terminator.operands) == list(block.args[1:])
    )


def specialized_loop(
    loop: scf.ForOp,
    split: Split,
    lower: SSAValue,
    upper: SSAValue,
    inits: Sequence[SSAValue],
    take_then: bool,
) -> scf.ForOp:
    """A copy of `loop` over [lower, upper) in which the condition is known."""
    body = Region()
    loop.body.clone_into(body)
    ops = list(body.block.ops)
    if_op, cmp = ops[split.if_index], ops[split.cmp_index]
    inline_branch(if_op, take_then)
    if cmp.result.uses:  # other users of the condition: it is a constant here
        known = arith.ConstantOp(IntegerAttr(int(take_then), i1))
        body.block.insert_op_before(known, cmp)
        cmp.result.replace_all_uses_with(known.result)
    constants = [v.owner for v in cmp.operands if isinstance(v.owner, arith.ConstantOp)]
    Rewriter.erase_op(cmp)
    for op in constants:  # an in-body constant bound left without users
        if op.parent_block() is body.block and not op.result.uses:
            Rewriter.erase_op(op)
    return scf.ForOp(lower, upper, loop.step, inits, body)


class SplitLoopOnCondition(RewritePattern):
    """scf.for with `scf.if (cmpi iv, invariant)` -> two loops without the if. A part
    left with an empty body (an if without else) is dropped."""

    def __init__(self, threshold: int):
        self.threshold = threshold

    @op_type_rewrite_pattern
    def match_and_rewrite(self, loop: scf.ForOp, rewriter: PatternRewriter) -> None:
        split = find_split(loop, self.threshold)
        if split is None:
            return
        builder = IntBuilder(loop.lb.type, (loop.lb, loop.ub, loop.step))
        point = split_point(split, loop, builder)
        first_then = split.predicate in TRUE_FIRST
        lb, ub = invariant(loop.lb, loop), invariant(loop.ub, loop)
        static = isinstance(point, int) and isinstance(lb, int) and isinstance(ub, int)
        if static and (point <= lb or point >= ub):  # one side is empty: keep one loop
            take_then = first_then if point >= ub > lb else not first_then
            only = specialized_loop(loop, split, loop.lb, loop.ub, loop.iter_args, take_then)
            self.replace(rewriter, loop, [], [only])
            return
        split_value = builder.materialize(point)
        split_value.name_hint = "split"
        first = specialized_loop(loop, split, loop.lb, split_value, loop.iter_args, first_then)
        second = specialized_loop(loop, split, split_value, loop.ub, first.results, not first_then)
        self.replace(rewriter, loop, builder.ops, [first, second])

    @staticmethod
    def replace(
        rewriter: PatternRewriter, loop: scf.ForOp, prologue: list[Operation], loops: list[scf.ForOp]
    ) -> None:
        rewriter.insert(prologue, InsertPoint.before(loop))
        results: Sequence[SSAValue] = loop.iter_args
        kept = []
        for new in loops:
            if is_empty_loop(new):
                # its results are its inits; a later loop may start from them
                for result, init in zip(new.results, new.iter_args):
                    result.replace_all_uses_with(init)
                results = new.iter_args
                Rewriter.erase_op(new, safe_erase=False)
            else:
                kept.append(new)
                results = new.results
        rewriter.replace(loop, kept, list(results))


@dataclass(frozen=True)
class SplitLoopsPass(ModulePass):
    """Split loops at the iteration where an induction-variable condition flips (see the
    module docstring); `threshold` is the minimum branch size (in ops) worth a split."""

    name = "split-loops"

    threshold: int = 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(SplitLoopOnCondition(self.threshold)).rewrite_module(op)
