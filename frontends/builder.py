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

import math

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from strata.dialects import graph
from strata.dialects.graph_base import ShapeError, shape_of, tensor
from strata.support.errors import BuildError, IRError
from strata.dialects.context import verify
from strata.support.dtypes import element_name, element_name_of_dtype, element_type_for, numpy_to_dense


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

    def _lift(self, other: Tensor | float | int, op: str) -> Tensor:
        if isinstance(other, Tensor):
            return other
        if not isinstance(other, (int, float, np.number, np.bool_)):
            raise BuildError(
                f"{op}: an operand must be a strata.Tensor or a Python number, got "
                f"{type(other).__name__} {other!r} (with {self!r})"
            )
        return self.graph.constant(other, self.dtype)

    def __add__(self, other):
        return add(self, self._lift(other, "graph.add"))

    def __radd__(self, other):
        return add(self._lift(other, "graph.add"), self)

    def __sub__(self, other):
        return sub(self, self._lift(other, "graph.sub"))

    def __rsub__(self, other):
        return sub(self._lift(other, "graph.sub"), self)

    def __mul__(self, other):
        if isinstance(other, float) and self.dtype.startswith(("f", "bf")):
            return scale(self, other)
        return mul(self, self._lift(other, "graph.mul"))

    def __rmul__(self, other):
        return self.__mul__(other)

    def __truediv__(self, other):
        return div(self, self._lift(other, "graph.div"))

    def __rtruediv__(self, other):
        return div(self._lift(other, "graph.div"), self)

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

    def reshape(self, *shape: int | Sequence[int]) -> Tensor:
        """`x.reshape(8, 4)` or `x.reshape((8, 4))`; one size may be -1 (inferred)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return reshape(self, shape)

    def transpose(self, *permutation: int | Sequence[int]) -> Tensor:
        """`x.transpose(1, 0)` or `x.transpose((1, 0))`."""
        if len(permutation) == 1 and isinstance(permutation[0], (tuple, list)):
            permutation = tuple(permutation[0])
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
        self._module: ModuleOp | None = None

    def _argument(self, name: str, shape: Sequence[int], dtype: str, role: str) -> Tensor:
        self._check_open()
        what = f"{role} {name!r} of graph @{self.name}"
        if not isinstance(name, str):
            raise BuildError(f"{role} of graph @{self.name}: the name must be a string, got {name!r}")
        t = tensor(_shape(shape, what), _element_type(dtype, what))
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
        element_type = _element_type(dtype, "graph.constant")
        try:
            array = np.asarray(value)
            if array.dtype.kind not in "biuf" and element_name_of_dtype(array.dtype) is None:
                raise ValueError(f"the value must be numeric, got {array.dtype} {value!r}"[:200])
            attr = numpy_to_dense(array, tensor(array.shape, element_type))
        except (ValueError, TypeError, OverflowError) as e:
            raise BuildError(f"graph.constant: {e}") from None
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
        """A verified module holding this graph's function. Building again returns the
        same module."""
        if self._module is None:
            self._module = build_module(self)
        return self._module

    def _check_open(self) -> None:
        if self._function is not None:
            raise BuildError(f"graph @{self.name} is already built; start a new Graph")

    def _check_member(self, t: object, what: str) -> None:
        if not isinstance(t, Tensor) or t.graph is not self:
            raise BuildError(f"{what}: {t!r} is not a tensor of graph @{self.name}")


def build_module(*graphs: Graph) -> ModuleOp:
    """A verified module with one function per graph (a copy of a function already in
    a module, for a graph built before)."""
    for g in graphs:
        if not isinstance(g, Graph):
            raise BuildError(f"build_module: {g!r} is not a strata.Graph")
    functions = [g.build_function() for g in graphs]
    module = ModuleOp([f.clone() if f.parent is not None else f for f in functions])
    try:
        verify(module)
    except IRError as e:
        raise BuildError(f"build_module: {e}") from None
    return module


def apply(
    op_type: type[graph.GraphOp],
    operands: Sequence[Tensor],
    owner: Graph | None = None,
    result_type: TensorType | None = None,
    **params: object,
) -> Tensor:
    """Create `op_type` on `operands` in their graph, its result type inferred."""
    if owner is None:
        if not operands or not isinstance(operands[0], Tensor):
            first = operands[0] if operands else None
            raise BuildError(f"{op_type.name}: {first!r} is not a strata.Tensor")
        owner = operands[0].graph
    owner._check_open()
    for t in operands:
        owner._check_member(t, op_type.name)
    try:
        op = op_type.make([t.value for t in operands], result_type, **params)
    except (ShapeError, VerifyException, ValueError, TypeError, OverflowError) as e:
        types = ", ".join(str(t.type) for t in operands)
        message = " ".join(str(e).split())
        raise BuildError(f"{op_type.name}: {message} (operands: {types or 'none'})") from None
    owner.block.add_op(op)
    return Tensor(owner, op.results[0])


def _shape(shape: object, what: str) -> tuple[int, ...]:
    """`shape` as a tuple of non-negative ints; a BuildError naming `what` otherwise."""
    dims = _ints(shape, what, "shape")
    if any(d < 0 for d in dims):
        raise BuildError(f"{what}: shape must be non-negative ints, got {list(dims)!r}")
    return dims


def _element_type(dtype: object, what: str):
    try:
        return element_type_for(dtype)  # type: ignore[arg-type]
    except (ValueError, TypeError, KeyError) as e:
        raise BuildError(f"{what}: {e}") from None


def _number(value: object, op: str, name: str, kind: type = float):
    """`value` as a float (or int), or a BuildError naming the op and the parameter."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise BuildError(f"{op}: {name} must be a number, got {type(value).__name__} {value!r}")
    return kind(value)


