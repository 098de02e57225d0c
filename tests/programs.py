"""Small MLIR programs shared by the CPU and GPU backend tests."""

from __future__ import annotations

import numpy as np

from strata.support.dtypes import NUMPY_DTYPES


def ttype(shape, dtype: str) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{dtype}>"


def single_op(op: str, operands, result, props: str = "") -> str:
    """A module whose @main applies one graph op to its arguments."""
    args = ", ".join(f"%a{i}: {ttype(s, d)}" for i, (s, d) in enumerate(operands))
    names = ", ".join(f"%a{i}" for i in range(len(operands)))
    in_types = ", ".join(ttype(s, d) for s, d in operands)
    out = ttype(*result)
    props = f" <{{{props}}}>" if props else ""
    return (
        f"func.func @main({args}) -> {out} {{\n"
        f'  %0 = "{op}"({names}){props} : ({in_types}) -> {out}\n'
        f"  func.return %0 : {out}\n}}\n"
    )


def random_array(rng, shape, dtype: str) -> np.ndarray:
    """Random inputs of a tensor type: normal floats, small signed integers, fair booleans."""
    np_dtype = NUMPY_DTYPES[dtype]
    if dtype == "i1":
        return rng.random(shape) < 0.5
    if dtype.startswith("i"):
        return rng.integers(-50, 50, size=shape).astype(np_dtype)
    return rng.standard_normal(shape).astype(np_dtype)
