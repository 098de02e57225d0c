"""Lowering: an instantiated module's graph -> graph-dialect ops, through the builder.

One `func.func` per entry: its inputs (shapes from the bound symbolic dims), then every
tensor param of the instance tree with its dotted name and role `param`, in declaration
order. Graph statements run in order in a scope of names: a data flow evaluates its
source, applies each operation (a primitive, a sub-module instance, an array of them in
sequence) and binds the destination; `if` picks a branch at compile time; `@checkpoint`
and `save:` mark the values autodiff keeps (`graph.checkpoint`, used by
`autodiff{checkpoint=marked}`), everything else is recomputed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import UnitAttr
from xdsl.ir import OpResult

from strata.frontends import builder as ops
from strata.frontends.builder import Graph, Tensor
from strata.frontends.dsl import syntax as s
from strata.frontends.dsl.consts import NotConstant, evaluate
from strata.frontends.dsl.errors import DslError
from strata.frontends.dsl.primitives import REQUIRED, Primitive, lookup
from strata.frontends.dsl.resolve import DTYPES, Instance, ModuleTable, split_dtype
from strata.support.errors import BuildError, StrataError

CONSTRUCTORS = ("zeros", "ones", "full", "fill")

Value = Tensor | Instance | list | None


@dataclass
class Scope:
    """The names a graph sees: its values, the instance's params and constants, and (in a
    backward graph) the forward's saved values."""

    instance: Instance
    params: dict[str, Tensor | None]
    values: dict[str, Value] = field(default_factory=dict)
    saved: dict[str, Tensor] | None = None
    dims: dict[str, int] = field(default_factory=dict)

    def constants(self) -> dict[str, object]:
        """The compile-time names: the instance's constants and the symbolic dims bound so far."""
        return {**self.instance.constants, **self.dims}


