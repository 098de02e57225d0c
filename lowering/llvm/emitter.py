"""The per-function emitter of the LLVM translation: `FunctionEmitter` translates one
func.func body through an `ir.IRBuilder`, looking each op up in `HANDLERS`.

`HANDLERS` maps each op class to a small function that emits LLVM instructions and
returns the op's results. arith_math.py (arith, math) and memref_scf_func.py (memref,
scf, func) fill it when imported; translate.py imports both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import reduce
from math import prod

from llvmlite import ir
from xdsl.dialects import func, scf
from xdsl.ir import Attribute, Operation, Region, SSAValue

from strata.lowering.llvm.types import (
    BFLOAT,
    DOUBLE,
    FLOAT,
    I16,
    I64,
    LOW_PRECISION,
    UnsupportedType,
    fail,
    memory_type,
    scalar_type,
    static_shape,
)

Results = ir.Value | Sequence[ir.Value] | None
Handler = Callable[["FunctionEmitter", Operation], Results]

HANDLERS: dict[type[Operation], Handler] = {}
"""Op class -> handler; filled by arith_math.py and memref_scf_func.py."""


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
        widened = [self.widen(arg, FLOAT) for arg in args]
        return self.builder.fptrunc(compute(FLOAT, widened), result_type)

    def widen(self, value: ir.Value, target: ir.Type) -> ir.Value:
        """`value` (a float) as the wider float type `target`. A bfloat is widened by its
        bits (its 16 bits are a float's upper half: exact), not by fpext: from fpext
        operands LLVM's instcombine narrows an f32 multiply whose product is rounded back
        to bfloat into a bfloat multiply (exact by its double-rounding rule), and x86's
        code generator cannot legalize such a <4 x bfloat> fmul, even with AVX-512 BF16
        (an assertion in LegalizeDAG aborted the process: bf16 add, relu, scale and a
        transpose of [5, 1, 4, 16], from the fuzzer)."""
        if value.type != BFLOAT:
            return self.builder.fpext(value, target)
        bits = self.builder.zext(self.builder.bitcast(value, I16), ir.IntType(32))
        single = self.builder.bitcast(self.builder.shl(bits, ir.Constant(ir.IntType(32), 16)), FLOAT)
        return single if target == FLOAT else self.builder.fpext(single, target)

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
