"""`strata.vsla`: the variable-shape algebra's builder functions (frontends/vsla.py) and
`compile`, which runs one compiled program on any logical shapes within capacities.

    prog = strata.vsla.compile(lambda a, b: vsla.conv(a, b), capacities=[(1024,), (1024,)])
    (y,) = prog(np.ones(300), np.ones(17))       # y.shape == (316,), no recompilation
    (y,) = prog(np.ones(1000), np.ones(900))     # the same program, arenas and buffers

The program is compiled once at the capacity shapes (lower-vsla-to-graph{capacity=true}).
A call checks each argument against its capacity, writes it into its bound input buffer
with the slack zeroed (so the slack of the caller's data is never read: a tensor and its
zero extension are the same element of the algebra), fills the inputs that carry the
call's logical shapes (masks, the Kronecker gather index, mean divisors; see
transforms/vsla_to_graph.py), runs, and returns each result as a view of its logical part.
Logical shapes come from the vsla ops' own shape rules, evaluated on the host per call.
Nothing is recompiled or re-planned per call, and the input and runtime-input buffers are
bound at compile time and filled in place; the results arrive, as every compiled
program's do, in the runtime's results arena of that call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import func

from strata.api import compile as compile_module
from strata.dialects import vsla as dialect
from strata.dialects.graph_base import shape_of, tensor
from strata.frontends.builder import Graph, Tensor
from strata.frontends.vsla import *  # noqa: F403 - the builder functions are this module's API
from strata.frontends.vsla import __all__ as builder_functions
from strata.support.dtypes import tensor_dtype
from strata.support.errors import BuildError, InputError
from strata.targets.passes import run_pipeline
from strata.transforms.vsla_to_graph import RUNTIME_INPUTS


class CapacityProgram:
    """A vsla program compiled for capacities (see the module docstring)."""

    def __init__(self, fn: Callable[..., Tensor | tuple[Tensor, ...]], capacities: Sequence[Sequence[int]],
                 dtype: str, target: str):
        graph = Graph(getattr(fn, "__name__", "f").strip("<>") or "f")
        self.capacities = [tuple(int(d) for d in c) for c in capacities]
        inputs = [graph.input(f"x{i}", c, dtype) for i, c in enumerate(self.capacities)]
        outputs = fn(*inputs)
        graph.output(*(outputs if isinstance(outputs, tuple) else (outputs,)))
        module = graph.build()
        function = module.body.block.first_op
        self.ops = [op for op in function.body.block.ops if not isinstance(op, func.ReturnOp)]
        foreign = [op.name for op in self.ops if not isinstance(op, dialect.VslaOp)]
        if foreign:
            raise BuildError(f"vsla.compile: a capacity program holds vsla ops only, not {', '.join(sorted(set(foreign)))}")
        self.arguments = list(function.body.block.args)
        self.results = list(function.body.block.last_op.operands)
        self.element = self.arguments[0].type.element_type if self.arguments else None
        lowered = module.clone()
        run_pipeline(lowered, "lower-vsla-to-graph{capacity=true}")
        lowered_function = lowered.body.block.first_op
        descriptions = lowered_function.attributes.get(RUNTIME_INPUTS)
        self.runtime_inputs = [d.data.split(":") for d in descriptions.data] if descriptions else []
        extra_types = [a.type for a in lowered_function.body.block.args[len(self.arguments):]]
        self.buffers = [np.zeros(c, tensor_dtype(a.type)) for c, a in zip(self.capacities, self.arguments)]
        self.extras = [np.zeros(shape_of(t), tensor_dtype(t)) for t in extra_types]
        largest = max((e.size for (kind, _), e in zip(self.runtime_inputs, self.extras) if kind == "kron_index"), default=0)
        self.positions, self.scratch = np.arange(largest, dtype=np.int64), np.zeros(largest, np.int64)
        """0, 1, 2, ... and room for the Kronecker gather indices: computed in place per call."""
        self.executable = compile_module(lowered, target=target)

    def logical_shapes(self, shapes: Sequence[tuple[int, ...]]) -> dict:
        """The logical shape of every value for these argument shapes (the ops' shape rules)."""
        known = dict(zip(self.arguments, shapes))
        for op in self.ops:
            types = [tensor(known[v], self.element) for v in op.operands]
            known[op.results[0]] = shape_of(type(op).infer_result_type(types, **op.params()))
        return known

    def fill_runtime_inputs(self, known: dict) -> None:
        for (kind, index), extra in zip(self.runtime_inputs, self.extras):
            op = self.ops[int(index)]
            if kind == "mask":
                extra[...] = False
                extra[tuple(slice(0, d) for d in known[op.results[0]])] = True
            elif kind == "inverse_count":
                extent = known[op.x][op.params()["axis"] % len(known[op.x])]
                extra[...] = 1.0 / extent if extent else 0.0
            else:  # kron_index: element i·n + j of the product is i·N + j of the outer product
                (m,), (n,) = known[op.lhs], known[op.rhs]
                extra[...] = extra.size  # the zero past the outer product's end
                if m * n:
                    target, positions, column = extra[: m * n], self.positions[: m * n], self.scratch[: m * n]
                    np.floor_divide(positions, n, out=target)
                    target *= shape_of(op.rhs.type)[0]
                    np.remainder(positions, n, out=column)
                    target += column

    def __call__(self, *arrays: object) -> tuple[np.ndarray, ...]:
        if len(arrays) != len(self.buffers):
            raise InputError(f"vsla program: expected {len(self.buffers)} arguments, got {len(arrays)}")
        shapes = []
        for i, (array, buffer) in enumerate(zip(arrays, self.buffers)):
            array = np.asarray(array)
            if array.ndim != buffer.ndim or any(d > c for d, c in zip(array.shape, buffer.shape)):
                raise InputError(f"vsla program: argument {i} has shape {list(array.shape)}, outside its "
                                 f"capacity {list(buffer.shape)}")
            buffer[...] = 0
            buffer[tuple(slice(0, d) for d in array.shape)] = array
            shapes.append(array.shape)
        known = self.logical_shapes(shapes)
        self.fill_runtime_inputs(known)
        outputs = self.executable(*self.buffers, *self.extras)
        return tuple(out[tuple(slice(0, d) for d in known[v])] for out, v in zip(outputs, self.results))


def compile(fn: Callable[..., Tensor | tuple[Tensor, ...]], capacities: Sequence[Sequence[int]],  # noqa: A001
            dtype: str = "f32", target: str = "cpu") -> CapacityProgram:
    """fn(*tensors) built on inputs of the capacity shapes, compiled once for `target`;
    the result runs on any argument shapes within the capacities (module docstring)."""
    return CapacityProgram(fn, capacities, dtype, target)


__all__ = [*builder_functions, "CapacityProgram", "compile"]
