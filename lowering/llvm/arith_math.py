"""arith and math ops -> LLVM instructions, intrinsics and libm calls, registered in
`HANDLERS`. Most handlers are built from the tables below (op class -> builder method,
intrinsic or libm name)."""

from __future__ import annotations

from functools import partial

from llvmlite import ir
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Operation

from strata.lowering.llvm.emitter import HANDLERS, FunctionEmitter
from strata.lowering.llvm.types import I1, fail


def fastmath_flags(op: Operation) -> list[str]:
    """arith/math fastmath flags carry LLVM's own names, so they map one to one."""
    flags = getattr(op, "fastmath", None)
    return sorted(str(flag) for flag in flags.data) if flags is not None else []


# arith -------------------------------------------------------------------------


def constant(emitter: FunctionEmitter, op: arith.ConstantOp) -> ir.Value:
    type_ = emitter.scalar_type(op.result.type)
    # LLVM reads an i32 4294967295 as -1, so xDSL's signed or unsigned spelling both work.
    if isinstance(op.value, IntegerAttr | FloatAttr):
        return ir.Constant(type_, op.value.value.data)
    raise fail(f"unsupported constant {op.value} in 'arith.constant'")


def binary(method: str, emitter: FunctionEmitter, op: Operation) -> ir.Value:
    lhs, rhs = emitter.operands(op)
    return getattr(emitter.builder, method)(lhs, rhs, flags=fastmath_flags(op))


def int_intrinsic(name: str, emitter: FunctionEmitter, op: Operation) -> ir.Value:
    args = emitter.operands(op)
    return emitter.builder.call(emitter.intrinsic(name, args[0].type, len(args)), args)


def float_intrinsic(name: str, arity: int, emitter: FunctionEmitter, op: Operation) -> ir.Value:
    def compute(type_: ir.Type, args: list[ir.Value]) -> ir.Value:
        intrinsic = emitter.intrinsic(name, type_, arity)
        return emitter.builder.call(intrinsic, args, fastmath=fastmath_flags(op))

    return emitter.float_math(op, compute)


def libm_function(name: str, emitter: FunctionEmitter, op: Operation) -> ir.Value:
    def compute(type_: ir.Type, args: list[ir.Value]) -> ir.Value:
        return emitter.builder.call(emitter.libm(name, type_), args, fastmath=fastmath_flags(op))

    return emitter.float_math(op, compute)


def negf(emitter: FunctionEmitter, op: arith.NegfOp) -> ir.Value:
    return emitter.builder.fneg(*emitter.operands(op), flags=fastmath_flags(op))


def rounded_division(round_up: bool, emitter: FunctionEmitter, op: Operation) -> ir.Value:
    """floordivsi / ceildivsi: LLVM's sdiv truncates; an inexact quotient moves one
    step down when it is negative (remainder and divisor signs differ), one step up
    when it is positive."""
    b = emitter.builder
    lhs, rhs = emitter.operands(op)
    quotient, remainder = b.sdiv(lhs, rhs), b.srem(lhs, rhs)
    zero = ir.Constant(lhs.type, 0)
    remainder_negative = b.icmp_signed("<", remainder, zero)
    divisor_negative = b.icmp_signed("<", rhs, zero)
    positive = b.icmp_signed("==" if round_up else "!=", remainder_negative, divisor_negative)
    inexact = b.icmp_signed("!=", remainder, zero)
    step = b.zext(b.and_(inexact, positive), lhs.type)
    return b.add(quotient, step) if round_up else b.sub(quotient, step)


def rsqrt(emitter: FunctionEmitter, op: math.RsqrtOp) -> ir.Value:
    def compute(type_: ir.Type, args: list[ir.Value]) -> ir.Value:
        flags = fastmath_flags(op)
        root = emitter.builder.call(emitter.intrinsic("llvm.sqrt", type_, 1), args, fastmath=flags)
        return emitter.builder.fdiv(ir.Constant(type_, 1.0), root, flags=flags)

    return emitter.float_math(op, compute)


def absi(emitter: FunctionEmitter, op: math.AbsIOp) -> ir.Value:
    (value,) = emitter.operands(op)
    abs_ = emitter.module.declare_intrinsic(
        "llvm.abs", [value.type], ir.FunctionType(value.type, [value.type, I1])
    )
    # is_int_min_poison = false: abs(INT_MIN) is INT_MIN, as in MLIR.
    return emitter.builder.call(abs_, [value, ir.Constant(I1, 0)])


ICMP_PREDICATES: dict[str, tuple[str, str]] = {
    "eq": ("icmp_signed", "=="), "ne": ("icmp_signed", "!="),
    "slt": ("icmp_signed", "<"), "sle": ("icmp_signed", "<="),
    "sgt": ("icmp_signed", ">"), "sge": ("icmp_signed", ">="),
    "ult": ("icmp_unsigned", "<"), "ule": ("icmp_unsigned", "<="),
    "ugt": ("icmp_unsigned", ">"), "uge": ("icmp_unsigned", ">="),
}  # fmt: skip


def cmpi(emitter: FunctionEmitter, op: arith.CmpiOp) -> ir.Value:
    method, symbol = ICMP_PREDICATES[arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]]
    return getattr(emitter.builder, method)(symbol, *emitter.operands(op))


