"""The builder API: construct graph programs from Python.

    import strata
    from strata import ops

    g = strata.Graph("mlp")
    x = g.input("x", (32, 512))                  # f32 unless dtype= says otherwise
    w = g.param("w", (512, 512))
    b = g.param("b", (512,))
    g.output(ops.relu(ops.matmul(x, w, transpose_b=True) + b))
    module = g.build()                           # a verified xDSL ModuleOp

Tensors support `+ - * / @`, unary `-`, `.T` (swap the last two axes), `.reshape`,
`.transpose`, slicing with `[a:b:c, ...]`, and Python scalars on either side of an
arithmetic operator. Every shape is inferred by the op's own rule (the verifier's); a
violation raises `strata.BuildError` naming the op and the operand types.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, Region, SSAValue

from strata.dialects import graph
from strata.dialects.graph_base import ShapeError, shape_of, tensor
from strata.support.errors import BuildError
from strata.dialects.context import verify
from strata.support.dtypes import element_name, element_type_for, numpy_to_dense


class Tensor:
    """A value of a Graph under construction."""

    def __init__(self, owner: Graph, value: SSAValue):
        self.graph = owner
        self.value = value

    @property
    def type(self) -> TensorType:
        assert isinstance(self.value.type, TensorType)
        return self.value.type

    @property
    def shape(self) -> tuple[int, ...]:
        return shape_of(self.type)

    @property
    def dtype(self) -> str:
        return element_name(self.type.element_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"Tensor({self.type})"

    def _lift(self, other: Tensor | float | int) -> Tensor:
        return other if isinstance(other, Tensor) else self.graph.constant(other, self.dtype)

    def __add__(self, other):
        return add(self, self._lift(other))

    def __radd__(self, other):
        return add(self._lift(other), self)

    def __sub__(self, other):
        return sub(self, self._lift(other))

    def __rsub__(self, other):
        return sub(self._lift(other), self)

    def __mul__(self, other):
        if isinstance(other, float) and self.dtype.startswith(("f", "bf")):
            return scale(self, other)
        return mul(self, self._lift(other))

    def __rmul__(self, other):
        return self.__mul__(other)

    def __truediv__(self, other):
        return div(self, self._lift(other))

    def __rtruediv__(self, other):
        return div(self._lift(other), self)

    def __matmul__(self, other: Tensor) -> Tensor:
        return matmul(self, other)

    def __neg__(self) -> Tensor:
        return neg(self)

    @property
    def T(self) -> Tensor:
        """The last two axes swapped."""
        permutation = list(range(self.ndim))
        permutation[-2:] = permutation[:-3:-1]
        return transpose(self, permutation)

    def reshape(self, *shape: int) -> Tensor:
        return reshape(self, shape)

    def transpose(self, *permutation: int) -> Tensor:
        return transpose(self, permutation)

    def __getitem__(self, index: slice | tuple[slice, ...]) -> Tensor:
        index = index if isinstance(index, tuple) else (index,)
        if len(index) > self.ndim or not all(isinstance(i, slice) for i in index):
            raise BuildError(f"graph.slice: index {index!r} must be at most {self.ndim} slices")
        bounds = [i.indices(d) for i, d in zip(index, self.shape)]
        bounds += [(0, d, 1) for d in self.shape[len(index) :]]
        starts, limits, steps = zip(*bounds) if bounds else ((), (), ())
        return slice_(self, starts, limits, steps)


class Graph:
    """One func.func under construction: inputs and params, ops, outputs."""

    def __init__(self, name: str = "main"):
        self.name = name
        self.block = Block()
        self.arg_attrs: list[DictionaryAttr] = []
        self.results: list[Tensor] | None = None
        self._function: func.FuncOp | None = None

    def _argument(self, name: str, shape: Sequence[int], dtype: str, role: str) -> Tensor:
        self._check_open()
        t = tensor(shape, element_type_for(dtype))
        arg = self.block.insert_arg(t, len(self.block.args))
        arg.name_hint = name if name.isidentifier() else None
        self.arg_attrs.append(
            DictionaryAttr({"graph.name": StringAttr(name), "graph.role": StringAttr(role)})
        )
        return Tensor(self, arg)

    def input(self, name: str, shape: Sequence[int], dtype: str = "f32") -> Tensor:
        """A runtime input (graph.role = "input")."""
        return self._argument(name, shape, dtype, "input")

    def param(self, name: str, shape: Sequence[int], dtype: str = "f32") -> Tensor:
        """A parameter (graph.role = "param"; planned into the params arena)."""
        return self._argument(name, shape, dtype, "param")

    def constant(self, value: object, dtype: str = "f32") -> Tensor:
        """A graph.constant of `value` (an array or scalar) with element type `dtype`."""
        array = np.asarray(value)
        attr = numpy_to_dense(array, tensor(array.shape, element_type_for(dtype)))
        return apply(graph.ConstantOp, [], self, value=attr)

    def output(self, *results: Tensor) -> None:
        self._check_open()
        for r in results:
            self._check_member(r, "output")
        self.results = list(results)

    def build_function(self) -> func.FuncOp:
        """The func.func (built once; the graph is closed afterwards)."""
        if self._function is None:
            if self.results is None:
                raise BuildError(f"graph @{self.name} has no outputs: call output() first")
            self.block.add_op(func.ReturnOp(*(r.value for r in self.results)))
            inputs = [a.type for a in self.block.args]
            outputs = [r.type for r in self.results]
            self._function = func.FuncOp(
                self.name,
                (inputs, outputs),
                Region(self.block),
                arg_attrs=ArrayAttr(self.arg_attrs),
            )
        return self._function

    def build(self) -> ModuleOp:
        """A verified module holding this graph's function."""
        return build_module(self)

    def _check_open(self) -> None:
        if self._function is not None:
            raise BuildError(f"graph @{self.name} is already built; start a new Graph")

    def _check_member(self, t: object, what: str) -> None:
        if not isinstance(t, Tensor) or t.graph is not self:
            raise BuildError(f"{what}: {t!r} is not a tensor of graph @{self.name}")


