"""Source text -> syntax tree (syntax.py), with Lark: an LALR(1) parser over grammar.lark,
an indentation postlexer for `_INDENT`/`_DEDENT`, and a Transformer building the nodes.

    source = parse(text, "model.module")     # a SourceFile; DslError E001 on bad syntax
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from importlib.resources import files

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError
from lark.indenter import DedentError, Indenter

from strata.frontends.dsl import syntax as s
from strata.frontends.dsl.errors import DslError


class _Indentation(Indenter):
    """Python-style blocks; a newline token without a line break (a comment before a
    continuation line) is dropped, so the statement goes on."""

    NL_type = "_NL"
    OPEN_PAREN_types = ["LPAR", "LSQB"]
    CLOSE_PAREN_types = ["RPAR", "RSQB"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8

    def handle_NL(self, token: Token):
        if "\n" in token:
            yield from super().handle_NL(token)


@cache
def _parser() -> Lark:
    grammar = files("strata.frontends.dsl").joinpath("grammar.lark").read_text()
    return Lark(grammar, parser="lalr", postlex=_Indentation(), propagate_positions=True, maybe_placeholders=True)


def parse(text: str, path: str = "<dsl>") -> s.SourceFile:
    """The syntax tree of `text`; a syntax error is DslError E001 at its location."""
    try:
        tree = _parser().parse(text.rstrip() + "\n")
        source = _Build().transform(tree)
    except UnexpectedInput as e:
        raise DslError("E001", _syntax_message(e), s.Loc(e.line, e.column), path, text) from None
    except DedentError as e:
        line = _dedent_line(text, str(e))
        raise DslError("E001", "inconsistent indentation: a line dedents to a column no block above starts at",
                       s.Loc(line, 1) if line else None, path, text) from None
    except VisitError as e:
        if isinstance(e.orig_exc, DslError):
            raise e.orig_exc.located(path, text) from None
        raise
    source.path, source.text = path, text
    source.modules = [replace(m, path=path) for m in source.modules]
    return source


def _syntax_message(e: UnexpectedInput) -> str:
    if isinstance(e, UnexpectedCharacters):
        return f"unexpected character {e.char!r}"
    if isinstance(e, UnexpectedEOF):
        return "unexpected end of file"
    assert isinstance(e, UnexpectedToken)
    token = e.token
    shown = {"_NL": "end of line", "_INDENT": "an indented block", "_DEDENT": "end of block", "$END": "end of file"}
    got = shown.get(token.type, repr(str(token)))
    expected = sorted(_describe(t) for t in e.expected if not t.startswith("__"))[:8]
    return f"unexpected {got}" + (f"; expected {', '.join(expected)}" if expected else "")


def _describe(terminal: str) -> str:
    # punctuation and keywords are string terminals, shown as themselves below
    names = {"NAME": "a name", "NUMBER": "a number", "STRING": "a string", "_NL": "end of line",
             "_INDENT": "an indented block", "_DEDENT": "end of block"}
    if terminal in names:
        return names[terminal]
    pattern = _parser().get_terminal(terminal).pattern
    return repr(pattern.value) if pattern.type == "str" else terminal.lower()


def _dedent_line(text: str, message: str) -> int | None:
    """The first line whose indentation matches no open block (Lark's DedentError has no
    position)."""
    stack = [0]
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith(("#", "->", "@")):
            continue
        indent = len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())
        if indent > stack[-1]:
            stack.append(indent)
        while indent < stack[-1]:
            stack.pop()
        if indent != stack[-1]:
            return number
    return None


def _loc(item) -> s.Loc:
    if isinstance(item, Token):
        return s.Loc(item.line, item.column)
    meta = item.meta if hasattr(item, "meta") else item
    return s.Loc(meta.line, meta.column)


def _string(token: Token) -> str:
    body = str(token)[1:-1]
    return body.encode("utf-8").decode("unicode_escape") if "\\" in body else body


def _doc(token: Token) -> str:
    return str(token)[3:-3].strip()


def _split_arguments(items) -> tuple[tuple[s.Expr, ...], tuple[tuple[str, s.Expr], ...]]:
    args = tuple(a for a in items if isinstance(a, s.Expr))
    keywords = tuple(a for a in items if isinstance(a, tuple))
    return args, keywords


@v_args(meta=True)
class _Build(Transformer):
    """Parse tree -> syntax nodes."""

    # ------------------------------------------------------------ file and declarations

    def start(self, meta, items):
        source = s.SourceFile("<dsl>", "")
        for item in items:
            if isinstance(item, Token):
                source.doc = _doc(item)
            elif isinstance(item, s.Import):
                source.imports.append(item)
            else:
                source.modules.append(item)
        return source

    def dotted_name(self, meta, items):
        return tuple(str(t) for t in items)

    def import_item(self, meta, items):
        name, alias = items
        return (str(name), str(alias or name))

    def import_module(self, meta, items):
        path, alias = items
        return s.Import(_loc(meta), path[:-1], ((path[-1], str(alias or path[-1])),))

    def import_from(self, meta, items):
        path, *names = items
        return s.Import(_loc(meta), path, tuple(names))

    def kind(self, meta, items):
        return str(items[0])

    def param_list(self, meta, items):
        return tuple(items)

    def param(self, meta, items):
        name, type_, default = items
        return s.Parameter(_loc(meta), str(name), type_, default)

    def module_decl(self, meta, items):
        abstract, kind, name, parameters, extends, body = items
        return s.ModuleDecl(_loc(meta), kind, str(name), parameters or (), abstract is not None,
                            str(extends) if extends else None, **body)

    def module_body(self, meta, items):
        body: dict = {}
        for item in items:
            if isinstance(item, Token):
                body["doc"] = _doc(item)
                continue
            key, value = item
            if key in body and key != "doc":
                raise DslError("E001", f"a module has at most one {key.replace('_', ' ')} section", value_loc(value, meta))
            body[key] = value
        lets = body.pop("let", ((), ()))
        body["lets"], body["constraints"] = lets
        return body

    def let_section(self, meta, items):
        lets = tuple(i for i in items if isinstance(i, s.LetBinding))
        constraints = tuple(c for i in items if isinstance(i, tuple) for c in i)
        return ("let", (lets, constraints))

    def let_binding(self, meta, items):
        return s.LetBinding(_loc(meta), str(items[0]), items[1])

    def constraint_section(self, meta, items):
        return tuple(items)

    def constraint(self, meta, items):
        return s.Constraint(_loc(meta), items[0], _string(items[1]))

    def params_section(self, meta, items):
        return ("params", tuple(items))

    def param_decl(self, meta, items):
        plus, name, type_, condition, *annotations = items
        return s.ParamDecl(_loc(meta), str(name), type_, condition, tuple(annotations), plus is not None)

    # ------------------------------------------------------------ types

    def tensor_type(self, meta, items):
        optional = bool(items) and isinstance(items[-1], Token) and items[-1].type == "OPTIONAL"
        dims = items[:-1] if optional else items
        return s.TensorTypeExpr(_loc(meta), tuple(str(d) if isinstance(d, Token) else d for d in dims), optional)

    def array_type(self, meta, items):
        shape, element = items
        if len(shape.dims) != 1 or shape.dims[0] == "*":
            raise DslError("E001", "an array of modules is `[count] x Module(...)`", shape.loc)
        return s.ArrayTypeExpr(_loc(meta), shape.dims[0], element)

    def module_type(self, meta, items):
        name, arguments = items
        args, keywords = _split_arguments(arguments or ())
        return s.ModuleTypeExpr(_loc(meta), str(name), args, keywords)

    def tuple_type(self, meta, items):
        return s.TupleTypeExpr(_loc(meta), tuple(items))

    def named_type(self, meta, items):
        name, type_ = items
        return s.NamedType(_loc(meta), str(name) if name else None, type_)

    # ------------------------------------------------------------ forward and backward

    def port(self, meta, items):
        return str(items[0])

    def signature(self, meta, items):
        port, *types = items
        return ("signature", port, types, _loc(meta))

    def gradient_decl(self, meta, items):
        return ("gradient", str(items[0]), items[1], _loc(meta))

    def memory_kind(self, meta, items):
        return str(items[0])

    def memory_list(self, meta, items):
        return ("memory", items[0], tuple(str(t) for t in items[1:]))

    def graph_section(self, meta, items):
        return ("graph", tuple(items), _loc(meta))

    def forward_section(self, meta, items):
        return ("forward", _graph_section(meta, items, "forward"))

    def backward_section(self, meta, items):
        return ("backward", _graph_section(meta, items, "backward"))

    def flow(self, meta, items):
        stages = tuple(i for i in items if isinstance(i, s.Expr))
        annotations = tuple(i for i in items if isinstance(i, s.Annotation))
        return s.Flow(_loc(meta), stages, annotations)

    def tuple(self, meta, items):
        return s.TupleExpr(_loc(meta), tuple(items))

    def conditional(self, meta, items):
        condition, *rest = items
        if any(isinstance(i, Token) for i in rest):
            split = next(k for k, i in enumerate(rest) if isinstance(i, Token))
            return s.IfStatement(_loc(meta), condition, tuple(rest[:split]), tuple(rest[split + 1 :]))
        return s.IfStatement(_loc(meta), condition, tuple(i for i in rest if i is not None))

    def recompute_block(self, meta, items):
        return s.RecomputeBlock(_loc(meta), tuple(items))

    def annotation(self, meta, items):
        name, arguments = items
        args, keywords = _split_arguments(arguments or ())
        return s.Annotation(_loc(meta), str(name), args, keywords)

    # ------------------------------------------------------------ Hugging Face

    def hf_config_section(self, meta, items):
        fields = tuple(i for i in items if isinstance(i, tuple) and i[0] != "param_mapping")
        mapping = tuple(p for i in items if isinstance(i, tuple) and i[0] == "param_mapping" for p in i[1])
        return ("hf_config", s.HfConfig(_loc(meta), fields, mapping))

    def hf_config_entry(self, meta, items):
        return (str(items[0]), _string(items[1]))

    def hf_param_mapping(self, meta, items):
        return ("param_mapping", tuple((str(a), str(b)) for a, b in zip(items[::2], items[1::2])))

    def hf_mapping_section(self, meta, items):
        return ("hf_mapping", tuple(items))

    def hf_weight(self, meta, items):
        target, (kind, sources, fusion, function) = items
        dim, sizes = fusion or (None, None)
        return s.HfWeight(_loc(meta), target.rstrip("?"), target.endswith("?"), kind, sources, dim, sizes, function)

    def hf_direct(self, meta, items):
        return ("direct", (_string(items[0]),), None, None)

    def hf_fuse(self, meta, items):
        *sources, dim, sizes = items
        return ("fuse", tuple(_string(t) for t in sources), (dim, sizes), None)

    def hf_transform(self, meta, items):
        return ("transform", (_string(items[0]),), None, str(items[1]))

    # ------------------------------------------------------------ expressions

    def number(self, meta, items):
        text = str(items[0])
        value = float(text) if any(c in text for c in ".eE") else int(text)
        return s.Literal(_loc(meta), value)

    def string(self, meta, items):
        return s.Literal(_loc(meta), _string(items[0]))

    def true(self, meta, items):
        return s.Literal(_loc(meta), True)

    def false(self, meta, items):
        return s.Literal(_loc(meta), False)

    def none(self, meta, items):
        return s.Literal(_loc(meta), None)

    def name(self, meta, items):
        return s.Name(_loc(meta), str(items[0]))

    def attribute(self, meta, items):
        return s.Attribute(_loc(meta), items[0], str(items[1]))

    def index(self, meta, items):
        return s.Index(_loc(meta), items[0], items[1])

    def slice(self, meta, items):
        return s.Slice(_loc(meta), items[0], items[1])

    def call(self, meta, items):
        callee, arguments = items
        args, keywords = _split_arguments(arguments or ())
        return s.Call(_loc(meta), callee, args, keywords)

    def arguments(self, meta, items):
        return tuple(items)

    def keyword(self, meta, items):
        return (str(items[0]), items[1])

    def list(self, meta, items):
        return s.ListExpr(_loc(meta), tuple(i for i in items if i is not None))

    def ternary(self, meta, items):
        then, condition, _else, otherwise = items
        return s.Conditional(_loc(meta), then, condition, otherwise)

    def not_op(self, meta, items):
        return s.Unary(_loc(meta), "not", items[0])

    def negate(self, meta, items):
        return s.Unary(_loc(meta), "-", items[0])

    def or_expr(self, meta, items):
        return _chain(meta, items, "or")

    def and_expr(self, meta, items):
        return _chain(meta, items, "and")

    def comparison(self, meta, items):
        return _operators(meta, items)

    def arith(self, meta, items):
        return _operators(meta, items)

    def term(self, meta, items):
        return _operators(meta, items)

    def power(self, meta, items):
        return s.Binary(_loc(meta), "**", items[0], items[1])


def _chain(meta, items, op: str) -> s.Expr:
    result = items[0]
    for rhs in items[1:]:
        result = s.Binary(_loc(meta), op, result, rhs)
    return result


def _operators(meta, items) -> s.Expr:
    """`a op b op c ...` left-associated (a comparison chain is `a < b and b < c` in
    Python; the DSL's comparisons are single, so it is left-associated too)."""
    result = items[0]
    for op, rhs in zip(items[1::2], items[2::2]):
        result = s.Binary(_loc(op), str(op), result, rhs)
    return result


def value_loc(value, meta) -> s.Loc:
    loc = getattr(value, "loc", None)
    return loc if isinstance(loc, s.Loc) else _loc(meta)


def _graph_section(meta, items, section: str) -> s.GraphSection:
    inputs: list[s.Port] = []
    outputs: list[s.Port] = []
    save: tuple[str, ...] = ()
    recompute: tuple[str, ...] = ()
    statements: tuple = ()
    for item in items:
        tag = item[0]
        if tag == "signature":
            _, port, types, loc = item
            ports = inputs if port in ("in", "inputs") else outputs
            ports.extend(_ports(port, types, loc))
        elif tag == "gradient":
            # `d_name: [shape]` in a backward section; resolution tells incoming gradients
            # (of forward outputs) from outgoing ones (of inputs and params)
            _, name, type_, loc = item
            if section != "backward":
                raise DslError("E001", f"`{name}:` declares a gradient, which only a backward section has", loc)
            inputs.append(s.Port(loc, name, type_))
        elif tag == "memory":
            if item[1] == "save":
                save += item[2]
            else:
                recompute += item[2]
        elif tag == "graph":
            statements = item[1]
    return s.GraphSection(_loc(meta), tuple(inputs), tuple(outputs), statements, save, recompute)


def _ports(port: str, types: list, loc: s.Loc) -> list[s.Port]:
    """`in: [B, T]` is one port named `in`; `in: (x: [..], y: [..])` and an indented list
    name each; `inputs:`/`outputs:` always list named ports."""
    if len(types) == 1 and not isinstance(types[0], s.NamedType) and not isinstance(types[0], s.TupleTypeExpr):
        return [s.Port(loc, port, types[0])]
    items = types[0].items if len(types) == 1 and isinstance(types[0], s.TupleTypeExpr) else types
    ports = []
    for item in items:
        if item.name is None:
            raise DslError("E001", f"the ports of `{port}:` are named: `name: [shape]`", item.loc)
        ports.append(s.Port(item.loc, item.name, item.type))
    return ports
