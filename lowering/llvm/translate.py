"""Loops-level xDSL IR -> LLVM IR (llvmlite): the last step of Strata's CPU path.

The input is a `builtin.module` of `func.func`s whose bodies use only arith, math,
scf (for / if / yield), memref (load / store / alloca on static row-major memrefs)
and func (call / return). Memref arguments become bare `ptr noalias` arguments and
`index` becomes i64, so a kernel `(memref<N x f32>, ..., index) -> i32` is called
from C as `int32_t k(float *, ..., int64_t)`.

Translation is a visitor: `HANDLERS` maps each op class to a small function that
emits LLVM instructions through an `ir.IRBuilder` and returns the op's results.
Most handlers are built from tables (op class -> builder method, intrinsic or libm
name). Anything outside the tables raises a StrataError naming the op or type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial, reduce
from math import prod

import ml_dtypes
import numpy as np
from llvmlite import ir
from llvmlite.ir.types import _BaseFloatType
from xdsl.dialects import arith, func, math, memref, scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    Signedness,
)
from xdsl.ir import Attribute, Operation, Region, SSAValue

from strata.support.errors import StrataError


class BFloatType(_BaseFloatType):
    """LLVM's `bfloat`, which llvmlite.ir lacks (it has half, float and double)."""

    null = "0.0"
    intrinsic_name = "bf16"

    def __str__(self) -> str:
        return "bfloat"

    def format_constant(self, value: float) -> str:
        # LLVM rejects a double-hex constant that bfloat cannot represent exactly;
        # the 0xR form spells the rounded 16-bit pattern instead.
        bits = np.array(value, dtype=ml_dtypes.bfloat16).view(np.uint16)
        return f"0xR{int(bits):04X}"


BFloatType._create_instance()

I1, I8, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(64)
HALF, BFLOAT, FLOAT, DOUBLE = ir.HalfType(), BFloatType(), ir.FloatType(), ir.DoubleType()
POINTER = ir.PointerType()

FLOAT_TYPES: dict[type[Attribute], ir.Type] = {
    Float16Type: HALF,
    BFloat16Type: BFLOAT,
    Float32Type: FLOAT,
    Float64Type: DOUBLE,
}
LOW_PRECISION = (HALF, BFLOAT)
"""Math functions on these are computed in f32 and rounded once."""

ALLOCA_ALIGNMENT = 64
"""A cache line and a full AVX-512 vector."""


def fail(message: str) -> StrataError:
    return StrataError(f"loops-to-llvm: {message}")


class UnsupportedType(StrataError):
    """A type with no LLVM counterpart here; re-raised naming the op or function."""


# Types ------------------------------------------------------------------------


def scalar_type(type_: Attribute) -> ir.Type:
    if isinstance(type_, IndexType):
        return I64
    if isinstance(type_, IntegerType):
        if type_.signedness.data != Signedness.SIGNLESS:
            raise UnsupportedType(f"unsupported type {type_} (only signless integers)")
        return ir.IntType(type_.width.data)
    if type(type_) in FLOAT_TYPES:
        return FLOAT_TYPES[type(type_)]
    raise UnsupportedType(f"unsupported type {type_}")


def memory_type(element_type: Attribute) -> ir.Type:
    """How an element is laid out in memory: i1 takes a byte, like numpy's bool."""
    type_ = scalar_type(element_type)
    return I8 if type_ == I1 else type_


def static_shape(memref_type: Attribute) -> tuple[int, ...]:
    """The shape of a memref the translator can address: static, row-major."""
    if not isinstance(memref_type, MemRefType):
        raise UnsupportedType(f"expected a memref, got {memref_type}")
    shape = memref_type.get_shape()
    if any(size < 0 for size in shape):
        raise UnsupportedType(f"unsupported dynamic shape in {memref_type}")
    if not isinstance(memref_type.layout, NoneAttr):
        raise UnsupportedType(f"unsupported layout in {memref_type} (only the default row-major)")
    return shape


def default_memory(memref_type: MemRefType) -> None:
    """The host has one memory: memory spaces belong to GPU kernels."""
    if not isinstance(memref_type.memory_space, NoneAttr):
        raise UnsupportedType(f"unsupported memory space in {memref_type}")


