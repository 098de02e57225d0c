"""Resolution: source files -> a table of module declarations (imports followed, `extends`
merged), and a declaration + arguments -> an `Instance`: its constants (constructor
parameters, `let:` bindings, checked `constraint:`s) and its parameter tree (tensor
leaves with dotted names, sub-module instances, arrays of them, tied weights).

    table = ModuleTable.load(text, path)          # imports from std/ and the file's folder
    root = table.instantiate("GPT2", {"n_layers": 2}, loc)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from importlib.resources import files
from pathlib import Path

from strata.frontends.dsl import syntax as s
from strata.frontends.dsl.consts import evaluate, evaluate_int
from strata.frontends.dsl.errors import DslError
from strata.frontends.dsl.parser import parse

DTYPES = {"fp32": "f32", "f32": "f32", "fp64": "f64", "f64": "f64", "fp16": "f16", "f16": "f16",
          "bf16": "bf16", "int32": "i32", "i32": "i32", "int64": "i64", "i64": "i64", "int8": "i8"}
"""The DSL's dtype names -> Strata element types."""

_SCALAR_TYPES = {"int": int, "float": (int, float), "bool": bool, "string": str}


@dataclass
class Leaf:
    """A tensor parameter: its dotted name (`blocks.3.mlp.up_weight`), shape and dtype."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    loc: s.Loc


@dataclass
class Instance:
    """A module declaration instantiated with concrete constants."""

    decl: s.ModuleDecl
    prefix: str
    constants: dict[str, object]
    leaves: dict[str, Leaf | None] = field(default_factory=dict)
    children: dict[str, Instance | list[Instance]] = field(default_factory=dict)
    ties: dict[str, str] = field(default_factory=dict)

    def dotted(self, name: str) -> str:
        return f"{self.prefix}.{name}" if self.prefix else name

    def all_leaves(self) -> list[Leaf]:
        """Every leaf under this instance, in declaration order (tied names excluded)."""
        found: list[Leaf] = []
        for decl in self.decl.params:
            leaf = self.leaves.get(decl.name)
            if leaf is not None and decl.name not in self.ties:
                found.append(leaf)
            child = self.children.get(decl.name)
            for c in child if isinstance(child, list) else [child] if child else []:
                found.extend(c.all_leaves())
        return found


@dataclass
class ModuleTable:
    """Every module a program can instantiate, by the name it is visible under."""

    modules: dict[str, s.ModuleDecl] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    scopes: dict[str, dict[str, s.ModuleDecl]] = field(default_factory=dict)
    """Each file's visible names (its modules and imports): a module's sub-modules and
    base resolve in its own file, so a user's module never replaces one inside std."""
    default_dtype: str = "f32"

    @staticmethod
    def load(text: str, path: str = "<dsl>") -> ModuleTable:
        table = ModuleTable()
        table.modules = table._add_file(parse(text, path), Path(path).parent if path != "<dsl>" else Path.cwd(), set())
        return table

    def located(self, error: DslError, decl: s.ModuleDecl) -> DslError:
        """`error` rendered against `decl`'s file."""
        return error.located(decl.path, self.texts.get(decl.path, ""))

    def _add_file(self, source: s.SourceFile, folder: Path, loading: set[str]) -> dict[str, s.ModuleDecl]:
        self.texts[source.path] = source.text
        visible: dict[str, s.ModuleDecl] = {}
        for imp in source.imports:
            for name, decl in self._import(imp, folder, loading, source).items():
                if name in visible and visible[name] is not decl:
                    raise DslError("E023", f"two imports bind the name '{name}'; import one of them `as` another name",
                                   imp.loc).located(source.path, source.text)
                visible[name] = decl
        for decl in source.modules:
            if decl.name in visible and any(d is visible[decl.name] for d in source.modules):
                raise DslError("E009", f"module '{decl.name}' is declared twice", decl.loc).located(source.path, source.text)
            visible[decl.name] = decl
        self.scopes[source.path] = visible
        return visible

    def _import(self, imp: s.Import, folder: Path, loading: set[str], importer: s.SourceFile) -> dict[str, s.ModuleDecl]:
        """`import a.b.C [as D]` / `from a.b import C [as D]`: the file a/b.module (std/
        ships with Strata; other paths are relative to the importing file)."""
        file = _module_file(imp.path, folder)
        if file is None:
            raise DslError("E002", f"no module file for '{'.'.join(imp.path)}' (looked for {'/'.join(imp.path)}.module "
                           f"in Strata's std/ and next to this file)", imp.loc).located(importer.path, importer.text)
        key = str(file)
        if key in loading:
            raise DslError("E007", f"'{'.'.join(imp.path)}' imports itself (through its imports)",
                           imp.loc).located(importer.path, importer.text)
        if key not in self.scopes:  # a file imported again (std/modules by every std file) is parsed once
            self._add_file(parse(file.read_text(), key), file.parent, loading | {key})
        declared = {d.name: d for d in self.scopes[key].values() if d.path == key}
        found = {}
        for name, alias in imp.names:
            if name not in declared:
                raise DslError("E002", f"'{'.'.join(imp.path)}' declares no module '{name}' "
                               f"(it declares {', '.join(sorted(declared))})", imp.loc).located(importer.path, importer.text)
            found[alias] = declared[name]
        return found

    # ------------------------------------------------------------ declarations

    def declaration(self, name: str, loc: s.Loc | None, scope: str | None = None) -> s.ModuleDecl:
        """The module `name` as the file `scope` sees it (the loaded file by default)."""
        visible = self.scopes[scope] if scope is not None else self.modules
        if name not in visible:
            known = ", ".join(sorted(visible)) or "none"
            raise DslError("E002", f"no module named '{name}' (modules: {known})", loc)
        return self._merged(visible[name], ())

    def _merged(self, decl: s.ModuleDecl, chain: tuple[str, ...]) -> s.ModuleDecl:
        """`decl` with the module it extends merged in: parameters and lets first from the
        base, params overridden by name or added (`+name`), the graph from `decl` if it has one."""
        if decl.extends is None:
            return decl
        if decl.extends in chain or decl.extends == decl.name:
            raise DslError("E011", f"'{decl.name}' extends itself (through {' -> '.join(chain)})", decl.loc)
        visible = self.scopes.get(decl.path, self.modules)
        if decl.extends not in visible:
            raise DslError("E011", f"'{decl.name}' extends '{decl.extends}', which is not declared or imported", decl.loc)
        base = self._merged(visible[decl.extends], (*chain, decl.name))
        params = {p.name: p for p in base.params}
        for p in decl.params:
            if p.name in params and p.added:
                raise DslError("E011", f"'+{p.name}' adds a param '{decl.extends}' already declares; drop the '+' to override it", p.loc)
            params[p.name] = p
        forward = decl.forward if decl.forward is not None and decl.forward.statements else _inherit(base.forward, decl.forward)
        return replace(decl, extends=None, lets=base.lets + decl.lets, constraints=base.constraints + decl.constraints,
                       params=tuple(params.values()), forward=forward, backward=decl.backward or base.backward,
                       hf_config=decl.hf_config or base.hf_config, hf_mapping=decl.hf_mapping or base.hf_mapping)

    # ------------------------------------------------------------ instances

    def instantiate(self, name: str, args: tuple[object, ...], keywords: dict[str, object], loc: s.Loc | None,
                    prefix: str = "", scope: str | None = None) -> Instance:
        """`name` (as the file `scope` sees it) instantiated; an error inside it is
        rendered against the file that declares it."""
        decl = self.declaration(name, loc, scope)
        try:
            return self._instance(decl, args, keywords, loc, prefix)
        except DslError as e:
            raise self.located(e, decl) from None

    def _instance(self, decl: s.ModuleDecl, args, keywords, loc: s.Loc | None, prefix: str) -> Instance:
        name = decl.name
        if decl.abstract:
            raise DslError("E011", f"'{name}' is abstract: instantiate a module that extends it", loc)
        instance = Instance(decl, prefix, _bind_arguments(decl, args, keywords, loc))
        for let in decl.lets:
            instance.constants[let.name] = evaluate(let.value, instance.constants)
        for c in decl.constraints:
            try:
                holds = evaluate(c.condition, instance.constants)
            except DslError as e:
                raise DslError("E026", f"constraint cannot be evaluated: {e.detail}", c.loc) from None
            if not isinstance(holds, bool):
                raise DslError("E026", f"a constraint must be true or false, this one is {holds!r}", c.loc)
            if not holds:
                raise DslError("E027", f"constraint violated in {name}: {c.message}", c.loc)
        seen: set[str] = set()
        for p in decl.params:
            if p.name in seen:
                raise DslError("E009", f"param '{p.name}' is declared twice in {name}", p.loc)
            seen.add(p.name)
            self._declare(instance, p)
        return instance

    def _declare(self, instance: Instance, p: s.ParamDecl) -> None:
        if p.annotations:
            raise DslError("E008", f"annotation @{p.annotations[0].name} on a param is not supported "
                           "(annotations on graph outputs: @checkpoint)", p.annotations[0].loc)
        if p.condition is not None:
            present = evaluate(p.condition, instance.constants)
            if not isinstance(present, bool):
                raise DslError("E016", f"the condition of param '{p.name}' must be true or false, got {present!r}", p.condition.loc)
            if not present:
                instance.leaves[p.name] = None
                return
        match p.type:
            case s.TensorTypeExpr():
                shape, dtype = self.tensor_shape(p.type, instance.constants, f"param '{p.name}'")
                instance.leaves[p.name] = Leaf(instance.dotted(p.name), shape, dtype, p.loc)
            case s.ModuleTypeExpr(name="tied_to"):
                if len(p.type.args) != 1 or not isinstance(p.type.args[0], s.Name):
                    raise DslError("E003", "tied_to takes the name of one earlier param: tied_to(embedding)", p.type.loc)
                target = p.type.args[0].name
                if instance.leaves.get(target) is None:
                    raise DslError("E002", f"tied_to({target}): no earlier tensor param '{target}'", p.type.args[0].loc)
                instance.leaves[p.name] = instance.leaves[target]
                instance.ties[p.name] = target
            case s.ModuleTypeExpr(name=module, args=args, keywords=keywords):
                values = tuple(evaluate(a, instance.constants) for a in args)
                named = {k: evaluate(v, instance.constants) for k, v in keywords}
                instance.children[p.name] = self.instantiate(module, values, named, p.type.loc, instance.dotted(p.name),
                                                             instance.decl.path)
            case s.ArrayTypeExpr(count=count, element=element):
                n = evaluate_int(count, instance.constants, f"the count of '{p.name}'")
                values = tuple(evaluate(a, instance.constants) for a in element.args)
                named = {k: evaluate(v, instance.constants) for k, v in element.keywords}
                instance.children[p.name] = [
                    self.instantiate(element.name, values, named, element.loc, instance.dotted(f"{p.name}.{i}"),
                                     instance.decl.path)
                    for i in range(n)
                ]
            case _:
                raise DslError("E003", f"param '{p.name}' must be a tensor, a module, an array of modules or tied_to(...)", p.loc)

    def tensor_shape(self, t: s.TensorTypeExpr, constants: dict[str, object], what: str) -> tuple[tuple[int, ...], str]:
        dims, dtype = split_dtype(t, self.default_dtype)
        shape = []
        for d in dims:
            if d == "*":
                raise DslError("E004", f"{what}: a param's shape is fixed, '*' is only for graph inputs", t.loc)
            size = evaluate_int(d, constants, f"a dim of {what}")
            if size < 0:
                raise DslError("E004", f"{what}: dim {size} is negative", d.loc)
            shape.append(size)
        return tuple(shape), dtype


