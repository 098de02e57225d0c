"""Loops-level xDSL IR -> LLVM IR (llvmlite): the last step of Strata's CPU path.

The input is a `builtin.module` of `func.func`s whose bodies use only arith, math,
scf (for / if / yield), memref (load / store / alloca on static row-major memrefs),
vector (load / store / broadcast / fma, for register-blocked kernels) and func
(call / return). Memref arguments become bare `ptr noalias` arguments and
`index` becomes i64, so a kernel `(memref<N x f32>, ..., index) -> i32` is called
from C as `int32_t k(float *, ..., int64_t)`.

Translation is a visitor: `HANDLERS` (emitter.py) maps each op class to a small
function that emits LLVM instructions through an `ir.IRBuilder` and returns the op's
results; arith_math.py and memref_scf_func.py register them, most built from tables (op
class -> builder method, intrinsic or libm name). Anything outside the tables raises a
StrataError naming the op or type. types.py maps the types; this module declares the
functions and drives the translation of a module.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp

# arith_math, memref_scf_func and vector are imported for their registrations in HANDLERS.
from strata.lowering.llvm import arith_math, memref_scf_func, vector  # noqa: F401
from strata.lowering.llvm.emitter import FunctionEmitter
from strata.lowering.llvm.in_place import declare_general, emit_dispatch, in_place_candidates
from strata.lowering.llvm.parallel import add_parallel_entry
from strata.lowering.llvm.types import UnsupportedType, argument_type, fail, scalar_type


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


def check_constant_indices(func_op: func.FuncOp) -> None:
    """Memory safety before translation: a memref.load / memref.store of a static memref
    at a constant index outside its shape would touch memory past the buffer."""
    for op in func_op.walk():
        if not isinstance(op, (memref.LoadOp, memref.StoreOp)):
            continue
        memref_type = op.memref.type
        if not isinstance(memref_type, MemRefType):
            continue
        for axis, (index, size) in enumerate(zip(op.indices, memref_type.get_shape())):
            owner = index.owner
            if size < 0 or not isinstance(owner, arith.ConstantOp) or not isinstance(owner.value, IntegerAttr):
                continue
            value = owner.value.value.data
            if not 0 <= value < size:
                raise fail(
                    f"@{func_op.sym_name.data}: '{op.name}' at constant index {value} along axis {axis} "
                    f"of {memref_type} (valid 0..{size - 1}): out of bounds"
                )


def translate_module(module: ModuleOp, parallel_entries: bool = False) -> ir.Module:
    """Translates a loops-level module into an llvmlite module with no target set
    (the JIT sets the host's triple and data layout). With `parallel_entries`, every
    kernel (a function with `tile.grid`) also gets `<name>.parallel` (parallel.py)."""
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
        check_constant_indices(op)
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
        function = functions[op.sym_name.data]
        in_place = in_place_candidates(op)
        if in_place is None:
            FunctionEmitter(function, functions).translate_body(op)
        else:
            general = declare_general(llvm_module, function)
            FunctionEmitter(general, functions).translate_body(op)
            emit_dispatch(function, general, *in_place)
        if parallel_entries and "tile.grid" in op.attributes:
            add_parallel_entry(llvm_module, function)
    return llvm_module
