"""The scalar meaning of each elementwise graph op as arith/math ops (one rule per op).

`emit_scalar(op, block, elements)` appends the ops computing one result element to
`block` and returns it. f16/bf16 elements are widened to f32 and the result rounded back
once, exactly like the reference interpreter. The rules are registered in the per-op
registry (`op_info(op).scalar`) and used by the tile lowering for every elementwise op.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    FloatAttr,
    IntegerAttr,
    f32,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from strata.dialects import graph
from strata.dialects.graph_base import is_bool, is_float
from strata.dialects.opinfo import op_info, register_scalar
from strata.dialects.graph_elementwise import GELU_TANH_CUBIC, GELU_TANH_SCALE

ScalarRule = Callable[["Emitter", Operation, Sequence[SSAValue]], SSAValue]


class Emitter:
    """Appends scalar ops to a block; `e(op)` returns the op's single result."""

    def __init__(self, block: Block):
        self.block = block

    def __call__(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def const(self, value: float | int, t: Attribute) -> SSAValue:
        if is_float(t):
            return self(arith.ConstantOp(FloatAttr(float(value), t)))
        return self(arith.ConstantOp(IntegerAttr(int(value), t)))


LOW_PRECISION = (Float16Type, BFloat16Type)


def emit_members(members: Iterable[Operation], block: Block, values: dict[SSAValue, SSAValue]) -> dict[SSAValue, SSAValue]:
    """The scalar rules of a fused group's `members` in order, each reading the elements
    `values` maps its operands to; `values` gains their results and is returned."""
    for member in members:
        values[member.results[0]] = emit_scalar(member, block, [values[v] for v in member.operands])
    return values


def emit_scalar(op: Operation, block: Block, elements: Sequence[SSAValue]) -> SSAValue:
    """The element of `op`'s result computed from its operands' elements."""
    rule = op_info(op).scalar
    assert rule is not None, f"{op.name} has no scalar rule"
    e = Emitter(block)
    widened = [e(arith.ExtFOp(v, f32)) if isinstance(v.type, LOW_PRECISION) else v for v in elements]
    result = rule(e, op, widened)
    target = op.results[0].type.element_type
    if isinstance(target, LOW_PRECISION) and result.type != target:
        result = e(arith.TruncFOp(result, target))
    return result


def _by_kind(float_op, int_op):
    def rule(e: Emitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
        return e((float_op if is_float(args[0].type) else int_op)(*args))

    return rule


def _unary_math(math_op):
    return lambda e, op, args: e(math_op(args[0]))


def _sigmoid(e: Emitter, x: SSAValue) -> SSAValue:
    one = e.const(1.0, x.type)
    return e(arith.DivfOp(one, e(arith.AddfOp(one, e(xmath.ExpOp(e(arith.NegfOp(x))))))))


def _neg(e, op, args):
    (x,) = args
    if is_float(x.type):
        return e(arith.NegfOp(x))
    return e(arith.SubiOp(e.const(0, x.type), x))


def _relu(e, op, args):
    (x,) = args
    if is_float(x.type):
        return e(arith.MaximumfOp(x, e.const(0.0, x.type)))
    return e(arith.MaxSIOp(x, e.const(0, x.type)))


def _gelu(e, op, args):
    (x,) = args
    half, one = e.const(0.5, x.type), e.const(1.0, x.type)
    if op.params()["approximate"] == "tanh":
        cube = e(arith.MulfOp(e(arith.MulfOp(x, x)), x))
        inner = e(arith.AddfOp(x, e(arith.MulfOp(e.const(GELU_TANH_CUBIC, x.type), cube))))
        gate = e(xmath.TanhOp(e(arith.MulfOp(e.const(GELU_TANH_SCALE, x.type), inner))))
    else:
        gate = e(xmath.ErfOp(e(arith.MulfOp(x, e.const(1 / math.sqrt(2), x.type)))))
    return e(arith.MulfOp(e(arith.MulfOp(half, x)), e(arith.AddfOp(one, gate))))


FLOAT_PREDICATES = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}
INT_PREDICATES = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}
BOOL_PREDICATES = {"lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge", "eq": "eq", "ne": "ne"}
"""i1 compares unsigned: false < true (as numpy's bool), where signed i1 true is -1."""


