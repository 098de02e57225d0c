"""A whole training step — forward, backward, optimizer update — as one graph program.

    def loss(g):                       # builds the model on a strata.Graph
        x, y = g.input("x", (64, 16)), g.input("y", (64,), "i64")
        w = g.param("w", (4, 16))
        return ops.cross_entropy(ops.matmul(x, w, transpose_b=True), y)

    trainer = strata.Trainer(loss, strata.Adam(lr=1e-2), init={"w": w0})
    for step in range(300):
        print(trainer.step(x=batch_x, y=batch_y))      # the loss; parameters updated

The loss may also be a module whose first function returns the scalar loss, its
`graph.role = "param"` arguments the parameters (a `strata.dsl` model with a loss, say).
Dropouts in the loss take the step as their `step` (add-dropout-step): each step draws
fresh masks, reproducibly, and the backward pass recomputes the forward's.

The step function is ordinary graph IR: the loss function, differentiated by `autodiff`,
is inlined into `@train_step(params…, optimizer state…, hyper-parameters, inputs…)`, which
returns `(loss, new params…, new state…)` computed by graph ops (the optimizer update is
elementwise, so fuse-elementwise folds it into one kernel per parameter). It compiles for
any target. `Trainer` owns the parameter and state arrays and copies each step's results
back into them, so the caller's arrays are updated in place.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, UnitAttr
from xdsl.ir import Block, SSAValue

from strata.api import compile
from strata.dialects.graph_base import is_float
from strata.frontends import builder as ops
from strata.frontends.builder import Graph, Tensor, build_module
from strata.support.dtypes import element_name, tensor_dtype
from strata.support.errors import BuildError
from strata.transforms.autodiff import differentiate
from strata.transforms.dropout_step import STEP_ARGUMENT, add_dropout_step


@dataclass(frozen=True)
class SGD:
    """p ← p − lr·v with v ← momentum·v + g (plain SGD when momentum is 0)."""

    lr: float = 0.1
    momentum: float = 0.9

    state_names = ("velocity",)

    def hyper_parameters(self, step: int) -> dict[str, float]:
        return {"lr": self.lr}

    def update(self, p: Tensor, g: Tensor, state: Sequence[Tensor], hyper: dict[str, Tensor]):
        (velocity,) = state
        velocity = ops.scale(velocity, self.momentum) + g
        return p - hyper["lr"] * velocity, [velocity]


@dataclass(frozen=True)
class Adam:
    """Adam (Kingma & Ba): bias correction folded into the step size, passed per step."""

    lr: float = 1e-3
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8

    state_names = ("m", "v")

    def hyper_parameters(self, step: int) -> dict[str, float]:
        correction = math.sqrt(1 - self.beta2**step) / (1 - self.beta1**step)
        return {"lr": self.lr * correction}

    def update(self, p: Tensor, g: Tensor, state: Sequence[Tensor], hyper: dict[str, Tensor]):
        m, v = state
        m = ops.scale(m, self.beta1) + ops.scale(g, 1 - self.beta1)
        v = ops.scale(v, self.beta2) + ops.scale(g * g, 1 - self.beta2)
        return p - hyper["lr"] * m / (ops.sqrt(v) + self.eps), [m, v]


def inline(block: Block, callee: func.FuncOp, arguments: Sequence[SSAValue]) -> list[SSAValue]:
    """Clone `callee`'s body into `block` on `arguments`; its returned values."""
    mapping: dict[SSAValue, SSAValue] = dict(zip(callee.body.block.args, arguments))
    for op in callee.body.block.ops:
        if isinstance(op, func.ReturnOp):
            return [mapping[v] for v in op.arguments]
        clone = op.clone(value_mapper=mapping)
        block.add_op(clone)
        mapping.update(zip(op.results, clone.results))
    raise BuildError(f"@{callee.sym_name.data} has no func.return")


