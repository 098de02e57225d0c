"""The gradient API, in the style of JAX: `value_and_grad(f)` and `grad(f)` return compiled
callables that give the loss and the gradients of a scalar loss function.

    def loss(x, w):                                  # a builder function on Tensors
        y = ops.relu(x @ w)
        return ops.reduce_mean(y * y, axes=(0, 1))

    value_and_grad = strata.value_and_grad(loss, argnums=1)
    value, dw = value_and_grad(x, w)                 # numpy arrays in, numpy arrays out
    dw = strata.grad(loss, argnums=1)(x, w)

`f` is either a Python function taking one `Tensor` per argument and returning a float
scalar Tensor (traced once per distinct argument shapes and dtypes, like `jax.jit`), or a
module (`ModuleOp` or `.mlir` text) whose entry function returns one float scalar.
Behind it is the `autodiff` pass (docs/autodiff.md): it adds `@f_grad`, whose results
are f's results and one gradient per floating-point argument; the callable compiles
`@f_grad` for `target` once and seeds the loss's cotangent with 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from strata.api import Executable, compile
from strata.dialects.context import as_module
from strata.dialects.graph_base import is_float
from strata.frontends.builder import Graph, Tensor
from strata.runtime.reference.interpreter import find_entry
from strata.support.dtypes import element_name, element_name_of_dtype, tensor_dtype
from strata.support.errors import BuildError, InputError
from strata.transforms.autodiff import differentiate

LossFunction = Callable[..., Tensor] | ModuleOp | str


@dataclass
class CompiledGradient:
    """@f_grad compiled, with where each requested gradient sits among its results."""

    executable: Executable
    loss_dtype: np.dtype
    gradient_results: tuple[int, ...]
    """Per requested argument, its result index in @f_grad."""


class ValueAndGrad:
    """`(loss, gradients)` of a scalar loss function; see the module docstring."""

    def __init__(self, fn: LossFunction, argnums: int | Sequence[int] = 0, entry: str | None = None, target: str = "cpu"):
        self.fn, self.entry, self.target = fn, entry, target
        self.single = isinstance(argnums, int)
        self.argnums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        if not self.argnums:
            raise BuildError("value_and_grad: argnums names no argument")
        self.compiled: dict[tuple, CompiledGradient] = {}

    def __call__(self, *args: object) -> tuple[np.ndarray, np.ndarray | tuple[np.ndarray, ...]]:
        arrays = [np.asarray(a) for a in args]
        key = tuple((a.shape, a.dtype.str) for a in arrays)
        if key not in self.compiled:
            self.compiled[key] = self.compile(self.module_for(arrays))
        compiled = self.compiled[key]
        results = compiled.executable(*arrays, np.ones((), compiled.loss_dtype))
        gradients = tuple(results[i] for i in compiled.gradient_results)
        return results[0], gradients[0] if self.single else gradients

    def module_for(self, arrays: list[np.ndarray]) -> ModuleOp:
        """The loss as a module: traced from a builder function, or the given module."""
        if isinstance(self.fn, ModuleOp | str):
            return as_module(self.fn).clone()
        graph = Graph(getattr(self.fn, "__name__", "loss").strip("<>") or "loss")
        inputs = [graph.input(f"arg{i}", a.shape, dtype_name(a, i)) for i, a in enumerate(arrays)]
        loss = self.fn(*inputs)
        if not isinstance(loss, Tensor):
            raise BuildError(f"value_and_grad: the loss function must return a Tensor, got {type(loss).__name__}")
        graph.output(loss)
        return graph.build()

    def compile(self, module: ModuleOp) -> CompiledGradient:
        forward = find_entry(module, self.entry)
        outputs = forward.function_type.outputs.data
        if len(outputs) != 1 or outputs[0].get_shape() or not is_float(outputs[0].element_type):
            raise BuildError(
                f"value_and_grad: @{forward.sym_name.data} must return one float scalar (the loss), "
                f"got ({', '.join(map(str, outputs))})"
            )
        positions = gradient_positions(forward, self.argnums)
        gradient = differentiate(module, forward.sym_name.data)
        executable = compile(module, target=self.target, entry=gradient.sym_name.data)
        return CompiledGradient(executable, tensor_dtype(outputs[0]), tuple(1 + p for p in positions))


def dtype_name(array: np.ndarray, index: int) -> str:
    name = element_name_of_dtype(array.dtype)
    if name is None:
        raise InputError(f"value_and_grad: argument {index} has unsupported dtype {array.dtype}")
    return name


def gradient_positions(forward: func.FuncOp, argnums: tuple[int, ...]) -> list[int]:
    """Where each argument's gradient sits among @f_grad's gradients (floats only)."""
    types = forward.function_type.inputs.data
    floats = [i for i, t in enumerate(types) if is_float(t.element_type)]
    positions = []
    for n in argnums:
        index = n + len(types) if n < 0 else n
        if not 0 <= index < len(types):
            raise BuildError(f"value_and_grad: argnums {n} is out of range for {len(types)} arguments")
        if index not in floats:
            raise BuildError(
                f"value_and_grad: argument {index} of @{forward.sym_name.data} is "
                f"{element_name(types[index].element_type)}, not a float: it has no gradient"
            )
        positions.append(floats.index(index))
    return positions


def value_and_grad(fn: LossFunction, argnums: int | Sequence[int] = 0, *, entry: str | None = None, target: str = "cpu") -> ValueAndGrad:
    """A callable returning `(loss, gradient)`, or `(loss, (gradients…))` when `argnums`
    is a sequence. The gradients have the arguments' shapes and dtypes."""
    return ValueAndGrad(fn, argnums, entry, target)


def grad(fn: LossFunction, argnums: int | Sequence[int] = 0, *, entry: str | None = None, target: str = "cpu") -> Callable[..., np.ndarray | tuple[np.ndarray, ...]]:
    """A callable returning the gradient(s) of the loss only (see `value_and_grad`)."""
    value_and_gradient = ValueAndGrad(fn, argnums, entry, target)

    def gradient(*args: object) -> np.ndarray | tuple[np.ndarray, ...]:
        return value_and_gradient(*args)[1]

    return gradient

