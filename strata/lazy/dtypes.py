"""Element types and shapes as the lazy API spells them.

Dtypes are Strata's element type names ("f32", "f64", "i64", ...); PyTorch-style
aliases (`strata.lazy.float32`) are those same strings, and numpy dtypes and names like
"float32" are accepted wherever a dtype is.
"""

from __future__ import annotations

import numpy as np

from strata.support.dtypes import NUMPY_DTYPES, element_name_of_dtype
from strata.support.errors import BuildError

float16, bfloat16, float32, float64 = "f16", "bf16", "f32", "f64"
int32, int64, bool_ = "i32", "i64", "i1"

DEFAULT_FLOAT = float32
"""The dtype of floating-point data given without one (PyTorch's default)."""


def dtype_name(dtype: object) -> str:
    """`dtype` as an element type name; a BuildError for anything else."""
    if isinstance(dtype, str) and dtype in NUMPY_DTYPES:
        return dtype
    try:
        name = element_name_of_dtype(np.dtype(dtype))
    except TypeError:
        name = None
    if name is None:
        raise BuildError(f"unknown dtype {dtype!r} (expected one of {', '.join(NUMPY_DTYPES)})")
    return name


def numpy_dtype_of(name: str) -> np.dtype:
    return NUMPY_DTYPES[name]


def dims_of(shape: tuple) -> tuple[int, ...]:
    """Sizes given as `f(2, 3)` or `f((2, 3))`, as ints."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in shape):
        raise BuildError(f"sizes must be ints, got {shape!r}")
    return tuple(int(d) for d in shape)


def array_of(data: object, dtype: object | None) -> np.ndarray:
    """`data` as a fresh array: Python floats become the default float dtype, Python ints
    i64, bools i1; an array keeps its dtype unless `dtype` says otherwise."""
    if dtype is not None:
        return np.array(data, dtype=numpy_dtype_of(dtype_name(dtype)))
    array = np.array(data)
    if array.dtype == np.float64 and not isinstance(data, np.ndarray):
        array = array.astype(numpy_dtype_of(DEFAULT_FLOAT))
    if element_name_of_dtype(array.dtype) is None:
        raise BuildError(f"tensor(): no Strata element type for data of dtype {array.dtype}")
    return array