def build_module(*graphs: Graph) -> ModuleOp:
    """A verified module with one function per graph."""
    module = ModuleOp([g.build_function() for g in graphs])
    verify(module)
    return module


def apply(
    op_type: type[graph.GraphOp],
    operands: Sequence[Tensor],
    owner: Graph | None = None,
    result_type: TensorType | None = None,
    **params: object,
) -> Tensor:
    """Create `op_type` on `operands` in their graph, its result type inferred."""
    owner = owner or operands[0].graph
    owner._check_open()
    for t in operands:
        owner._check_member(t, op_type.name)
    try:
        op = op_type.make([t.value for t in operands], result_type, **params)
    except ShapeError as e:
        types = ", ".join(str(t.type) for t in operands)
        raise BuildError(f"{op_type.name}: {e} (operands: {types or 'none'})") from None
    owner.block.add_op(op)
    return Tensor(owner, op.results[0])


def _unary(op_type: type[graph.GraphOp]):
    def build(x: Tensor) -> Tensor:
        return apply(op_type, [x])

    build.__doc__ = f"{op_type.name}: {(op_type.__doc__ or '').splitlines()[0]}"
    return build


def _binary(op_type: type[graph.GraphOp]):
    def build(lhs: Tensor, rhs: Tensor) -> Tensor:
        return apply(op_type, [lhs, rhs])

    build.__doc__ = f"{op_type.name}: {(op_type.__doc__ or '').splitlines()[0]}"
    return build


neg = _unary(graph.NegOp)
abs = _unary(graph.AbsOp)  # noqa: A001 - the op's name
exp = _unary(graph.ExpOp)
log = _unary(graph.LogOp)
sqrt = _unary(graph.SqrtOp)
rsqrt = _unary(graph.RsqrtOp)
tanh = _unary(graph.TanhOp)
sigmoid = _unary(graph.SigmoidOp)
relu = _unary(graph.ReluOp)
silu = _unary(graph.SiluOp)
erf = _unary(graph.ErfOp)
add = _binary(graph.AddOp)
sub = _binary(graph.SubOp)
mul = _binary(graph.MulOp)
div = _binary(graph.DivOp)
maximum = _binary(graph.MaximumOp)
minimum = _binary(graph.MinimumOp)
pow = _binary(graph.PowOp)  # noqa: A001 - the op's name


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    return apply(graph.GeluOp, [x], approximate=approximate)


