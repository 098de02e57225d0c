"""From a PyTorch model to a graph module: `torch.export` traces the model to an ATen
graph, and each ATen node is translated by the entry for its op in `ops.TRANSLATIONS`.

    imported = import_program(model, (ids,))     # ImportedProgram
    imported.module                               # func.func @forward(inputs..., params...)
    imported.params                               # {fully qualified name: numpy array}

The function's arguments are the model's tensor inputs in order (graph.role "input",
named as in `forward`), then every parameter, buffer and lifted constant of the exported
program in its signature's order (graph.role "param", graph.name the fully qualified
PyTorch name such as "transformer.h.0.attn.c_attn.weight").

Constant folding: a node whose tensor operands are all known at import time (factory
ops such as `arange` and `full`, lifted constants, non-persistent buffers, and whatever
is computed from them only: position ids, causal masks, rotary tables) is evaluated by
PyTorch itself, whatever the op, and enters the graph as a `graph.constant` only where a
translated op consumes it. Everything else must have an entry in the table; an op
without one is an `UnsupportedOpError` naming the op, where the model uses it, and the
ops that are supported.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.fx
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind, TensorArgument
from xdsl.dialects.builtin import ModuleOp

from strata.frontends import builder as ops
from strata.frontends.builder import Graph, Tensor
from strata.frontends.torch.ops import TRANSLATIONS
from strata.frontends.torch.values import (
    NEVER_FOLDED, FOLD_LIMIT, Const, location, op_name, packet_name, strata_dtype, to_numpy,
)  # fmt: skip
from strata.support.errors import BuildError, InputError, StrataError, UnsupportedOpError


@dataclass
class ImportedProgram:
    """A translated exported program and what is needed to call it."""

    module: ModuleOp
    input_names: list[str]
    """The function's input arguments, in order."""
    params: dict[str, np.ndarray]
    """Parameter arguments in order (after the inputs), by fully qualified name."""
    input_is_tensor: list[bool]
    """For each flattened user input of the exported program: whether it is an argument
    (a tensor), or a constant baked into the program (a Python number, None, ...)."""
    in_spec: object
    out_spec: object
    entry: str = "forward"


def export(model: torch.nn.Module, example_args: Sequence[object], example_kwargs: dict | None = None) -> ExportedProgram:
    """`torch.export.export(model, tuple(example_args))`, its failures as an InputError."""
    if not isinstance(model, torch.nn.Module):
        raise InputError(f"strata.from_torch: model must be a torch.nn.Module, got {type(model).__name__}")
    if isinstance(example_args, torch.Tensor) or not isinstance(example_args, (tuple, list)):
        example_args = (example_args,)
    try:
        return torch.export.export(model, tuple(example_args), kwargs=example_kwargs or None)
    except Exception as e:  # noqa: BLE001 - whatever torch.export raises becomes one diagnostic
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        if "Cache" in first:
            first += " (for transformers models, pass use_cache=False in the config)"
        raise InputError(f"torch.export.export could not trace {type(model).__name__}: {type(e).__name__}: {first}") from e


def import_program(
    model_or_program: torch.nn.Module | ExportedProgram,
    example_args: Sequence[object] = (),
    example_kwargs: dict | None = None,
    name: str = "forward",
) -> ImportedProgram:
    """Export `model` on `example_args` (or take an ExportedProgram) and translate it."""
    if isinstance(model_or_program, ExportedProgram):
        program = model_or_program
    else:
        program = export(model_or_program, example_args, example_kwargs)
    return Importer(program, name).run()


def from_torch(model: torch.nn.Module | ExportedProgram, example_args: Sequence[object] = (),
               example_kwargs: dict | None = None) -> ModuleOp:  # fmt: skip
    """The graph module of `model` traced on `example_args`: one func.func @forward."""
    return import_program(model, example_args, example_kwargs).module