def build_train_step(build_loss: Callable[[Graph], Tensor] | ModuleOp, optimizer: SGD | Adam) -> tuple[ModuleOp, list[str], list[str]]:
    """The module holding @train_step, its parameter names and its input names. The loss is
    a builder function, or a module whose first function returns the float scalar loss
    (its `graph.role = "param"` arguments are trained), such as a `strata.dsl` model."""
    module = _loss_module(build_loss)
    forward = module.body.block.first_op
    stepped = add_dropout_step(forward) is not None  # fresh dropout masks every step (Trainer feeds the counter)
    (loss_type,) = forward.function_type.outputs.data
    arguments = list(forward.body.block.args)
    attrs = forward.arg_attrs.data
    gradient = differentiate(module, forward.sym_name.data)
    roles = [a.data["graph.role"].data for a in attrs]
    names = [a.data["graph.name"].data for a in attrs]
    params = [i for i, r in enumerate(roles) if r == "param"]
    inputs = [i for i, r in enumerate(roles) if r != "param"]
    if not params:
        raise BuildError("the loss has no g.param(...) to train")

    step = Graph("train_step")
    values: dict[int, Tensor] = {}
    for i in params:
        values[i] = step.param(names[i], arguments[i].type.get_shape(), _dtype(arguments[i].type))
    state = {
        i: [step.param(f"{names[i]}.{s}", arguments[i].type.get_shape(), _dtype(arguments[i].type)) for s in optimizer.state_names]
        for i in params
    }  # fmt: skip
    precision = _dtype(arguments[params[0]].type)
    hyper = {name: step.input(name, (), precision) for name in optimizer.hyper_parameters(1)}
    for i in inputs:
        values[i] = step.input(names[i], arguments[i].type.get_shape(), _dtype(arguments[i].type))
    one = step.constant(1.0, element_name(loss_type.element_type))
    results = inline(step.block, gradient, [values[i].value for i in range(len(arguments))] + [one.value])
    loss_value, gradients = results[0], results[1:]
    # @loss_grad returns one gradient per float argument, in argument order.
    gradient_of = dict(zip([i for i, a in enumerate(arguments) if is_float(a.type.element_type)], gradients))
    updated, new_state = [], []
    for i in params:
        p, s = optimizer.update(values[i], Tensor(step, gradient_of[i]), state[i], hyper)
        updated.append(p)
        new_state += s
    step.output(Tensor(step, loss_value), *updated, *new_state)
    built = build_module(step)
    if stepped:
        built.body.block.first_op.attributes[DROPOUT_STEP_MARK] = UnitAttr()
    return built, [names[i] for i in params], [names[i] for i in inputs]


DROPOUT_STEP_MARK = "training.dropout_step"
"""On @train_step when its `dropout_step` input was added for the loss's dropouts (the
Trainer feeds it the step number)."""


def _loss_module(build_loss: Callable[[Graph], Tensor] | ModuleOp) -> ModuleOp:
    if isinstance(build_loss, ModuleOp):
        module = build_loss.clone()
        function = module.body.block.first_op
        outputs = function.function_type.outputs.data if isinstance(function, func.FuncOp) else ()
    else:
        forward = Graph("loss")
        loss = build_loss(forward)
        forward.output(loss)
        module, outputs = forward.build(), (loss.type,)
    if len(outputs) != 1 or outputs[0].get_shape() != () or not is_float(outputs[0].element_type):
        raise BuildError(f"the loss must be one float scalar, got {', '.join(map(str, outputs)) or 'no result'}")
    return module


def _dtype(t: TensorType) -> str:
    return element_name(t.element_type)


class Trainer:
    """Compiles @train_step once and keeps parameters and optimizer state in arrays it
    updates in place after every step."""

    def __init__(self, build_loss: Callable[[Graph], Tensor] | ModuleOp, optimizer: SGD | Adam,
                 init: dict[str, np.ndarray], target: str = "cpu"):
        self.module, self.param_names, self.input_names = build_train_step(build_loss, optimizer)
        self.optimizer = optimizer
        self.executable = compile(self.module, target=target, entry="train_step")
        function = self.module.body.block.first_op
        types = {a.data["graph.name"].data: t for a, t in zip(function.arg_attrs.data, function.function_type.inputs.data)}
        missing = [n for n in self.param_names if n not in init]
        if missing:
            raise BuildError(f"Trainer: no initial value for parameters {missing}")
        self.params = {n: np.array(init[n], dtype=tensor_dtype(types[n])) for n in self.param_names}
        self.state = {
            f"{n}.{s}": np.zeros_like(self.params[n]) for n in self.param_names for s in optimizer.state_names
        }
        self.steps = 0

    def step(self, **inputs: np.ndarray) -> float:
        """One training step on these inputs; returns the loss before the update. A loss
        with dropout gets the step number as its `dropout_step` (fresh masks each step)."""
        self.steps += 1
        if DROPOUT_STEP_MARK in self.module.body.block.first_op.attributes:
            inputs = {**inputs, STEP_ARGUMENT: np.int64(self.steps)}
        precision = next(iter(self.params.values())).dtype
        hyper = [np.array(v, precision) for v in self.optimizer.hyper_parameters(self.steps).values()]
        arguments = [*self.params.values(), *self.state.values(), *hyper, *(inputs[n] for n in self.input_names)]
        loss, *updated = self.executable(*arguments)
        for target, value in zip([*self.params.values(), *self.state.values()], updated):
            np.copyto(target, value)
        return float(loss)

