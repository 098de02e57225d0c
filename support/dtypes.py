"""Element types <-> numpy dtypes."""

from __future__ import annotations

import math

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

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
LOW_PRECISION = (np.dtype(np.float16), BFLOAT16)
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


def element_count(attr: DenseIntOrFPElementsAttr) -> int:
    """How many elements the attribute's type has (not how many it stores)."""
    return math.prod(attr.get_shape())


def is_compact_splat(attr: DenseIntOrFPElementsAttr) -> bool:
    """Whether `attr` is a splat stored compactly: one element's bytes for a type of more
    elements. xDSL expands a splat literal to every element (`dense<1.0> :
    tensor<50000000xf32>` is 200 MB of bytes, and gigabytes of Python floats on the way);
    Strata's parser (dialects/context.py) and `numpy_to_dense` keep it as one element, as
    MLIR does. xDSL prints such an attribute as the splat it is (`dense<1.0>`), and
    every Strata reader goes through `dense_to_numpy` / `splat_value`."""
    return len(attr.data.data) == attr.get_element_type().compile_time_size and element_count(attr) > 1


def compact_splat(t: Attribute, element_bytes: bytes) -> DenseIntOrFPElementsAttr:
    """The splat of type `t` (a shaped type) whose every element is `element_bytes`,
    stored once (see is_compact_splat)."""
    return DenseIntOrFPElementsAttr(t, BytesAttr(bytes(element_bytes)))


def splat_value(attr: DenseIntOrFPElementsAttr) -> np.ndarray | None:
    """The 0-d array every element of `attr` equals, if `attr` is stored as a compact
    splat (None otherwise: a stored splat is not searched for)."""
    if not is_compact_splat(attr):
        return None
    return _from_bytes(attr.data.data, numpy_dtype(attr.get_element_type())).reshape(())


def _from_bytes(data: bytes, dtype: np.dtype) -> np.ndarray:
    storage = np.uint8 if dtype == np.bool_ else dtype
    flat = np.frombuffer(data, dtype=storage)
    return flat != 0 if dtype == np.bool_ else flat


def dense_to_numpy(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The array a dense elements attribute holds (its raw buffer, reinterpreted; a compact
    splat filled out), as a fresh writable array."""
    dtype = numpy_dtype(attr.get_element_type())
    if (value := splat_value(attr)) is not None:
        return np.full(attr.get_shape(), value, dtype=dtype)
    return _from_bytes(attr.data.data, dtype).reshape(attr.get_shape()).copy()


def numpy_to_dense(array: np.ndarray, t: TensorType) -> DenseIntOrFPElementsAttr:
    """A dense elements attribute of type `t` holding `array` (converted to t's dtype); a
    splat (every element the same bits) is stored compactly (is_compact_splat)."""
    dtype = tensor_dtype(t)
    array = np.asarray(array)
    count = math.prod(t.get_shape())
    if array.size == 1 and count > 1:  # a broadcast scalar: never fill it out
        one = np.asarray(array.reshape(-1)[:1].astype(dtype))
        return compact_splat(t, _to_bytes(one))
    values = np.ascontiguousarray(np.broadcast_to(array, t.get_shape()).astype(dtype))
    data = _to_bytes(values)
    if count > 1:
        rows = np.frombuffer(data, dtype=np.uint8).reshape(count, -1)
        if (rows == rows[0]).all():
            return compact_splat(t, data[: rows.shape[1]])
    return DenseIntOrFPElementsAttr(t, BytesAttr(data))


def _to_bytes(values: np.ndarray) -> bytes:
    if values.dtype == np.bool_:
        values = np.where(values, 0xFF, 0).astype(np.uint8)
    return np.ascontiguousarray(values).tobytes()