def cmpf(emitter: FunctionEmitter, op: arith.CmpfOp) -> ir.Value:
    # arith's predicate names (oeq, ult, uno, true, ...) are LLVM's fcmp predicates.
    predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    lhs, rhs = emitter.operands(op)
    return emitter.builder.fcmp_ordered(predicate, lhs, rhs, flags=fastmath_flags(op))


def select(emitter: FunctionEmitter, op: arith.SelectOp) -> ir.Value:
    return emitter.builder.select(*emitter.operands(op))


def cast(method: str, emitter: FunctionEmitter, op: Operation) -> ir.Value:
    (value,) = emitter.operands(op)
    if method == "fpext":
        return emitter.widen(value, emitter.scalar_type(op.results[0].type))
    return getattr(emitter.builder, method)(value, emitter.scalar_type(op.results[0].type))


def index_cast(emitter: FunctionEmitter, op: arith.IndexCastOp) -> ir.Value:
    """index <-> iN: sign-extends or truncates (index is i64)."""
    (value,) = emitter.operands(op)
    target = emitter.scalar_type(op.result.type)
    if value.type.width == target.width:
        return value
    method = "sext" if value.type.width < target.width else "trunc"
    return getattr(emitter.builder, method)(value, target)


# The tables ------------------------------------------------------------------------------

BINARY_INSTRUCTIONS: dict[type[Operation], str] = {
    arith.AddfOp: "fadd", arith.SubfOp: "fsub", arith.MulfOp: "fmul", arith.DivfOp: "fdiv",
    arith.AddiOp: "add", arith.SubiOp: "sub", arith.MuliOp: "mul",
    arith.DivSIOp: "sdiv", arith.DivUIOp: "udiv", arith.RemSIOp: "srem", arith.RemUIOp: "urem",
    arith.AndIOp: "and_", arith.OrIOp: "or_", arith.XOrIOp: "xor",
    arith.ShLIOp: "shl", arith.ShRSIOp: "ashr", arith.ShRUIOp: "lshr",
}  # fmt: skip
INT_INTRINSICS: dict[type[Operation], str] = {
    arith.MaxSIOp: "llvm.smax", arith.MinSIOp: "llvm.smin",
    arith.MaxUIOp: "llvm.umax", arith.MinUIOp: "llvm.umin",
}  # fmt: skip
FLOAT_INTRINSICS: dict[type[Operation], tuple[str, int]] = {
    # maximumf/minimumf propagate NaN; maxnumf/minnumf return the other operand.
    arith.MaximumfOp: ("llvm.maximum", 2), arith.MinimumfOp: ("llvm.minimum", 2),
    arith.MaxnumfOp: ("llvm.maxnum", 2), arith.MinnumfOp: ("llvm.minnum", 2),
    math.PowFOp: ("llvm.pow", 2), math.CopySignOp: ("llvm.copysign", 2),
    math.FmaOp: ("llvm.fma", 3),
    math.ExpOp: ("llvm.exp", 1), math.Exp2Op: ("llvm.exp2", 1),
    math.LogOp: ("llvm.log", 1), math.Log2Op: ("llvm.log2", 1),
    math.SqrtOp: ("llvm.sqrt", 1), math.AbsFOp: ("llvm.fabs", 1),
    math.FloorOp: ("llvm.floor", 1), math.CeilOp: ("llvm.ceil", 1),
    math.TruncOp: ("llvm.trunc", 1), math.RoundEvenOp: ("llvm.roundeven", 1),
    math.SinOp: ("llvm.sin", 1), math.CosOp: ("llvm.cos", 1),
}  # fmt: skip
LIBM_FUNCTIONS: dict[type[Operation], str] = {
    # No LLVM intrinsic for erf and log1p; llvm.tanh would lower to the same libm call.
    math.TanhOp: "tanh", math.ErfOp: "erf", math.Log1pOp: "log1p",
}  # fmt: skip
CASTS: dict[type[Operation], str] = {
    arith.SIToFPOp: "sitofp", arith.UIToFPOp: "uitofp",
    arith.FPToSIOp: "fptosi", arith.FPToUIOp: "fptoui",
    arith.ExtFOp: "fpext", arith.TruncFOp: "fptrunc",
    arith.ExtSIOp: "sext", arith.ExtUIOp: "zext", arith.TruncIOp: "trunc",
    arith.BitcastOp: "bitcast",
}  # fmt: skip

HANDLERS.update({
    **{op: partial(binary, method) for op, method in BINARY_INSTRUCTIONS.items()},
    **{op: partial(int_intrinsic, name) for op, name in INT_INTRINSICS.items()},
    **{op: partial(float_intrinsic, *entry) for op, entry in FLOAT_INTRINSICS.items()},
    **{op: partial(libm_function, name) for op, name in LIBM_FUNCTIONS.items()},
    **{op: partial(cast, method) for op, method in CASTS.items()},
    arith.ConstantOp: constant,
    arith.NegfOp: negf,
    arith.FloorDivSIOp: partial(rounded_division, False),
    arith.CeilDivSIOp: partial(rounded_division, True),
    arith.CmpiOp: cmpi,
    arith.CmpfOp: cmpf,
    arith.SelectOp: select,
    arith.IndexCastOp: index_cast,
    math.RsqrtOp: rsqrt,
    math.AbsIOp: absi,
})