def scale(x: Tensor, value: float) -> Tensor:
    return apply(graph.ScaleOp, [x], value=float(value))


def compare(lhs: Tensor, rhs: Tensor, predicate: str) -> Tensor:
    return apply(graph.CompareOp, [lhs, rhs], predicate=predicate)


def select(cond: Tensor, a: Tensor, b: Tensor) -> Tensor:
    return apply(graph.SelectOp, [cond, a, b])


def cast(x: Tensor, dtype: str) -> Tensor:
    return apply(graph.CastOp, [x], result_type=tensor(x.shape, element_type_for(dtype)))


def dropout(x: Tensor, p: float, seed: int) -> Tensor:
    return apply(graph.DropoutOp, [x], p=float(p), seed=int(seed))


def _axes(axes: int | Sequence[int]) -> tuple[int, ...]:
    return (axes,) if isinstance(axes, int) else tuple(axes)


def reduce_sum(x: Tensor, axes: int | Sequence[int], keepdims: bool = False) -> Tensor:
    return apply(graph.ReduceSumOp, [x], axes=_axes(axes), keepdims=keepdims)


def reduce_mean(x: Tensor, axes: int | Sequence[int], keepdims: bool = False) -> Tensor:
    return apply(graph.ReduceMeanOp, [x], axes=_axes(axes), keepdims=keepdims)


def reduce_max(x: Tensor, axes: int | Sequence[int], keepdims: bool = False) -> Tensor:
    return apply(graph.ReduceMaxOp, [x], axes=_axes(axes), keepdims=keepdims)


def matmul(
    a: Tensor,
    b: Tensor,
    transpose_a: bool = False,
    transpose_b: bool = False,
    alpha: float = 1.0,
) -> Tensor:
    return apply(
        graph.MatmulOp,
        [a, b],
        transpose_a=transpose_a,
        transpose_b=transpose_b,
        alpha=float(alpha),
    )


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    return apply(graph.SoftmaxOp, [x], axis=axis)


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    return apply(graph.LogSoftmaxOp, [x], axis=axis)


def layernorm(x: Tensor, gamma: Tensor, beta: Tensor, epsilon: float = 1e-5) -> Tensor:
    return apply(graph.LayerNormOp, [x, gamma, beta], epsilon=float(epsilon))


def rmsnorm(x: Tensor, gamma: Tensor, epsilon: float = 1e-6) -> Tensor:
    return apply(graph.RmsNormOp, [x, gamma], epsilon=float(epsilon))


def attention(q: Tensor, k: Tensor, v: Tensor, scale: float, causal: bool = False) -> Tensor:
    return apply(graph.AttentionOp, [q, k, v], scale=float(scale), causal=causal)


def embedding(table: Tensor, ids: Tensor) -> Tensor:
    return apply(graph.EmbeddingOp, [table, ids])


def cross_entropy(logits: Tensor, labels: Tensor) -> Tensor:
    return apply(graph.CrossEntropyOp, [logits, labels])


def reshape(x: Tensor, shape: Sequence[int]) -> Tensor:
    return apply(graph.ReshapeOp, [x], result_type=tensor(shape, x.type.element_type))


def broadcast_to(x: Tensor, shape: Sequence[int]) -> Tensor:
    return apply(graph.BroadcastToOp, [x], result_type=tensor(shape, x.type.element_type))


def transpose(x: Tensor, permutation: Sequence[int]) -> Tensor:
    return apply(graph.TransposeOp, [x], permutation=tuple(permutation))


def slice_(
    x: Tensor, starts: Sequence[int], limits: Sequence[int], steps: Sequence[int] | None = None
) -> Tensor:
    steps = tuple(steps) if steps is not None else (1,) * len(starts)
    return apply(graph.SliceOp, [x], starts=tuple(starts), limits=tuple(limits), steps=steps)


def concat(inputs: Sequence[Tensor], axis: int) -> Tensor:
    if not inputs:
        raise BuildError("graph.concat: needs at least one input")
    return apply(graph.ConcatOp, list(inputs), axis=axis)