class Importer:
    """Translates one ExportedProgram into a Graph, node by node."""

    def __init__(self, program: ExportedProgram, name: str = "forward"):
        self.program = program
        self.graph = Graph(name)
        self.values: dict[torch.fx.Node, object] = {}
        self.node: torch.fx.Node | None = None

    # --- values ------------------------------------------------------------------

    def tensor(self, value: object, dtype: str | None = None) -> Tensor:
        """`value` as a graph tensor (a constant for a Const or a Python number), cast to
        `dtype` when given."""
        if isinstance(value, Tensor):
            return value if dtype is None or value.dtype == dtype else ops.cast(value, dtype)
        if isinstance(value, Const):
            if value.arg is not None:
                return self.tensor(value.arg, dtype)
            dtype = dtype or strata_dtype(value.value.dtype, self.where())
            if dtype not in value.materialized:
                value.materialized[dtype] = self.graph.constant(to_numpy(value.value), dtype)
            return value.materialized[dtype]
        if isinstance(value, (bool, int, float)):
            if dtype is None:
                dtype = "i1" if isinstance(value, bool) else "i64" if isinstance(value, int) else "f32"
            return self.graph.constant(value, dtype)
        raise self.error(f"expected a tensor operand, got {type(value).__name__} {value!r}")

    def where(self) -> str:
        return location(self.node) if self.node is not None else "the exported program"

    def error(self, message: str) -> UnsupportedOpError:
        node = self.node
        what = op_name(node.target) if node is not None and node.op == "call_function" else "the program"
        return UnsupportedOpError(f"{what} ({self.where()}): {message}")

    # --- the walk ----------------------------------------------------------------

    def run(self) -> ImportedProgram:
        program = self.program
        signature = program.graph_signature
        placeholders = [n for n in program.graph.nodes if n.op == "placeholder"]
        specs = signature.input_specs
        if len(placeholders) != len(specs):
            raise StrataError("the exported program's placeholders do not match its signature")
        input_names: list[str] = []
        input_is_tensor: list[bool] = []
        for node, spec in zip(placeholders, specs):
            if spec.kind != InputKind.USER_INPUT:
                continue
            self.node = node
            if isinstance(spec.arg, TensorArgument):
                val = node.meta["val"]
                dtype = strata_dtype(val.dtype, f"input {node.name}")
                self.values[node] = self.graph.input(node.name, tuple(val.shape), dtype)
                input_names.append(node.name)
                input_is_tensor.append(True)
            else:  # a Python value baked into the program at export time
                self.values[node] = getattr(spec.arg, "value", None)
                input_is_tensor.append(False)
        params: dict[str, np.ndarray] = {}
        for node, spec in zip(placeholders, specs):
            if spec.kind == InputKind.USER_INPUT:
                continue
            self.node = node
            if spec.kind == InputKind.PARAMETER:
                value = program.state_dict[spec.target]
            elif spec.kind == InputKind.BUFFER:
                value = program.state_dict[spec.target] if spec.persistent else program.constants[spec.target]
            elif spec.kind == InputKind.CONSTANT_TENSOR:
                value = program.constants[spec.target]
            else:
                raise self.error(f"input {node.name} of kind {spec.kind.name} is not supported")
            if not isinstance(value, torch.Tensor):
                raise self.error(f"{spec.target} is a {type(value).__name__}, not a tensor")
            value = value.detach()
            arg = self.graph.param(spec.target, tuple(value.shape), strata_dtype(value.dtype, spec.target))
            arg.value.name_hint = ssa_name(spec.target)  # %transformer.h.0.ln_1.weight
            array = to_numpy(value)  # bound once, so made contiguous once (not on every call)
            params[spec.target] = array if array.flags.c_contiguous else array.copy(order="C")
            known = spec.kind == InputKind.CONSTANT_TENSOR or (spec.kind == InputKind.BUFFER and not spec.persistent)
            self.values[node] = Const(value, arg) if known else arg

        outputs = []
        for node in program.graph.nodes:
            self.node = node
            if node.op == "placeholder":
                continue
            if node.op == "output":
                results = node.args[0]
                for spec, result in zip(signature.output_specs, results):
                    if spec.kind != OutputKind.USER_OUTPUT:
                        raise self.error(
                            f"the program mutates {spec.target} ({spec.kind.name}): only programs "
                            "without side effects are supported (call model.eval())"
                        )
                    value = self.values[result] if isinstance(result, torch.fx.Node) else result
                    if value is None:
                        continue
                    if isinstance(value, Const):  # a constant result: never an argument view
                        value = Const(value.value)
                    outputs.append(self.tensor(value))
                continue
            if node.op != "call_function":
                raise self.error(f"FX node kind {node.op} is not supported")
            self.values[node] = self.call(node, TRANSLATIONS)
        self.node = None
        self.graph.output(*outputs)
        try:
            module = self.graph.build()
        except BuildError as e:
            raise StrataError(f"the imported program does not verify: {e}") from None
        _eliminate_dead_code(module)
        return ImportedProgram(
            module, input_names, params, input_is_tensor,
            program.call_spec.in_spec, program.call_spec.out_spec, self.graph.name,
        )  # fmt: skip

    def call(self, node: torch.fx.Node, table: dict) -> object:
        args = torch.fx.node.map_arg(node.args, self.values.__getitem__)
        kwargs = torch.fx.node.map_arg(node.kwargs, self.values.__getitem__)
        if node.target is operator.getitem:
            container, index = args
            return container[index]
        folded = self.fold(node, args, kwargs)
        if folded is not None:
            return folded
        translate = table.get(packet_name(node.target))
        if translate is None:
            supported = ", ".join(sorted(table))
            raise self.error(
                f"this ATen op is not supported by Strata's PyTorch importer. Supported ops: {supported} "
                "(and any op whose operands are all constants, evaluated at import time)"
            )
        try:
            return translate(self, node, *args, **kwargs)
        except BuildError as e:
            raise self.error(f"cannot translate: {e}") from None

    def fold(self, node: torch.fx.Node, args, kwargs) -> object | None:
        """The node's value computed by PyTorch when every tensor operand is known (a
        Const, possibly in a list), else None."""
        if packet_name(node.target) in NEVER_FOLDED or not isinstance(node.target, torch._ops.OpOverload):
            return None
        known = True

        def unwrap(v):
            nonlocal known
            if isinstance(v, Tensor):
                known = False
            if isinstance(v, Const):
                return v.value
            if isinstance(v, (list, tuple)):
                return type(v)(unwrap(x) for x in v)
            if isinstance(v, dict):
                return {k: unwrap(x) for k, x in v.items()}
            return v

        args, kwargs = unwrap(args), unwrap(kwargs)
        if not known:
            return None
        val = node.meta.get("val")
        if isinstance(val, torch.Tensor) and val.numel() > FOLD_LIMIT:
            return None
        if node.target._schema.is_mutable:
            return None
        try:
            with torch.no_grad():
                result = node.target(*args, **kwargs)
        except Exception:  # noqa: BLE001 - an op PyTorch cannot run here: translate it instead
            return None
        return _wrap(result)


def ssa_name(name: str) -> str | None:
    """`name` as an SSA value name ([A-Za-z_$.-][A-Za-z0-9_$.-]*), or None for the default."""
    name = re.sub(r"[^A-Za-z0-9_$.-]", "_", name)
    if name and name[0].isdigit():
        name = f"p{name}"
    return name or None


def _wrap(result: object) -> object:
    if isinstance(result, torch.Tensor):
        return Const(result.detach())
    if isinstance(result, (list, tuple)):
        return type(result)(_wrap(r) for r in result)
    return result


def _eliminate_dead_code(module: ModuleOp) -> None:
    """Drop ops whose results are unused (the remains of recognized patterns)."""
    from xdsl.dialects import func
    from xdsl.traits import is_side_effect_free

    for function in module.ops:
        if not isinstance(function, func.FuncOp):
            continue
        block = function.body.block
        changed = True
        while changed:
            changed = False
            for op in reversed(list(block.ops)):
                if op is block.last_op:
                    continue
                if all(not r.uses for r in op.results) and is_side_effect_free(op):
                    op.detach()
                    op.erase()
                    changed = True
