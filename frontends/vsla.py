"""The variable-shape algebra on `strata.Graph` tensors: builder functions for the vsla
dialect (dialects/vsla.py) and host helpers for minimal representatives.

    from strata import vsla
    g = strata.Graph("f")
    a, b = g.input("a", (3,)), g.input("b", (2,))
    g.output(vsla.add(a, b), vsla.conv(a, b), vsla.kron(a, b), vsla.stack([a, b]))
    strata.compile(g.build(), target="cpu")(np.array([1, 2, 3.]), np.array([4, 5.]))
    # [5, 7, 3], [4, 13, 22, 15], [4, 5, 8, 10, 12, 15], [[1, 2, 3], [4, 5, 0]]

Operands of one rank meet at their ambient shape (zero-extended), not by broadcasting;
docs/vsla.md has the semantics and a tensor pyramid.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.utils.exceptions import VerifyException

from strata.dialects import vsla
from strata.frontends.builder import BuildError, Tensor, apply
from strata.support.minimal import minimal_shape, shrink


def model_checked(op_type: type[vsla.VslaOp], operands: list[Tensor], **params: object) -> Tensor:
    """apply(), then the model-consistency rule, which looks past the operands to what
    produced them: a violation is a BuildError at the call, and the op is not kept."""
    result = apply(op_type, operands, **params)
    op = result.value.owner
    try:
        op.verify_()
    except VerifyException as e:
        op.detach()
        op.erase()
        raise BuildError(" ".join(str(e).split())) from None
    return result


def add(a: Tensor, b: Tensor) -> Tensor:
    """a + b at the ambient shape: [1, 2, 3] + [4, 5] = [5, 7, 3]."""
    return model_checked(vsla.AddOp, [a, b])


def sub(a: Tensor, b: Tensor) -> Tensor:
    return model_checked(vsla.SubOp, [a, b])


def hadamard(a: Tensor, b: Tensor) -> Tensor:
    """The element-wise product at the ambient shape."""
    return model_checked(vsla.HadamardOp, [a, b])


def scale(x: Tensor, factor: float) -> Tensor:
    return apply(vsla.ScaleOp, [x], factor=float(factor))


def conv(a: Tensor, b: Tensor, method: str = "auto") -> Tensor:
    """Model A: the full convolution of two vectors (length m + n - 1); `method` "direct",
    "fft" or "auto" (FFT from 512 elements of the shorter operand, the measured crossover)."""
    return model_checked(vsla.ConvOp, [a, b], method=str(method))


def kron(a: Tensor, b: Tensor) -> Tensor:
    """Model B: the Kronecker product of two vectors (length m·n); kron(a, b) != kron(b, a)."""
    return model_checked(vsla.KronOp, [a, b])


def stack(tensors: Sequence[Tensor]) -> Tensor:
    """k tensors of one rank along a new leading axis, at their ambient shape."""
    tensors = list(tensors)
    if not tensors:
        raise BuildError("vsla.stack: needs at least one tensor")
    return apply(vsla.StackOp, tensors)


def window(stream: Tensor, size: int, stride: int | None = None) -> Tensor:
    """The stream's leading axis in windows of `size` items starting every `stride` items
    (default `size`: side by side, [N // size, size, item...]; less: overlapping)."""
    if stride is None:
        return apply(vsla.WindowOp, [stream], size=int(size))
    return apply(vsla.WindowOp, [stream], size=int(size), stride=int(stride))


def sum(x: Tensor, axis: int = 0) -> Tensor:  # noqa: A001 - the algebra's name
    return apply(vsla.SumOp, [x], axis=int(axis))


def mean(x: Tensor, axis: int = 0) -> Tensor:
    return apply(vsla.MeanOp, [x], axis=int(axis))


def relu(x: Tensor) -> Tensor:
    return apply(vsla.ReluOp, [x])


def exp(x: Tensor) -> Tensor:
    return apply(vsla.ExpOp, [x])


def log(x: Tensor) -> Tensor:
    return apply(vsla.LogOp, [x])


def tanh(x: Tensor) -> Tensor:
    return apply(vsla.TanhOp, [x])


def sigmoid(x: Tensor) -> Tensor:
    return apply(vsla.SigmoidOp, [x])


def gelu(x: Tensor) -> Tensor:
    return apply(vsla.GeluOp, [x])


__all__ = [
    "add", "conv", "exp", "gelu", "hadamard", "kron", "log", "mean", "minimal_shape", "relu", "scale", "shrink",
    "sigmoid", "stack", "sub", "sum", "tanh", "window",
]  # fmt: skip