def _compare(e, op, args):
    predicate = op.params()["predicate"]
    lhs, rhs = args
    if is_float(lhs.type):
        return e(arith.CmpfOp(lhs, rhs, FLOAT_PREDICATES[predicate]))
    predicates = BOOL_PREDICATES if is_bool(lhs.type) else INT_PREDICATES
    return e(arith.CmpiOp(lhs, rhs, predicates[predicate]))


def _cast(e, op, args):
    """float->int truncates and saturates (NaN -> 0); ->i1 is x != 0 (graph.cast)."""
    (x,) = args
    source, target = x.type, op.results[0].type.element_type
    if isinstance(target, Float16Type) and is_float(source) and source.bitwidth > 32:
        # f64 -> f16 rounds once, straight to f16, as numpy's astype does: through f32 it
        # would round twice. (f64 -> bf16 goes through f32, as ml_dtypes' astype does.)
        return e(arith.TruncFOp(x, target))
    compute_target = f32 if isinstance(target, LOW_PRECISION) else target
    if source == compute_target:
        return x
    if is_bool(compute_target):
        if is_float(source):
            return e(arith.CmpfOp(x, e.const(0.0, source), "une"))
        return e(arith.CmpiOp(x, e.const(0, source), "ne"))
    if is_float(compute_target):
        if is_float(source):
            widen = source.bitwidth < compute_target.bitwidth
            return e((arith.ExtFOp if widen else arith.TruncFOp)(x, compute_target))
        return e((arith.UIToFPOp if is_bool(source) else arith.SIToFPOp)(x, compute_target))
    if is_float(source):
        width = compute_target.width.data
        low, high = e.const(-(2.0 ** (width - 1)), source), e.const(2.0 ** (width - 1) - 1, source)
        clamped = e(arith.MinimumfOp(e(arith.MaximumfOp(x, low)), high))
        is_nan = e(arith.CmpfOp(x, x, "uno"))
        converted = e(arith.FPToSIOp(clamped, compute_target))
        # 2**63 - 1 rounds up to 2**63 in f64: the saturated conversion of it is the max.
        too_large = e(arith.CmpfOp(x, high, "oge"))
        converted = e(arith.SelectOp(too_large, e.const(2 ** (width - 1) - 1, compute_target), converted))
        return e(arith.SelectOp(is_nan, e.const(0, compute_target), converted))
    if is_bool(source):
        return e(arith.ExtUIOp(x, compute_target))
    if source.width.data < compute_target.width.data:
        return e(arith.ExtSIOp(x, compute_target))
    return e(arith.TruncIOp(x, compute_target))


RULES: dict[type[Operation], ScalarRule] = {
    graph.NegOp: _neg,
    graph.AbsOp: _by_kind(xmath.AbsFOp, xmath.AbsIOp),
    graph.ExpOp: _unary_math(xmath.ExpOp),
    graph.LogOp: _unary_math(xmath.LogOp),
    graph.SqrtOp: _unary_math(xmath.SqrtOp),
    graph.RsqrtOp: _unary_math(xmath.RsqrtOp),
    graph.TanhOp: _unary_math(xmath.TanhOp),
    graph.ErfOp: _unary_math(xmath.ErfOp),
    graph.SigmoidOp: lambda e, op, args: _sigmoid(e, args[0]),
    graph.ReluOp: _relu,
    graph.SiluOp: lambda e, op, args: e(arith.MulfOp(args[0], _sigmoid(e, args[0]))),
    graph.GeluOp: _gelu,
    graph.ScaleOp: lambda e, op, args: e(arith.MulfOp(args[0], e.const(op.params()["value"], args[0].type))),
    graph.AddOp: _by_kind(arith.AddfOp, arith.AddiOp),
    graph.SubOp: _by_kind(arith.SubfOp, arith.SubiOp),
    graph.MulOp: _by_kind(arith.MulfOp, arith.MuliOp),
    graph.DivOp: lambda e, op, args: e(arith.DivfOp(*args)),
    graph.MaximumOp: _by_kind(arith.MaximumfOp, arith.MaxSIOp),
    graph.MinimumOp: _by_kind(arith.MinimumfOp, arith.MinSIOp),
    graph.PowOp: lambda e, op, args: e(xmath.PowFOp(*args)),
    graph.CompareOp: _compare,
    graph.SelectOp: lambda e, op, args: e(arith.SelectOp(*args)),
    graph.CastOp: _cast,
}

for _op_type, _rule in RULES.items():
    register_scalar(_op_type)(_rule)
