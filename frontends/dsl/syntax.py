"""The module DSL's syntax tree: what the parser (parser.py) makes of a source file.

Every node carries the location of its first token, so resolution and lowering report
errors at `file:line:col`. Expressions are one small family (`Expr`): the same nodes
spell compile-time constants (`d_model // num_heads`), tensor names (`x`, `saved.x`,
`ln1.weight`) and calls (`matmul(weight, transpose=NT)`, `Linear(d, d)`); which is which
is decided by resolution, where names are known.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Loc:
    line: int
    column: int


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Expr:
    loc: Loc


@dataclass(frozen=True)
class Literal(Expr):
    """A number, string, `true`/`false` or `None`."""

    value: object


@dataclass(frozen=True)
class Name(Expr):
    name: str


@dataclass(frozen=True)
class Attribute(Expr):
    """`base.name`: a member of a sub-module (`ln1.weight`) or a saved value (`saved.x`)."""

    base: Expr
    name: str


@dataclass(frozen=True)
class Index(Expr):
    """`base[index]`; a slice index is a `Slice`."""

    base: Expr
    index: Expr


@dataclass(frozen=True)
class Slice(Expr):
    start: Expr | None
    stop: Expr | None


@dataclass(frozen=True)
class Call(Expr):
    callee: Expr
    args: tuple[Expr, ...]
    keywords: tuple[tuple[str, Expr], ...]


@dataclass(frozen=True)
class ListExpr(Expr):
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class TupleExpr(Expr):
    """`(a, b, c)`: several values flowing into or out of one operation."""

    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Unary(Expr):
    op: str  # "-" or "not"
    operand: Expr


@dataclass(frozen=True)
class Binary(Expr):
    op: str  # + - * / // % ** == != < > <= >= and or
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True)
class Conditional(Expr):
    """`then if condition else otherwise`."""

    then: Expr
    condition: Expr
    otherwise: Expr


# ---------------------------------------------------------------- types


@dataclass(frozen=True)
class TensorTypeExpr:
    """`[B, T, d_model]`, `[*, C, bf16]`, `[out_dim]?`: dims are expressions or "*"; a
    trailing dtype name is split off by resolution."""

    loc: Loc
    dims: tuple[Expr | str, ...]
    optional: bool = False


@dataclass(frozen=True)
class ModuleTypeExpr:
    """`Linear(d, 4 * d)`, `tied_to(embedding)` or a bare `RMSNormParams`."""

    loc: Loc
    name: str
    args: tuple[Expr, ...] = ()
    keywords: tuple[tuple[str, Expr], ...] = ()


@dataclass(frozen=True)
class ArrayTypeExpr:
    """`[n_layers] x Block(...)`: n instances of a module."""

    loc: Loc
    count: Expr
    element: ModuleTypeExpr


@dataclass(frozen=True)
class NamedType:
    loc: Loc
    name: str | None
    type: TypeExpr


@dataclass(frozen=True)
class TupleTypeExpr:
    loc: Loc
    items: tuple[NamedType, ...]


TypeExpr = TensorTypeExpr | ModuleTypeExpr | ArrayTypeExpr | TupleTypeExpr


# ---------------------------------------------------------------- graphs


@dataclass(frozen=True)
class Annotation:
    loc: Loc
    name: str
    args: tuple[Expr, ...] = ()
    keywords: tuple[tuple[str, Expr], ...] = ()


@dataclass(frozen=True)
class Flow:
    """`source -> op -> ... -> destination @annotation`: stages[0] is the source,
    stages[-1] the destination, those between are operations."""

    loc: Loc
    stages: tuple[Expr, ...]
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True)
class IfStatement:
    loc: Loc
    condition: Expr
    then: tuple[Statement, ...]
    otherwise: tuple[Statement, ...] = ()


@dataclass(frozen=True)
class RecomputeBlock:
    """`recompute:` inside a backward graph: forward statements replayed from saved values."""

    loc: Loc
    body: tuple[Statement, ...]


Statement = Flow | IfStatement | RecomputeBlock


# ---------------------------------------------------------------- declarations


@dataclass(frozen=True)
class Parameter:
    """A constructor parameter: `d_model: int = 4096`."""

    loc: Loc
    name: str
    type: TypeExpr | None = None
    default: Expr | None = None


@dataclass(frozen=True)
class LetBinding:
    loc: Loc
    name: str
    value: Expr


@dataclass(frozen=True)
class Constraint:
    loc: Loc
    condition: Expr
    message: str


@dataclass(frozen=True)
class ParamDecl:
    """One line of `params:`; `added` marks `+name` in a module that extends another."""

    loc: Loc
    name: str
    type: TypeExpr
    condition: Expr | None = None
    annotations: tuple[Annotation, ...] = ()
    added: bool = False


@dataclass(frozen=True)
class Port:
    """An input or output of a forward (or backward) graph."""

    loc: Loc
    name: str
    type: TypeExpr


@dataclass(frozen=True)
class GraphSection:
    loc: Loc
    inputs: tuple[Port, ...]
    outputs: tuple[Port, ...]
    statements: tuple[Statement, ...]
    save: tuple[str, ...] = ()
    recompute: tuple[str, ...] = ()


@dataclass(frozen=True)
class HfWeight:
    """One `hf_mapping:` line: `target: source`, the target possibly with `{i}` and `?`."""

    loc: Loc
    target: str
    optional: bool
    kind: str  # "direct", "fuse" or "transform"
    sources: tuple[str, ...]
    dim: Expr | None = None
    sizes: Expr | None = None
    function: str | None = None


@dataclass(frozen=True)
class HfConfig:
    loc: Loc
    fields: tuple[tuple[str, str], ...]
    param_mapping: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class ModuleDecl:
    loc: Loc
    kind: str  # "module", "block" or "model"
    name: str
    parameters: tuple[Parameter, ...]
    abstract: bool = False
    extends: str | None = None
    doc: str | None = None
    lets: tuple[LetBinding, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    params: tuple[ParamDecl, ...] = ()
    forward: GraphSection | None = None
    backward: GraphSection | None = None
    hf_config: HfConfig | None = None
    hf_mapping: tuple[HfWeight, ...] = ()
    path: str = "<dsl>"


@dataclass(frozen=True)
class Import:
    """`import a.b.C [as D]` (names = ((C, D),)) or `from a.b import C, E as F`."""

    loc: Loc
    path: tuple[str, ...]
    names: tuple[tuple[str, str], ...]


@dataclass
class SourceFile:
    path: str
    text: str
    doc: str | None = None
    imports: list[Import] = field(default_factory=list)
    modules: list[ModuleDecl] = field(default_factory=list)
