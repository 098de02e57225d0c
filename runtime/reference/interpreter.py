"""The numpy reference interpreter: runs a `func.func` of graph ops op by op.

It is the oracle: slow, simple and exactly the semantics of docs/graph-dialect.md
(runtime/reference/kernels.py holds each op's meaning). Compiled targets are tested by comparing against it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue

from strata.dialects.opinfo import evaluate
from strata.support.errors import ExecutionError, InputError, IRError
from strata.support.locations import location_prefix
from strata.support.dtypes import describe, tensor_dtype


def find_entry(module: ModuleOp, entry: str | None = None) -> func.FuncOp:
    """The named function; by default the only one, else the first one."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if entry is None:
        if not functions:
            raise IRError("the module has no func.func to run")
        return functions[0]
    for f in functions:
        if f.sym_name.data == entry:
            return f
    known = ", ".join(f"@{f.sym_name.data}" for f in functions) or "none"
    raise IRError(f"no function @{entry} in the module (functions: {known})")


def argument_label(function: func.FuncOp, index: int) -> str:
    """'arg1' or 'arg1 (w)' when the argument carries graph.name."""
    label = f"arg{index}"
    attrs = function.arg_attrs.data[index].data if function.arg_attrs else {}
    if "graph.name" in attrs:
        label += f" ({attrs['graph.name'].data})"
    return label


@dataclass(frozen=True)
class InputSpecs:
    """What a function's arguments must be, derived once and checked on every call."""

    function: str
    types: tuple[TensorType, ...]
    shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[np.dtype, ...]
    labels: tuple[str, ...]

    @staticmethod
    def of(function: func.FuncOp) -> InputSpecs:
        types = tuple(function.function_type.inputs.data)
        return InputSpecs(
            function.sym_name.data,
            types,
            tuple(tuple(t.get_shape()) for t in types),
            tuple(tensor_dtype(t) for t in types),
            tuple(argument_label(function, i) for i in range(len(types))),
        )

    def check(self, args: Sequence[object], elsewhere: Sequence[bool] = ()) -> list[np.ndarray | None]:
        """The arguments as arrays; InputError naming the argument on a count, shape or
        dtype mismatch. Arguments marked in `elsewhere` (device arrays) are the caller's
        to check: None in their place."""
        if len(args) != len(self.types):
            raise InputError(f"@{self.function} takes {len(self.types)} arguments, got {len(args)}")
        arrays: list[np.ndarray | None] = []
        for i, arg in enumerate(args):
            if i < len(elsewhere) and elsewhere[i]:
                arrays.append(None)
                continue
            array = np.asarray(arg)
            if array.shape != self.shapes[i] or array.dtype != self.dtypes[i]:
                raise InputError(
                    f"@{self.function} {self.labels[i]}: expected {self.types[i]}, "
                    f"got an array of type {describe(array.shape, array.dtype)}"
                )
            arrays.append(array)
        return arrays


def check_inputs(function: func.FuncOp, args: Sequence[object]) -> list[np.ndarray]:
    """The arguments as arrays; InputError naming the argument on a count/shape/dtype mismatch."""
    return InputSpecs.of(function).check(args)


def run_block(block, operands: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
    """The values yielded by a region body (graph.fused) for these block arguments."""
    values: dict[SSAValue, np.ndarray] = dict(zip(block.args, operands))
    for op in block.ops:
        if op is block.last_op:
            return tuple(values[v] for v in op.operands)
        values.update(zip(op.results, evaluate(op, [values[v] for v in op.operands])))
    raise IRError("a region body has no terminator")


def run_function(module: ModuleOp, function: func.FuncOp, args: Sequence[object]):
    values: dict[SSAValue, np.ndarray] = dict(
        zip(function.body.block.args, check_inputs(function, args))
    )
    for op in function.body.block.ops:
        operands = [values[v] for v in op.operands]
        if isinstance(op, func.ReturnOp):
            return tuple(operands)
        if isinstance(op, func.CallOp):
            callee = find_entry(module, op.callee.string_value())
            results = run_function(module, callee, operands)
        else:
            try:
                results = evaluate(op, operands)
            except ExecutionError as e:
                raise ExecutionError(f"{location_prefix(op)}{e}") from None
        values.update(zip(op.results, results))
    raise IRError(f"@{function.sym_name.data} has no func.return")


def interpret(module: ModuleOp, *args: object, entry: str | None = None) -> tuple[np.ndarray, ...]:
    """Run `entry` on numpy arrays; a tuple with one array per function result."""
    return run_function(module, find_entry(module, entry), args)