def argument_type(type_: Attribute) -> ir.Type:
    if isinstance(type_, MemRefType):
        static_shape(type_)
        default_memory(type_)
        memory_type(type_.element_type)
        return POINTER
    return scalar_type(type_)


def fastmath_flags(op: Operation) -> list[str]:
    """arith/math fastmath flags carry LLVM's own names, so they map one to one."""
    flags = getattr(op, "fastmath", None)
    return sorted(str(flag) for flag in flags.data) if flags is not None else []


# The per-function emitter -------------------------------------------------------

Results = ir.Value | Sequence[ir.Value] | None
Handler = Callable[["FunctionEmitter", Operation], Results]


class FunctionEmitter:
    """Translates one func.func body. Allocas go to a block of their own at the
    entry, so that every alloca is static (mem2reg/SROA only promote those)."""

    def __init__(self, llvm_function: ir.Function, functions: dict[str, ir.Function]):
        self.function = llvm_function
        self.functions = functions
        self.values: dict[SSAValue, ir.Value] = {}
        self.allocas = ir.IRBuilder(llvm_function.append_basic_block("allocas"))
        self.entry = llvm_function.append_basic_block("entry")
        self.builder = ir.IRBuilder(self.entry)

    @property
    def module(self) -> ir.Module:
        return self.function.module

    def translate_body(self, func_op: func.FuncOp) -> None:
        block = func_op.body.block
        self.bind(block.args, self.function.args)
        for op in block.ops:
            self.translate(op)
        self.allocas.branch(self.entry)

    def handler(self, op: Operation) -> Handler | None:
        """How this emitter translates `op` (a target may override some entries)."""
        return HANDLERS.get(type(op))

    def scalar_type(self, type_: Attribute) -> ir.Type:
        """The register type of a scalar (a target may represent some types differently)."""
        return scalar_type(type_)

    def memory_type(self, element_type: Attribute) -> ir.Type:
        """The in-memory type of an element."""
        return memory_type(element_type)

    def translate(self, op: Operation) -> None:
        handler = self.handler(op)
        if handler is None:
            raise fail(f"unsupported op '{op.name}'")
        try:
            results = handler(self, op)
        except UnsupportedType as e:
            raise fail(f"'{op.name}': {e}") from None
        if isinstance(results, ir.Value):
            results = [results]
        self.bind(op.results, results or [])

    def translate_region(self, region: Region) -> list[ir.Value]:
        """Emits a single-block scf region; returns the values its scf.yield yields."""
        *body, terminator = region.block.ops
        for op in body:
            self.translate(op)
        if not isinstance(terminator, scf.YieldOp):
            raise fail(f"unsupported terminator '{terminator.name}' in an scf region")
        return self.operands(terminator)

    def bind(self, ssa_values: Sequence[SSAValue], llvm_values: Sequence[ir.Value]) -> None:
        assert len(ssa_values) == len(llvm_values)
        self.values.update(zip(ssa_values, llvm_values))

    def operands(self, op: Operation) -> list[ir.Value]:
        return [self.values[operand] for operand in op.operands]

    def intrinsic(self, name: str, type_: ir.Type, arity: int) -> ir.Function:
        """`name`.<type suffix> with `arity` operands of `type_`, returning `type_`."""
        return self.module.declare_intrinsic(name, [type_], ir.FunctionType(type_, [type_] * arity))

    def libm(self, name: str, type_: ir.Type) -> ir.Function:
        """libm's `name` (double) or `name`f (float); the JIT resolves it in the process."""
        return self.external({DOUBLE: name, FLOAT: name + "f"}[type_], type_, 1)

    def external(self, symbol: str, type_: ir.Type, arity: int) -> ir.Function:
        """The nounwind function `symbol` of `arity` operands of `type_`, declared once."""
        if symbol in self.module.globals:
            return self.module.globals[symbol]
        function = ir.Function(self.module, ir.FunctionType(type_, [type_] * arity), symbol)
        function.attributes.add("nounwind")
        return function

    def float_math(
        self, op: Operation, compute: Callable[[ir.Type, list[ir.Value]], ir.Value]
    ) -> ir.Value:
        """`compute(type, operands)` for a float math op; f16 and bf16 operands are
        computed in f32 and the result rounded once, like the reference interpreter."""
        args = self.operands(op)
        result_type = args[0].type
        if result_type not in LOW_PRECISION:
            return compute(result_type, args)
        widened = [self.builder.fpext(arg, FLOAT) for arg in args]
        return self.builder.fptrunc(compute(FLOAT, widened), result_type)

    def element_pointer(self, memref_value: SSAValue, indices: Sequence[SSAValue]) -> ir.Value:
        """A single inbounds GEP on the element type: unlike ptrtoint arithmetic, it
        keeps the address analysable, which the loop vectorizer needs."""
        shape = static_shape(memref_value.type)
        strides = [prod(shape[i + 1 :]) for i in range(len(shape))]
        terms = []
        for index, stride in zip(indices, strides):
            term = self.values[index]
            terms.append(term if stride == 1 else self.builder.mul(term, ir.Constant(I64, stride)))
        offset = reduce(self.builder.add, terms) if terms else ir.Constant(I64, 0)
        element = self.memory_type(memref_value.type.element_type)
        return self.builder.gep(
            self.values[memref_value], [offset], inbounds=True, source_etype=element
        )


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
    return getattr(emitter.builder, method)(value, emitter.scalar_type(op.results[0].type))


