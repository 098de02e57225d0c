"""The numpy meaning of every vsla op (dialects/vsla.py), independent of its lowering to
graph ops: the oracle lower-vsla-to-graph is tested against.

Sums, products of the semirings and FFT temporaries are computed in f64 and rounded once
to the result's type. Convolution is numpy's direct one here whatever `method` says: the
methods differ in speed and rounding, not in meaning.
"""

from __future__ import annotations

import math

import numpy as np

from strata.dialects import vsla
from strata.dialects.opinfo import register_reference


def zero_extended(x: np.ndarray, shape) -> np.ndarray:
    """x padded with trailing zeros to `shape` (each extent at least x's)."""
    return np.pad(x, [(0, target - size) for size, target in zip(x.shape, shape)])


def ambient(op, lhs: np.ndarray, rhs: np.ndarray):
    shape = op.result.type.get_shape()
    return zero_extended(lhs.astype(np.float64), shape), zero_extended(rhs.astype(np.float64), shape)


@register_reference(vsla.AddOp)
def add(op, lhs, rhs):
    a, b = ambient(op, lhs, rhs)
    return a + b


@register_reference(vsla.SubOp)
def sub(op, lhs, rhs):
    a, b = ambient(op, lhs, rhs)
    return a - b


@register_reference(vsla.HadamardOp)
def hadamard(op, lhs, rhs):
    a, b = ambient(op, lhs, rhs)
    return a * b


@register_reference(vsla.ScaleOp)
def scale(op, x):
    return x.astype(np.float64) * op.params()["factor"]


@register_reference(vsla.ConvOp)
def conv(op, lhs, rhs):
    """Along the last axis, per leading (batch) index."""
    out = np.zeros(op.result.type.get_shape())
    if out.size:
        for index in np.ndindex(lhs.shape[:-1]):
            out[index] = np.convolve(lhs[index].astype(np.float64), rhs[index].astype(np.float64))
    return out


@register_reference(vsla.KronOp)
def kron(op, lhs, rhs):
    return np.kron(lhs.astype(np.float64), rhs.astype(np.float64))


@register_reference(vsla.StackOp)
def stack(op, *inputs):
    item = op.result.type.get_shape()[1:]
    return np.stack([zero_extended(x, item) for x in inputs])


@register_reference(vsla.WindowOp)
def window(op, x):
    count, size, *_ = op.result.type.get_shape()
    stride = op.params().get("stride", size)
    out = np.zeros(op.result.type.get_shape(), x.dtype)
    for i in range(count):
        out[i] = x[i * stride : i * stride + size]
    return out


@register_reference(vsla.SumOp)
def sum_(op, x):
    return np.sum(x, axis=op.params()["axis"], dtype=np.float64)


@register_reference(vsla.MeanOp)
def mean(op, x):
    axis = op.params()["axis"]
    if x.shape[axis] == 0:  # the mean of nothing: the zero element, not nan
        return np.zeros(np.delete(x.shape, axis % x.ndim))
    return np.mean(x, axis=axis, dtype=np.float64)


_erf = np.vectorize(math.erf, otypes=[np.float64])
UNARY = {
    vsla.ReluOp: lambda x: np.maximum(x, 0),
    vsla.ExpOp: np.exp,
    vsla.LogOp: np.log,
    vsla.TanhOp: np.tanh,
    vsla.SigmoidOp: lambda x: 0.5 * (1 + np.tanh(0.5 * x)),
    vsla.GeluOp: lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))),
}
for _op_type, _fn in UNARY.items():
    register_reference(_op_type)(lambda op, x, _fn=_fn: _fn(x.astype(np.float64)))