def _ints(values: object, op: str, name: str) -> tuple[int, ...]:
    if isinstance(values, (int, np.integer)) and not isinstance(values, bool):
        values = (values,)
    try:
        items = tuple(values)  # type: ignore[arg-type]
    except TypeError:
        raise BuildError(f"{op}: {name} must be ints, got {values!r}") from None
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in items):
        raise BuildError(f"{op}: {name} must be ints, got {values!r}")
    return tuple(int(v) for v in items)


def _check_tensor(x: object, op: str) -> None:
    if not isinstance(x, Tensor):
        raise BuildError(f"{op}: {x!r} is not a strata.Tensor")


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
    return apply(graph.ScaleOp, [x], value=_number(value, "graph.scale", "value"))


def compare(lhs: Tensor, rhs: Tensor, predicate: str) -> Tensor:
    return apply(graph.CompareOp, [lhs, rhs], predicate=predicate)


def select(cond: Tensor, a: Tensor, b: Tensor) -> Tensor:
    return apply(graph.SelectOp, [cond, a, b])


def cast(x: Tensor, dtype: str) -> Tensor:
    _check_tensor(x, "graph.cast")
    return apply(graph.CastOp, [x], result_type=tensor(x.shape, _element_type(dtype, "graph.cast")))


def dropout(x: Tensor, p: float, seed: int, step: Tensor | None = None) -> Tensor:
    """x with elements dropped with probability p; `step` (a rank-0 i64 tensor, e.g. a
    step-counter input) re-keys the mask at run time (docs/dropout-rng.md)."""
    operands = [x] if step is None else [x, step]
    return apply(graph.DropoutOp, operands, p=_number(p, "graph.dropout", "p"), seed=_number(seed, "graph.dropout", "seed", int))


def _axes(axes: int | Sequence[int], op: str = "axes") -> tuple[int, ...]:
    return _ints(axes, op, "axes")


def reduce_sum(x: Tensor, axes: int | Sequence[int], keepdims: bool = False) -> Tensor:
    return apply(graph.ReduceSumOp, [x], axes=_axes(axes, graph.ReduceSumOp.name), keepdims=bool(keepdims))


def reduce_mean(x: Tensor, axes: int | Sequence[int], keepdims: bool = False) -> Tensor:
    return apply(graph.ReduceMeanOp, [x], axes=_axes(axes, graph.ReduceMeanOp.name), keepdims=bool(keepdims))


