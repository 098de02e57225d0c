"""`add-dropout-step`: give a function's dropouts a run-time step, so that each call of a
compiled program (each training step) draws fresh masks.

Before:

    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %y = graph.dropout %x {p = 1.000000e-01 : f64, seed = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
      func.return %y : tensor<4xf32>
    }

After:

    func.func @f(%x: tensor<4xf32>, %dropout_step: tensor<i64> {graph.name = "dropout_step", graph.role = "input"}) -> tensor<4xf32> {
      %y = graph.dropout %x, %dropout_step {p = 1.000000e-01 : f64, seed = 7 : i64} : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
      func.return %y : tensor<4xf32>
    }

A dropout's mask is a pure function of (seed, step, element index) (docs/dropout-rng.md):
without a step, a compiled program repeats one mask on every call. The new trailing
argument `dropout_step` is the step; `strata.compile(..., fresh_dropout=True)` and
`strata.Trainer` feed it a counter. Dropouts that already have a step keep it; a
function without step-less dropouts is left as it is; one that already has an argument
named `dropout_step` is an error. The backward pass of a
differentiated function recomputes each mask from the same step.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, TensorType, i64
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from strata.dialects import graph
from strata.support.errors import IRError

STEP_ARGUMENT = "dropout_step"


def add_dropout_step(function: func.FuncOp) -> SSAValue | None:
    """The function's new `dropout_step` argument, now the step of each of its dropouts
    that had none; None (nothing changed) when there are none."""
    dropouts = [op for op in function.walk() if isinstance(op, graph.DropoutOp) and op.step is None]
    if not dropouts:
        return None
    names = [a.data.get("graph.name") for a in function.arg_attrs.data] if function.arg_attrs is not None else []
    if StringAttr(STEP_ARGUMENT) in names:
        raise IRError(f"add-dropout-step: @{function.sym_name.data} already has an argument named "
                      f"'{STEP_ARGUMENT}'; rename it, or give its dropouts their step yourself")
    block = function.body.block
    step = block.insert_arg(TensorType(i64, []), len(block.args))
    step.name_hint = STEP_ARGUMENT
    attrs = list(function.arg_attrs.data) if function.arg_attrs is not None else [DictionaryAttr({})] * (len(block.args) - 1)
    attrs.append(DictionaryAttr({"graph.name": StringAttr(STEP_ARGUMENT), "graph.role": StringAttr("input")}))
    function.arg_attrs = ArrayAttr(attrs)
    function.function_type = func.FunctionType.from_lists([a.type for a in block.args], function.function_type.outputs.data)
    for op in dropouts:
        op.operands = [op.x, step]
    return step


@dataclass(frozen=True)
class AddDropoutStepPass(ModulePass):
    """Every function with step-less dropouts gets a `dropout_step` argument (see above)."""

    name = "add-dropout-step"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in [f for f in op.ops if isinstance(f, func.FuncOp) and not f.is_declaration]:
            add_dropout_step(function)
