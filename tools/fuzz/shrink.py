"""Reduce a failing program to a small one that fails the same way.

Greedy, to a fixed point, each step kept only if the program still fails with the same
signature (`Outcome.signature`):

1. drop a result;
2. *bypass* an op: its uses take one of its operands of the same type instead (or, for
   a result, of any type);
3. *cut* an op: its uses read a new function argument holding the value the reference
   computes for it (so everything upstream becomes dead);

after each step dead ops and unused arguments (with their inputs) go. What is left is
written as `.mlir` plus `.npz` (arg0, arg1, ...), which `strata-run --inputs --check`
replays.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, ModuleOp, StringAttr
from xdsl.ir import OpResult

import strata
from strata.tools.fuzz.differential import Outcome

Check = Callable[[ModuleOp, list[np.ndarray], list[tuple[float, float]]], Outcome]


@dataclass
class Case:
    module: ModuleOp
    inputs: list[np.ndarray]
    bounds: list[tuple[float, float]]
    """One tolerance per result (`Value.tolerance`)."""

    @property
    def function(self) -> func.FuncOp:
        return next(op for op in self.module.ops if isinstance(op, func.FuncOp))

    def body_ops(self) -> list:
        return [op for op in self.function.body.block.ops if not isinstance(op, func.ReturnOp)]

    def clone(self) -> Case:
        return Case(self.module.clone(), list(self.inputs), list(self.bounds))


def shrink(case: Case, failure: Outcome, check: Check, budget: int = 400) -> Case:
    """The smallest program found (within `budget` checks) failing like `failure`."""
    wanted = failure.signature()
    checks = 0

    def still_fails(candidate: Case) -> bool:
        nonlocal checks
        checks += 1
        return check(candidate.module, candidate.inputs, candidate.bounds).signature() == wanted

    changed = True
    while changed and checks < budget:
        changed = False
        for candidate in _candidates(case):
            if checks >= budget:
                break
            if still_fails(candidate):
                case, changed = candidate, True
                break
    return case


def _candidates(case: Case):
    results = len(case.bounds)
    for i in range(results):
        if results > 1:
            yield _without_result(case, i)
    returned = case.function.body.block.last_op.operands
    for i, value in enumerate(returned):
        if isinstance(value, OpResult):
            for operand_index in range(len(value.owner.operands)):
                yield _returning_operand(case, i, operand_index)
    values = _intermediate_values(case)
    for index in reversed(range(len(case.body_ops()))):
        op = case.body_ops()[index]
        for operand_index, operand in enumerate(op.operands):
            if operand.type == op.results[0].type:
                yield _bypassed(case, index, operand_index)
        if values is not None and op.results:
            yield _cut(case, index, values[index])


def _intermediate_values(case: Case) -> list[np.ndarray] | None:
    """The reference's value of every op's result, in op order."""
    probe = case.clone()
    function = probe.function
    ret = function.body.block.last_op
    everything = [op.results[0] for op in probe.body_ops()]
    ret.detach()
    ret.erase()
    function.body.block.add_op(func.ReturnOp(*everything))
    _retype(function)
    try:
        return list(strata.interpret(probe.module, *probe.inputs))
    except Exception:  # noqa: BLE001 - a program the reference rejects cannot be cut
        return None


def _without_result(case: Case, index: int) -> Case:
    new = case.clone()
    ret = new.function.body.block.last_op
    kept = [v for i, v in enumerate(ret.operands) if i != index]
    new.function.body.block.add_op(func.ReturnOp(*kept))
    ret.detach()
    ret.erase()
    del new.bounds[index]
    return _cleaned(new)


def _returning_operand(case: Case, result_index: int, operand_index: int) -> Case:
    new = case.clone()
    ret = new.function.body.block.last_op
    values = list(ret.operands)
    values[result_index] = values[result_index].owner.operands[operand_index]
    new.function.body.block.add_op(func.ReturnOp(*values))
    ret.detach()
    ret.erase()
    return _cleaned(new)


def _bypassed(case: Case, op_index: int, operand_index: int) -> Case:
    new = case.clone()
    op = new.body_ops()[op_index]
    op.results[0].replace_all_uses_with(op.operands[operand_index])
    return _cleaned(new)


def _cut(case: Case, op_index: int, value: np.ndarray) -> Case:
    new = case.clone()
    op = new.body_ops()[op_index]
    block = new.function.body.block
    argument = block.insert_arg(op.results[0].type, len(block.args))
    op.results[0].replace_all_uses_with(argument)
    attrs = list(new.function.arg_attrs.data) if new.function.arg_attrs else []
    attrs.append(DictionaryAttr({"graph.name": StringAttr(f"cut{len(block.args) - 1}")}))
    new.function.arg_attrs = ArrayAttr(attrs)
    new.inputs.append(np.asarray(value))
    return _cleaned(new)


def _cleaned(case: Case) -> Case:
    """Without dead ops and unused arguments, the signature updated."""
    function = case.function
    block = function.body.block
    for op in reversed(case.body_ops()):
        if all(not r.uses for r in op.results):
            op.detach()
            op.erase()
    attrs = list(function.arg_attrs.data) if function.arg_attrs else [DictionaryAttr({})] * len(block.args)
    for i in reversed(range(len(block.args))):
        if not block.args[i].uses:
            block.erase_arg(block.args[i])
            del attrs[i]
            del case.inputs[i]
    function.arg_attrs = ArrayAttr(attrs)
    _retype(function)
    return case


def _retype(function: func.FuncOp) -> None:
    block = function.body.block
    outputs = [v.type for v in block.last_op.operands]
    function.function_type = FunctionType.from_lists([a.type for a in block.args], outputs)


def write_reproducer(case: Case, stem: str, note: str) -> tuple[str, str]:
    """`stem`.mlir (with `note` as a comment) and `stem`.npz; their paths."""
    from strata.support.files import write_atomically
    from strata.tools.fuzz.npz import npz_bytes

    text = "".join(f"// {line}\n" for line in note.splitlines()) + str(case.module) + "\n"
    write_atomically(f"{stem}.mlir", text.encode())
    write_atomically(f"{stem}.npz", npz_bytes({f"arg{i}": a for i, a in enumerate(case.inputs)}))
    return f"{stem}.mlir", f"{stem}.npz"
