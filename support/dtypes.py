"""Element types <-> numpy dtypes."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute

NUMPY_DTYPES: dict[str, np.dtype] = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "i1": np.dtype(np.bool_),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
}
"""The numpy dtype of each element type, by its MLIR name."""

_ELEMENT_TYPES: dict[str, Attribute] = {"f16": f16, "bf16": bf16, "f32": f32, "f64": f64, "i1": i1, "i32": i32, "i64": i64}
_ELEMENT_NAMES: dict[np.dtype, str] = {dtype: name for name, dtype in NUMPY_DTYPES.items()}

LOW_PRECISION = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))
"""Computed in float32 by the reference, rounded once per op."""


def element_name(element_type: Attribute) -> str:
    match element_type:
        case Float16Type():
            return "f16"
        case BFloat16Type():
            return "bf16"
        case Float32Type():
            return "f32"
        case Float64Type():
            return "f64"
        case IntegerType():
            return f"i{element_type.width.data}"
    raise ValueError(f"no numpy dtype for element type {element_type}")


def numpy_dtype(element_type: Attribute) -> np.dtype:
    return NUMPY_DTYPES[element_name(element_type)]


def element_name_of_dtype(dtype: np.dtype) -> str | None:
    """The element type name of a numpy dtype (None if Strata has no such element type)."""
    return _ELEMENT_NAMES.get(np.dtype(dtype))


def element_type_for(name: str) -> Attribute:
    """The xDSL element type spelled `name` (f32, i64, ...)."""
    if name not in _ELEMENT_TYPES:
        raise ValueError(f"unknown element type '{name}' (expected one of {', '.join(_ELEMENT_TYPES)})")
    return _ELEMENT_TYPES[name]


def tensor_dtype(t: TensorType) -> np.dtype:
    return numpy_dtype(t.element_type)


def describe(shape: tuple[int, ...], dtype: np.dtype) -> str:
    """An array's type in MLIR spelling, e.g. tensor<4x8xf32>."""
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{_ELEMENT_NAMES.get(np.dtype(dtype), str(dtype))}>"


def dense_to_numpy(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The array a dense elements attribute holds (its raw buffer, reinterpreted)."""
    dtype = numpy_dtype(attr.get_element_type())
    storage = np.uint8 if dtype == np.bool_ else dtype
    flat = np.frombuffer(attr.data.data, dtype=storage)
    if dtype == np.bool_:
        flat = flat != 0
    return flat.reshape(attr.get_shape()).copy()


def numpy_to_dense(array: np.ndarray, t: TensorType) -> DenseIntOrFPElementsAttr:
    """A dense elements attribute of type `t` holding `array` (converted to t's dtype)."""
    dtype = tensor_dtype(t)
    values = np.ascontiguousarray(np.broadcast_to(array, t.get_shape()).astype(dtype))
    if dtype == np.bool_:
        values = np.where(values, 0xFF, 0).astype(np.uint8)
    return DenseIntOrFPElementsAttr(t, BytesAttr(values.tobytes()))