def split_dtype(t: s.TensorTypeExpr, default: str) -> tuple[tuple[s.Expr | str, ...], str]:
    """`[B, T, bf16]` -> ((B, T), "bf16"); without a trailing dtype name, `default`."""
    if t.dims and isinstance(t.dims[-1], s.Name) and t.dims[-1].name in DTYPES:
        return t.dims[:-1], DTYPES[t.dims[-1].name]
    return t.dims, default


def _inherit(base: s.GraphSection | None, own: s.GraphSection | None) -> s.GraphSection | None:
    """A module without its own graph keeps the base's, with its own signature if it has one."""
    if base is None or own is None:
        return base or own
    return replace(base, inputs=own.inputs or base.inputs, outputs=own.outputs or base.outputs)


def _bind_arguments(decl: s.ModuleDecl, args: tuple[object, ...], keywords: dict[str, object], loc: s.Loc | None) -> dict[str, object]:
    names = [p.name for p in decl.parameters]
    if len(args) > len(names):
        raise DslError("E003", f"{decl.name} takes {len(names)} parameters, got {len(args)} positional arguments", loc)
    bound = dict(zip(names, args))
    for key, value in keywords.items():
        if key not in names:
            raise DslError("E002", f"{decl.name} has no parameter '{key}' (parameters: {', '.join(names) or 'none'})", loc)
        if key in bound:
            raise DslError("E009", f"{decl.name}: parameter '{key}' is given twice", loc)
        bound[key] = value
    constants: dict[str, object] = {}
    for p in decl.parameters:
        if p.name in bound:
            value = bound[p.name]
        elif p.default is not None:
            value = evaluate(p.default, constants)
        else:
            raise DslError("E012", f"{decl.name} needs parameter '{p.name}'", loc)
        expected = _SCALAR_TYPES.get(p.type.name) if isinstance(p.type, s.ModuleTypeExpr) else None
        if expected is int and isinstance(value, float) and value.is_integer():
            value = int(value)
        if expected is not None and (not isinstance(value, expected) or (expected is not bool and isinstance(value, bool))):
            raise DslError("E003", f"{decl.name}: parameter '{p.name}' is {p.type.name}, got {value!r}", loc)
        constants[p.name] = value
    return constants


def _module_file(path: tuple[str, ...], folder: Path) -> Path | None:
    if path and path[0] == "std":
        std = Path(str(files("strata.frontends.dsl") / "std"))
        candidate = std.joinpath(*path[1:-1], f"{path[-1]}.module") if len(path) > 1 else None
    else:
        candidate = folder.joinpath(*path[:-1], f"{path[-1]}.module") if path else None
    return candidate if candidate is not None and candidate.is_file() else None
