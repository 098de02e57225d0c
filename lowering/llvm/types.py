"""Strata's types as LLVM types (llvmlite), and the errors of the LLVM translation.

Memref arguments become bare pointers and `index` becomes i64; an i1 element takes a byte
in memory, like numpy's bool. Only static, row-major memrefs in the default memory space
can be addressed. f16 and bf16 math is computed in f32 (LOW_PRECISION).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from llvmlite import ir
from llvmlite.ir.types import _BaseFloatType
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    NoneAttr,
    Signedness,
)
from xdsl.ir import Attribute

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

I1, I8, I16, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(16), ir.IntType(64)
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
    """How an element is laid out in memory: i1 takes a byte, like numpy's bool; bf16 is
    moved as its i16 bits (x86 cannot legalize vector shuffles or gathers of bfloat, which
    the vectorizer makes of strided copies; loads and stores bitcast)."""
    type_ = scalar_type(element_type)
    if type_ == BFLOAT:
        return I16
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