def reduce_max(x: Tensor, axes: int | Sequence[int], keepdims: bool = False) -> Tensor:
    return apply(graph.ReduceMaxOp, [x], axes=_axes(axes, graph.ReduceMaxOp.name), keepdims=bool(keepdims))


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
        alpha=_number(alpha, "graph.matmul", "alpha"),
    )


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    return apply(graph.SoftmaxOp, [x], axis=_number(axis, "graph.softmax", "axis", int))


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    return apply(graph.LogSoftmaxOp, [x], axis=_number(axis, "graph.log_softmax", "axis", int))


def layernorm(x: Tensor, gamma: Tensor, beta: Tensor, epsilon: float = 1e-5) -> Tensor:
    return apply(graph.LayerNormOp, [x, gamma, beta], epsilon=_number(epsilon, "graph.layernorm", "epsilon"))


def rmsnorm(x: Tensor, gamma: Tensor, epsilon: float = 1e-6) -> Tensor:
    return apply(graph.RmsNormOp, [x, gamma], epsilon=_number(epsilon, "graph.rmsnorm", "epsilon"))


def attention(q: Tensor, k: Tensor, v: Tensor, scale: float, causal: bool = False) -> Tensor:
    return apply(graph.AttentionOp, [q, k, v], scale=_number(scale, "graph.attention", "scale"), causal=bool(causal))


def embedding(table: Tensor, ids: Tensor, padding_idx: int | None = None) -> Tensor:
    """table[ids]; `padding_idx`: a row of the table that gets no gradient."""
    if padding_idx is None:
        return apply(graph.EmbeddingOp, [table, ids])
    return apply(graph.EmbeddingOp, [table, ids], padding_idx=_number(padding_idx, "graph.embedding", "padding_idx", int))


def cross_entropy(logits: Tensor, labels: Tensor) -> Tensor:
    return apply(graph.CrossEntropyOp, [logits, labels])


def reshape(x: Tensor, shape: Sequence[int]) -> Tensor:
    _check_tensor(x, "graph.reshape")
    dims = list(_ints(shape, "graph.reshape", "shape"))
    if dims.count(-1) == 1:  # one size inferred, as in numpy
        known = math.prod(d for d in dims if d != -1)
        count = math.prod(x.shape)
        if known == 0 or count % known:
            raise BuildError(f"graph.reshape: cannot infer the -1 in {dims} for {x.type}")
        dims[dims.index(-1)] = count // known
    dims_checked = _shape(dims, f"graph.reshape of {x.type}")
    return apply(graph.ReshapeOp, [x], result_type=tensor(dims_checked, x.type.element_type))


def broadcast_to(x: Tensor, shape: Sequence[int]) -> Tensor:
    _check_tensor(x, "graph.broadcast_to")
    dims = _shape(shape, f"graph.broadcast_to of {x.type}")
    return apply(graph.BroadcastToOp, [x], result_type=tensor(dims, x.type.element_type))


def transpose(x: Tensor, permutation: Sequence[int]) -> Tensor:
    return apply(graph.TransposeOp, [x], permutation=_ints(permutation, "graph.transpose", "permutation"))


def slice_(
    x: Tensor, starts: Sequence[int], limits: Sequence[int], steps: Sequence[int] | None = None
) -> Tensor:
    starts, limits = _ints(starts, "graph.slice", "starts"), _ints(limits, "graph.slice", "limits")
    steps = _ints(steps, "graph.slice", "steps") if steps is not None else (1,) * len(starts)
    return apply(graph.SliceOp, [x], starts=starts, limits=limits, steps=steps)


def concat(inputs: Sequence[Tensor], axis: int) -> Tensor:
    if isinstance(inputs, Tensor) or not isinstance(inputs, Sequence) or not inputs:
        raise BuildError("graph.concat: needs a non-empty list of tensors")
    return apply(graph.ConcatOp, list(inputs), axis=_number(axis, "graph.concat", "axis", int))
