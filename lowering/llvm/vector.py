"""vector ops -> LLVM vector instructions, registered in `HANDLERS`: the few that
register-blocked kernels use (tile.mma's CPU micro-kernel and its packing,
lowering/tile_to_loops/register_blocked.py).

    vector.load %m[%i] : memref<N x f32>, vector<16xf32>      load <16 x float>, align 4
    vector.store %v, %m[%i]                                   store <16 x float>, align 4
    vector.broadcast %s : f32 to vector<16xf32>               insertelement + shufflevector
    vector.fma %a, %b, %c : vector<16xf32>                    @llvm.fma.v16f32
    vector.shuffle %a, %b [0, 16, ...]                        shufflevector (1-D operands)

Loads and stores are unaligned (element alignment): the kernels address tiles at any
element offset. A function using vectors wider than 256 bits is marked
`"min-legal-vector-width"`, so that the x86 backend keeps them in 512-bit registers
instead of splitting them in two (the host CPU's tuning prefers 256-bit vectors for
code the vectorizers make; an explicit 512-bit vector is a deliberate choice).
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import vector
from xdsl.dialects.builtin import VectorType

from strata.lowering.llvm.emitter import HANDLERS, FunctionEmitter
from strata.lowering.llvm.types import I64, UnsupportedType, scalar_type


class WideVectorAttributes(ir.values.FunctionAttributes):
    """llvmlite's function attributes plus LLVM's string attribute that makes 512-bit
    vector types legal in a function (llvmlite only knows enum attributes)."""

    MIN_LEGAL_WIDTH = '"min-legal-vector-width"="512"'
    _known = ir.values.FunctionAttributes._known | {MIN_LEGAL_WIDTH}


def vector_type(emitter: FunctionEmitter, type_: VectorType) -> ir.VectorType:
    shape = type_.get_shape()
    if len(shape) != 1 or type_.get_num_scalable_dims():
        raise UnsupportedType(f"unsupported vector type {type_} (only fixed 1-D vectors)")
    element = scalar_type(type_.element_type)
    if not isinstance(element, ir.FloatType | ir.DoubleType):
        raise UnsupportedType(f"unsupported vector element type {type_.element_type} (f32 or f64)")
    if shape[0] * (32 if isinstance(element, ir.FloatType) else 64) > 256:
        mark_wide(emitter.function)
    return ir.VectorType(element, shape[0])


def mark_wide(function: ir.Function) -> None:
    if not isinstance(function.attributes, WideVectorAttributes):
        wide = WideVectorAttributes(function.attributes)
        function.attributes = wide
    function.attributes.add(WideVectorAttributes.MIN_LEGAL_WIDTH)


def load(emitter: FunctionEmitter, op: vector.LoadOp) -> ir.Value:
    pointer = emitter.element_pointer(op.base, op.indices)
    return emitter.builder.load(pointer, typ=vector_type(emitter, op.result.type), align=element_bytes(op.result.type))


def store(emitter: FunctionEmitter, op: vector.StoreOp) -> None:
    vector_type(emitter, op.vector.type)
    value = emitter.values[op.vector]
    pointer = emitter.builder.bitcast(emitter.element_pointer(op.base, op.indices), value.type.as_pointer())
    emitter.builder.store(value, pointer, align=element_bytes(op.vector.type))


def broadcast(emitter: FunctionEmitter, op: vector.BroadcastOp) -> ir.Value:
    type_ = vector_type(emitter, op.vector.type)
    b = emitter.builder
    first = b.insert_element(ir.Constant(type_, ir.Undefined), emitter.values[op.source], ir.Constant(I64, 0))
    zeros = ir.Constant(ir.VectorType(ir.IntType(32), type_.count), [0] * type_.count)
    return b.shuffle_vector(first, ir.Constant(type_, ir.Undefined), zeros)


def fma(emitter: FunctionEmitter, op: vector.FMAOp) -> ir.Value:
    type_ = vector_type(emitter, op.res.type)
    # llvmlite names intrinsics of scalar types only: spell the vector suffix here.
    name = f"llvm.fma.v{type_.count}{type_.element.intrinsic_name}"
    module = emitter.module
    intrinsic = module.globals.get(name) or ir.Function(module, ir.FunctionType(type_, [type_] * 3), name)
    return emitter.builder.call(intrinsic, emitter.operands(op))


def shuffle(emitter: FunctionEmitter, op: vector.ShuffleOp) -> ir.Value:
    vector_type(emitter, op.result.type)
    mask = op.mask.get_values()
    indices = ir.Constant(ir.VectorType(ir.IntType(32), len(mask)), list(mask))
    first, second = emitter.operands(op)
    return emitter.builder.shuffle_vector(first, second, indices)


def element_bytes(type_: VectorType) -> int:
    return type_.element_type.bitwidth // 8


HANDLERS.update({
    vector.LoadOp: load,
    vector.StoreOp: store,
    vector.BroadcastOp: broadcast,
    vector.FMAOp: fma,
    vector.ShuffleOp: shuffle,
})