def index_cast(emitter: FunctionEmitter, op: arith.IndexCastOp) -> ir.Value:
    """index <-> iN: sign-extends or truncates (index is i64)."""
    (value,) = emitter.operands(op)
    target = emitter.scalar_type(op.result.type)
    if value.type.width == target.width:
        return value
    method = "sext" if value.type.width < target.width else "trunc"
    return getattr(emitter.builder, method)(value, target)


# memref --------------------------------------------------------------------------


def load(emitter: FunctionEmitter, op: memref.LoadOp) -> ir.Value:
    pointer = emitter.element_pointer(op.memref, op.indices)
    value = emitter.builder.load(pointer, typ=emitter.memory_type(op.memref.type.element_type))
    result_type = emitter.scalar_type(op.res.type)
    return emitter.builder.trunc(value, result_type) if result_type == I1 else value


def store(emitter: FunctionEmitter, op: memref.StoreOp) -> None:
    pointer = emitter.element_pointer(op.memref, op.indices)
    value = emitter.values[op.value]
    if value.type == I1:
        value = emitter.builder.zext(value, I8)
    emitter.builder.store(value, pointer)


def alloca(emitter: FunctionEmitter, op: memref.AllocaOp) -> ir.Value:
    shape = static_shape(op.memref.type)  # also rejects dynamic sizes
    default_memory(op.memref.type)
    element = emitter.memory_type(op.memref.type.element_type)
    buffer = emitter.allocas.alloca(element, size=ir.Constant(I64, prod(shape)))
    requested = op.alignment.value.data if op.alignment is not None else 0
    buffer.align = max(ALLOCA_ALIGNMENT, requested)
    return buffer


# scf -------------------------------------------------------------------------------


def for_(emitter: FunctionEmitter, op: scf.ForOp) -> list[ir.Value]:
    """preheader -> header (phis, iv < ub) -> body ... latch -> header | exit.
    The canonical shape LLVM's loop passes and vectorizer look for."""
    b = emitter.builder
    lower, upper, step = (emitter.values[v] for v in (op.lb, op.ub, op.step))
    initial = [emitter.values[v] for v in op.iter_args]
    preheader = b.block
    header = b.append_basic_block("for.header")
    body = b.append_basic_block("for.body")
    exit_ = b.append_basic_block("for.exit")
    b.branch(header)

    b.position_at_end(header)
    iv = b.phi(lower.type, "iv")
    carried = [b.phi(value.type) for value in initial]
    for phi, value in zip([iv, *carried], [lower, *initial]):
        phi.add_incoming(value, preheader)
    b.cbranch(b.icmp_signed("<", iv, upper), body, exit_)

    b.position_at_end(body)
    emitter.bind(op.body.block.args, [iv, *carried])
    yielded = emitter.translate_region(op.body)
    next_iv = b.add(iv, step)
    latch = b.block
    b.branch(header)
    for phi, value in zip([iv, *carried], [next_iv, *yielded]):
        phi.add_incoming(value, latch)

    b.position_at_end(exit_)
    return carried