class Lowering:
    """Builds one graph function from instances of a module table."""

    def __init__(self, table: ModuleTable, graph: Graph, params: dict[str, Tensor]):
        self.table, self.graph, self.params = table, graph, params

    # ------------------------------------------------------------ module calls

    def call(self, instance: Instance, inputs: list[Tensor], loc: s.Loc | None) -> list[Tensor]:
        """The outputs of `instance`'s forward graph on `inputs`."""
        section = instance.decl.forward
        if section is None or not section.statements:
            raise DslError("E011", f"{instance.decl.name} has no forward graph", loc)
        if len(inputs) != len(section.inputs):
            raise DslError("E003", f"{instance.decl.name} takes {len(section.inputs)} inputs, "
                           f"{len(inputs)} flow into it", loc)
        try:
            scope = self.forward(instance, inputs)
            return [self.output(port, scope) for port in section.outputs]
        except DslError as e:
            raise self.table.located(e, instance.decl) from None

    def forward(self, instance: Instance, inputs: list[Tensor]) -> Scope:
        """The scope after running `instance`'s forward graph on `inputs`."""
        section = instance.decl.forward
        scope = self.scope(instance)
        for port, value in zip(section.inputs, inputs):
            self.bind(port, value, scope)
            scope.values[port.name] = value
        self.run(section.statements, scope)
        self.mark_saved(section, scope)
        return scope

    def scope(self, instance: Instance) -> Scope:
        params = {name: (self.params[leaf.name] if leaf is not None else None) for name, leaf in instance.leaves.items()}
        return Scope(instance, params)

    def output(self, port: s.Port, scope: Scope, code: str = "E004") -> Tensor:
        if port.name not in scope.values:
            raise DslError("E002", f"the graph never defines its output '{port.name}'", port.loc)
        value = scope.values[port.name]
        if not isinstance(value, Tensor):
            raise DslError("E003", f"output '{port.name}' is not a tensor", port.loc)
        self.bind(port, value, scope, code)
        return value

    def bind(self, port: s.Port, value: Tensor, scope: Scope, code: str = "E004") -> None:
        """Check `value` against the port's type, binding its symbolic dims in the scope
        (`code`, E004 by default, on a shape mismatch; E015 on a dtype mismatch)."""
        if not isinstance(port.type, s.TensorTypeExpr):
            raise DslError("E003", f"'{port.name}' must have a tensor type [dims]", port.loc)
        declared, dtype = split_dtype(port.type, value.dtype)
        if dtype != value.dtype:
            raise DslError("E015", f"'{port.name}' is declared {dtype}, the value is {value.dtype}", port.loc)
        shape = value.shape
        if declared and declared[0] == "*":
            lead = len(shape) - (len(declared) - 1)
            if lead < 0:
                raise DslError(code, f"'{port.name}' has rank {len(shape)}, its type needs at least {len(declared) - 1}", port.loc)
            shape, declared = shape[lead:], declared[1:]
        if len(declared) != len(shape):
            raise DslError(code, f"'{port.name}' is declared with {len(declared)} dims, the value has shape {list(value.shape)}", port.loc)
        for dim, size in zip(declared, shape):
            if isinstance(dim, s.Name) and dim.name not in scope.constants():
                scope.dims[dim.name] = size
                continue
            expected = evaluate(dim, scope.constants())
            if expected != size:
                raise DslError(code, f"'{port.name}' has shape {list(value.shape)}; the dim declared "
                               f"as {expected} is {size}", getattr(dim, "loc", port.loc))

    # ------------------------------------------------------------ statements

    def run(self, statements: tuple[s.Statement, ...], scope: Scope) -> None:
        for statement in statements:
            match statement:
                case s.Flow():
                    self.flow(statement, scope)
                case s.IfStatement(condition=condition):
                    taken = self.guard(condition, scope)
                    self.run(statement.then if taken else statement.otherwise, scope)
                case s.RecomputeBlock(body=body):
                    self.run(body, scope)

    def guard(self, condition: s.Expr, scope: Scope) -> bool:
        try:
            value = evaluate(condition, scope.constants())
        except NotConstant as e:
            raise DslError("E016", f"an `if` guard must be a compile-time constant: {e.detail}", condition.loc) from None
        if not isinstance(value, bool):
            raise DslError("E016", f"an `if` guard must be true or false, got {value!r}", condition.loc)
        return value

    def flow(self, flow: s.Flow, scope: Scope) -> None:
        values = self.source(flow.stages[0], scope)
        accumulate = False
        for stage in flow.stages[1:-1]:
            values, accumulate = self.apply(stage, values, scope)
        self.assign(flow.stages[-1], values, scope, accumulate)
        for annotation in flow.annotations:
            self.annotate(annotation, flow.stages[-1], scope)

    def assign(self, destination: s.Expr, values: list[Value], scope: Scope, accumulate: bool) -> None:
        names = destination.items if isinstance(destination, s.TupleExpr) else (destination,)
        if not all(isinstance(n, s.Name) for n in names):
            raise DslError("E001", "a destination is a name or a tuple of names", destination.loc)
        if len(names) != len(values):
            raise DslError("E003", f"{len(values)} value(s) flow into {len(names)} destination name(s)", destination.loc)
        for name, value in zip(names, values):
            if name.name == "_":
                continue
            previous = scope.values.get(name.name)
            if name.name in scope.values or name.name in scope.params:
                if not (accumulate and isinstance(previous, Tensor) and isinstance(value, Tensor)):
                    raise DslError("E017", f"'{name.name}' is already defined in this graph (each name is assigned once; "
                                   "`accumulate=true` adds to a gradient)", name.loc)
                value = previous + value
            scope.values[name.name] = value

    def annotate(self, annotation: s.Annotation, destination: s.Expr, scope: Scope) -> None:
        if annotation.name != "checkpoint":
            raise DslError("E008", f"@{annotation.name} is not supported (graph outputs take @checkpoint)", annotation.loc)
        keywords = dict(annotation.keywords)
        setting = keywords.get("granularity")
        granularity = setting.name if isinstance(setting, s.Name) else "full" if setting is None else None
        if annotation.args or set(keywords) - {"granularity"} or granularity not in ("full", "none"):
            raise DslError("E008", "@checkpoint takes only granularity=full or granularity=none", annotation.loc)
        if granularity == "full":
            names = destination.items if isinstance(destination, s.TupleExpr) else (destination,)
            for name in names:
                mark_checkpoint(scope.values.get(getattr(name, "name", "")))

    def mark_saved(self, section: s.GraphSection, scope: Scope) -> None:
        both = set(section.save) & set(section.recompute)
        if both:
            raise DslError("E022", f"{', '.join(sorted(both))} is both saved and recomputed", section.loc)
        for name in (*section.save, *section.recompute):
            if name not in scope.values:
                raise DslError("E002", f"save/recompute names '{name}', which the graph does not define", section.loc)
        for name in section.save:
            mark_checkpoint(scope.values[name])

    # ------------------------------------------------------------ values

    def source(self, expr: s.Expr, scope: Scope) -> list[Value]:
        if isinstance(expr, s.TupleExpr):
            return [v for item in expr.items for v in self.source(item, scope)]
        if isinstance(expr, s.Call) and isinstance(expr.callee, s.Name) and expr.callee.name in CONSTRUCTORS:
            return [self.constructor(expr, scope)]
        if isinstance(expr, s.Call):
            values, _ = self.apply(expr, [], scope)
            return values
        return [self.value(expr, scope)]

    def value(self, expr: s.Expr, scope: Scope) -> Value:
        """A name's value: a graph value, param, sub-module, or compile-time constant."""
        match expr:
            case s.Name(name=name):
                if name in scope.values:
                    return scope.values[name]
                if name in scope.params:
                    return scope.params[name]
                if name in scope.instance.children:
                    return scope.instance.children[name]
                if name in scope.constants():
                    return scope.constants()[name]
                raise DslError("E002", f"'{name}' is not defined here (not a value of this graph, a param, "
                               "a sub-module or a constant)", expr.loc)
            case s.Attribute(base=s.Name(name="saved"), name=name):
                if scope.saved is None:
                    raise DslError("E006", "`saved.` is only readable in a backward graph", expr.loc)
                if name not in scope.saved:
                    raise DslError("E006", f"saved.{name}: '{name}' is not in the forward's save: list", expr.loc)
                return scope.saved[name]
            case s.Attribute(base=base, name=name):
                owner = self.value(base, scope)
                if not isinstance(owner, Instance):
                    raise DslError("E003", f"'.{name}' reads a member of a sub-module; this is not one", expr.loc)
                if name in owner.leaves:
                    leaf = owner.leaves[name]
                    return self.params[leaf.name] if leaf is not None else None
                if name in owner.children:
                    return owner.children[name]
                raise DslError("E002", f"{owner.decl.name} has no param '{name}'", expr.loc)
            case s.Index(base=base, index=index):
                return self.element(self.value(base, scope), index, scope, expr)
            case s.Literal(value=None):
                return None
            case s.Conditional(then=then, condition=condition, otherwise=otherwise):
                return self.value(then if self.guard(condition, scope) else otherwise, scope)
        try:
            return evaluate(expr, scope.constants())
        except NotConstant:
            raise DslError("E003", "expected a tensor name, a sub-module or a compile-time constant", expr.loc) from None

    def element(self, array: Value, index: s.Expr, scope: Scope, expr: s.Expr) -> Value:
        """`blocks[2]`, `blocks[0:4]` (modules) or `table[0:T]` (a tensor's leading rows)."""
        if isinstance(index, s.Slice):
            start = evaluate(index.start, scope.constants()) if index.start else None
            stop = evaluate(index.stop, scope.constants()) if index.stop else None
            if isinstance(array, Tensor):
                rows = range(array.shape[0])[start:stop]
                if rows.step != 1 or not array.ndim:
                    raise DslError("E004", "a tensor slice takes rows start:stop of a tensor", expr.loc)
                return ops.slice_(array, [rows.start, *[0] * (array.ndim - 1)], [rows.stop, *array.shape[1:]])
            if isinstance(array, list):
                return array[start:stop]
        if not isinstance(array, list):
            raise DslError("E003", "only an array of modules or (with start:stop) a tensor can be indexed", expr.loc)
        position = evaluate(index, scope.constants())
        if not isinstance(position, int) or not -len(array) <= position < len(array):
            raise DslError("E003", f"index {position!r} is outside the array of {len(array)} modules", index.loc)
        return array[position]

    def constructor(self, call: s.Call, scope: Scope) -> Tensor:
        """zeros([dims]), ones([dims]), full([dims], value) in the default dtype."""
        name = call.callee.name
        arguments = [evaluate(a, scope.constants()) for a in call.args]
        keywords = {k: evaluate(v, scope.constants()) for k, v in call.keywords}
        shape = keywords.pop("shape", arguments[0] if arguments else None)
        fill = {"zeros": 0.0, "ones": 1.0}.get(name, keywords.pop("value", arguments[1] if len(arguments) > 1 else None))
        dtype = DTYPES.get(str(keywords.pop("dtype", "")), self.table.default_dtype)
        if not isinstance(shape, list) or fill is None or keywords:
            raise DslError("E003", f"{name} takes a shape list{' and a value' if name in ('full', 'fill') else ''}", call.loc)
        return ops.broadcast_to(self.graph.constant(np.asarray(fill), dtype), [int(d) for d in shape])

    # ------------------------------------------------------------ operations

    def apply(self, stage: s.Expr, inputs: list[Value], scope: Scope) -> tuple[list[Value], bool]:
        """The values out of one operation stage, and whether it accumulates."""
        callee, args, keywords = (stage.callee, stage.args, stage.keywords) if isinstance(stage, s.Call) else (stage, (), ())
        if isinstance(callee, s.Name) and callee.name not in scope.values and callee.name not in scope.instance.children:
            found = lookup(callee.name)
            if found is not None:
                return self.primitive(found, inputs, args, keywords, scope, stage.loc)
            if callee.name in self.table.modules:
                raise DslError("E014", f"'{callee.name}' is a module type: declare an instance in params: "
                               f"(`name: {callee.name}(...)`) and flow into it", callee.loc)
            raise DslError("E014", f"unknown primitive or sub-module '{callee.name}'", callee.loc)
        target = self.value(callee, scope)
        if args or keywords:
            raise DslError("E003", "a sub-module call takes its inputs from the flow, not arguments", stage.loc)
        modules = target if isinstance(target, list) else [target]
        if not modules or not all(isinstance(m, Instance) for m in modules):
            raise DslError("E003", "this operation is neither a primitive nor a sub-module", stage.loc)
        values = inputs
        for module in modules:
            values = self.call(module, self.tensors(values, stage.loc), stage.loc)
        return values, False

    def tensors(self, values: list[Value], loc: s.Loc) -> list[Tensor]:
        if not all(isinstance(v, Tensor) for v in values):
            raise DslError("E003", "only tensors flow into a module", loc)
        return values

    def primitive(self, p: Primitive, inputs: list[Value], args, keywords, scope: Scope, loc: s.Loc) -> tuple[list[Value], bool]:
        operands: dict[str, Value] = {}
        attributes: dict[str, object] = {}
        names = [o.rstrip("?*") for o in p.operands]
        positional = list(inputs) + [self.argument(a, scope, p) for a in args]
        if p.operands and p.operands[0].endswith("*"):
            operands[names[0]] = [v for v in positional if isinstance(v, Tensor)]
            positional = [v for v in positional if not isinstance(v, Tensor)]
        for value in positional:
            if isinstance(value, Tensor) or value is None and len(operands) < len(names):
                slot = next((n for n in names if n not in operands), None)
                if slot is None:
                    raise DslError("E003", f"{p.name} takes {len(names)} tensor operand(s) ({', '.join(names)})", loc)
                operands[slot] = value
            else:
                slot = next((a for a, _ in p.attributes if a not in attributes), None)
                if slot is None:
                    raise DslError("E003", f"{p.name}: too many arguments", loc)
                attributes[slot] = value
        for key, expr in keywords:
            value = self.argument(expr, scope, p)
            if key in names:
                operands[key] = value
            elif key in dict(p.attributes):
                attributes[key] = value
            else:
                known = ", ".join([*names, *(a for a, _ in p.attributes)])
                raise DslError("E003", f"{p.name} has no argument '{key}' (it takes {known})", loc)
        for name, spec in zip(names, p.operands):
            if name not in operands and not spec.endswith("?"):
                raise DslError("E003", f"{p.name} needs tensor operand '{name}'", loc)
            operands.setdefault(name, None)
        for name, default in p.attributes:
            if attributes.setdefault(name, default) is REQUIRED:
                raise DslError("E012", f"{p.name} needs argument '{name}'", loc)
        if "dtype" in attributes:
            attributes["dtype"] = DTYPES.get(str(attributes["dtype"]), attributes["dtype"])
        try:
            result = p.build(**operands, **attributes)
        except (BuildError, ValueError) as e:
            raise DslError("E015" if "element type" in str(e) else "E004", f"{p.name}: {e}", loc) from None
        except IndexError:
            raise DslError("E004", f"{p.name}: an axis is out of range, or there are no operands", loc) from None
        except StrataError as e:
            raise DslError("E004", f"{p.name}: {e}", loc) from None
        return list(result) if isinstance(result, tuple) else [result], bool(attributes.get("accumulate", False))

    def argument(self, expr: s.Expr, scope: Scope, p: Primitive) -> Value | object:
        """An argument: a tensor or module name, or a constant; a bare unknown name is a
        symbol (`transpose=NT`, `granularity=full`)."""
        if isinstance(expr, s.Name) and not _defined(expr.name, scope):
            return expr.name
        if isinstance(expr, s.ListExpr):
            return [self.argument(i, scope, p) for i in expr.items]
        return self.value(expr, scope)


def _defined(name: str, scope: Scope) -> bool:
    return (name in scope.values or name in scope.params or name in scope.instance.children
            or name in scope.constants() or (scope.saved is not None and name == "saved"))


def mark_checkpoint(value: Value) -> None:
    """Mark the op defining `value` `graph.checkpoint` (autodiff keeps its value)."""
    if isinstance(value, Tensor) and isinstance(value.value, OpResult):
        value.value.op.attributes["graph.checkpoint"] = UnitAttr()

