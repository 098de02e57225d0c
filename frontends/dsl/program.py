"""A loaded DSL program: instantiate an entry module as a graph-dialect module.

    program = Program.load(text, "model.module")
    module = program.instantiate("GPT2", n_layers=2, B=2, T=8)     # a verified ModuleOp

Keywords name the entry's constructor parameters and the symbolic dims of its inputs
(`B`, `T`); a leading `*` of an input type takes its dims from `shapes={"in": (...)}`.
The function is named after the entry; its arguments are the inputs, then every tensor
param (`graph.role = "param"`, dotted names like `blocks.3.mlp.up_weight`). With
`backward=True` a module with a `backward:` section also gets `@<entry>_backward`:
(inputs..., params..., d_<output>...) -> (d_<float input>..., d_<param>...).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp

from strata.frontends.builder import Graph, Tensor, build_module
from strata.frontends.dsl import syntax as s
from strata.frontends.dsl.consts import NotConstant, evaluate
from strata.frontends.dsl.errors import DslError
from strata.frontends.dsl.lower import Lowering
from strata.frontends.dsl.resolve import DTYPES, Instance, ModuleTable, split_dtype
from strata.support.errors import BuildError


@dataclass
class Program:
    table: ModuleTable

    @staticmethod
    def load(text: str, path: str = "<dsl>") -> Program:
        return Program(ModuleTable.load(text, path))

    @property
    def modules(self) -> list[str]:
        return sorted(self.table.modules)

    def instance(self, entry: str, **keywords: object) -> Instance:
        """The entry's instance tree (its constants and params), for the keywords that are
        constructor parameters."""
        decl = self.table.declaration(entry, None)
        parameters = {p.name for p in decl.parameters}
        own = {k: v for k, v in keywords.items() if k in parameters}
        try:
            return self.table.instantiate(entry, (), own, None)
        except DslError as e:
            raise self.table.located(e, decl) from None

    def instantiate(self, entry: str, *, dtype: str = "f32", shapes: Mapping[str, tuple[int, ...]] | None = None,
                    backward: bool = False, **keywords: object) -> ModuleOp:
        if dtype not in DTYPES.values():
            raise DslError("E015", f"dtype must be one of {', '.join(sorted(set(DTYPES.values())))}, got {dtype!r}")
        self.table.default_dtype = dtype
        declared = self.table.modules.get(entry)
        try:
            return self._instantiate(self.table.declaration(entry, None), entry, shapes or {}, backward, keywords)
        except DslError as e:
            raise (self.table.located(e, declared) if declared else e) from None

    def _instantiate(self, decl: s.ModuleDecl, entry: str, shapes, backward: bool, keywords) -> ModuleOp:
        root = self.instance(entry, **keywords)
        if decl.forward is None or not decl.forward.statements:
            raise DslError("E011", f"{entry} has no forward graph to instantiate", decl.loc)
        dims = self._dims(decl, root, keywords)
        functions = [self._forward(entry, root, dims, shapes)]
        if backward:
            if decl.backward is None:
                raise DslError("E005", f"{entry} has no backward: section (autodiff derives gradients without one)", decl.loc)
            functions.append(self._backward(entry, root, dims, shapes))
        try:
            return build_module(*functions)
        except BuildError as e:
            raise DslError("E004", str(e), decl.loc) from None

    def _dims(self, decl: s.ModuleDecl, root: Instance, keywords: Mapping[str, object]) -> dict[str, int]:
        symbolic = {d.name for port in decl.forward.inputs if isinstance(port.type, s.TensorTypeExpr)
                    for d in split_dtype(port.type, self.table.default_dtype)[0]
                    if isinstance(d, s.Name) and d.name not in root.constants}
        unknown = set(keywords) - symbolic - {p.name for p in decl.parameters}
        if unknown:
            raise DslError("E002", f"{decl.name} has no parameter or input dim {', '.join(sorted(unknown))} "
                           f"(parameters: {', '.join(p.name for p in decl.parameters) or 'none'}; "
                           f"dims: {', '.join(sorted(symbolic)) or 'none'})", decl.loc)
        return {k: int(v) for k, v in keywords.items() if k in symbolic}

    def _inputs(self, graph: Graph, decl: s.ModuleDecl, root: Instance, dims: dict[str, int],
                shapes: Mapping[str, tuple[int, ...]]) -> list[Tensor]:
        inputs = []
        for port in decl.forward.inputs:
            if not isinstance(port.type, s.TensorTypeExpr):
                raise DslError("E003", f"input '{port.name}' must have a tensor type [dims]", port.loc)
            declared, dtype = split_dtype(port.type, self.table.default_dtype)
            if port.name in shapes:
                shape = tuple(int(d) for d in shapes[port.name])
            elif "*" in declared:
                raise DslError("E012", f"input '{port.name}' has a '*' dim: give its shape (shapes={{'{port.name}': (...)}}, "
                               f"strata-dsl --shape {port.name}=2x3x...)",
                               port.loc)
            else:
                shape = tuple(self._dim(d, root, dims, port) for d in declared)
            inputs.append(graph.input(port.name, shape, dtype))
        return inputs

    def _dim(self, dim: s.Expr, root: Instance, dims: dict[str, int], port: s.Port) -> int:
        try:
            return int(evaluate(dim, {**root.constants, **dims}))
        except NotConstant:
            name = dim.name if isinstance(dim, s.Name) else "a dim"
            raise DslError("E012", f"input '{port.name}' needs {name}: instantiate(..., {name}=...)", dim.loc) from None

    def _params(self, graph: Graph, root: Instance) -> dict[str, Tensor]:
        return {leaf.name: graph.param(leaf.name, leaf.shape, leaf.dtype) for leaf in root.all_leaves()}

    def _forward(self, entry: str, root: Instance, dims: dict[str, int], shapes) -> Graph:
        graph = Graph(entry)
        decl = root.decl
        inputs = self._inputs(graph, decl, root, dims, shapes)
        lowering = Lowering(self.table, graph, self._params(graph, root))
        graph.output(*lowering.call(root, inputs, None))
        return graph

    def _backward(self, entry: str, root: Instance, dims: dict[str, int], shapes) -> Graph:
        """(inputs, params, d_outputs) -> gradients, from the module's `backward:` graph;
        the forward graph runs first so `saved.` values exist."""
        decl = root.decl
        if root.children:
            raise DslError("E014", f"{entry}: an explicit backward of a module with sub-modules is not supported "
                           "(autodiff differentiates it)", decl.backward.loc)
        graph = Graph(f"{entry}_backward")
        inputs = self._inputs(graph, decl, root, dims, shapes)
        params = self._params(graph, root)
        lowering = Lowering(self.table, graph, params)
        try:
            forward = lowering.forward(root, inputs)
            outputs = [lowering.output(port, forward) for port in decl.forward.outputs]
            scope = lowering.scope(root)
            scope.dims = dict(forward.dims)
            scope.saved = {name: forward.values[name] for name in decl.forward.save}
            declared = {port.name: port for port in decl.backward.inputs}
            for port, value in zip(decl.forward.outputs, outputs):
                name = f"d_{port.name}"
                scope.values[name] = graph.input(name, value.shape, value.dtype)
            lowering.run(decl.backward.statements, scope)
            gradients = []
            wanted = [(f"d_{p.name}", v) for p, v in zip(decl.forward.inputs, inputs) if v.dtype.startswith(("f", "bf"))]
            wanted += [(f"d_{name}", params[leaf.name]) for name, leaf in root.leaves.items()
                       if leaf is not None and name not in root.ties]
            for name, target in wanted:
                if name not in scope.values:
                    raise DslError("E005", f"the backward graph does not compute '{name}'", decl.backward.loc)
                gradient = scope.values[name]
                if not isinstance(gradient, Tensor) or gradient.shape != target.shape:
                    shape = list(gradient.shape) if isinstance(gradient, Tensor) else gradient
                    raise DslError("E018", f"'{name}' has shape {shape}, its tensor has {list(target.shape)}",
                                   declared[name].loc if name in declared else decl.backward.loc)
                if name in declared:
                    lowering.bind(declared[name], gradient, scope, "E018")
                gradients.append(gradient)
        except DslError as e:
            raise self.table.located(e, decl) from None
        graph.output(*gradients)
        return graph