def if_(emitter: FunctionEmitter, op: scf.IfOp) -> list[ir.Value]:
    b = emitter.builder
    then_block = b.append_basic_block("if.then")
    else_block = b.append_basic_block("if.else") if op.false_region.blocks else None
    merge = b.append_basic_block("if.end")
    b.cbranch(emitter.values[op.cond], then_block, else_block or merge)

    incoming: list[tuple[list[ir.Value], ir.Block]] = []
    for region, block in ((op.true_region, then_block), (op.false_region, else_block)):
        if block is None:
            continue
        b.position_at_end(block)
        values = emitter.translate_region(region)
        incoming.append((values, b.block))
        b.branch(merge)

    b.position_at_end(merge)
    results = []
    for i, result in enumerate(op.results):
        phi = b.phi(emitter.scalar_type(result.type))
        for values, block in incoming:
            phi.add_incoming(values[i], block)
        results.append(phi)
    return results


# func --------------------------------------------------------------------------------


def return_(emitter: FunctionEmitter, op: func.ReturnOp) -> None:
    values = emitter.operands(op)
    if values:
        emitter.builder.ret(*values)
    else:
        emitter.builder.ret_void()


def call(emitter: FunctionEmitter, op: func.CallOp) -> ir.Value | None:
    callee = op.callee.string_value()
    if callee not in emitter.functions:
        raise fail(f"'func.call' to @{callee}, which is not a function of this module")
    result = emitter.builder.call(emitter.functions[callee], emitter.operands(op))
    return result if op.results else None


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

HANDLERS: dict[type[Operation], Handler] = {
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
    memref.LoadOp: load,
    memref.StoreOp: store,
    memref.AllocaOp: alloca,
    scf.ForOp: for_,
    scf.IfOp: if_,
    func.ReturnOp: return_,
    func.CallOp: call,
}


# Module ---------------------------------------------------------------------------------


def add_function_attributes(function: ir.Function, func_op: func.FuncOp) -> None:
    """nounwind, and noalias on every pointer argument unless the kernel runs in place."""
    function.attributes.add("nounwind")
    # The contract: memref arguments never overlap (without noalias the vectorizer has
    # to version every loop with overlap checks), except in a kernel the memory planner
    # runs in place (tile.aliased): there an input and the output share memory.
    if "tile.aliased" not in func_op.attributes:
        for argument in function.args:
            if isinstance(argument.type, ir.PointerType):
                argument.add_attribute("noalias")


def declare_function(llvm_module: ir.Module, func_op: func.FuncOp) -> ir.Function:
    name = func_op.sym_name.data
    signature = func_op.function_type
    if len(signature.outputs) > 1:
        raise fail(f"@{name} returns {len(signature.outputs)} values; at most one is supported")
    result = scalar_type(signature.outputs.data[0]) if signature.outputs else ir.VoidType()
    arguments = [argument_type(t) for t in signature.inputs]
    function = ir.Function(llvm_module, ir.FunctionType(result, arguments), name)
    add_function_attributes(function, func_op)
    if func_op.sym_visibility is not None and func_op.sym_visibility.data == "private":
        function.linkage = "internal"
    return function


def translate_module(module: ModuleOp) -> ir.Module:
    """Translates a loops-level module into an llvmlite module with no target set
    (the JIT sets the host's triple and data layout)."""
    func_ops: list[func.FuncOp] = []
    for op in module.ops:
        if not isinstance(op, func.FuncOp):
            raise fail(f"unsupported op '{op.name}' at module level (only func.func)")
        if not op.body.blocks:
            raise fail(f"@{op.sym_name.data} has no body (external functions are not supported)")
        if len(op.body.blocks) > 1:
            raise fail(
                f"@{op.sym_name.data} has {len(op.body.blocks)} blocks; only one is supported"
            )
        func_ops.append(op)

    llvm_module = ir.Module(name="strata")
    # Declare every function first so that calls may refer to functions defined later.
    functions = {}
    for op in func_ops:
        try:
            functions[op.sym_name.data] = declare_function(llvm_module, op)
        except UnsupportedType as e:
            raise fail(f"@{op.sym_name.data}: {e}") from None
    for op in func_ops:
        FunctionEmitter(functions[op.sym_name.data], functions).translate_body(op)
    return llvm_module
