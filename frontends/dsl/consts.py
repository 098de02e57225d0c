"""Compile-time expressions: module parameters, `let:` bindings, shape dims, `if` guards
and constraint conditions are evaluated here, to Python ints, floats, bools, strings,
None and lists; a name that is not a compile-time constant is E002 (or E016 in a guard).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from strata.frontends.dsl import syntax as s
from strata.frontends.dsl.errors import DslError

INTRINSICS: dict[str, Callable[..., object]] = {
    "sqrt": math.sqrt,
    "ceil_div": lambda a, b: -(-a // b),
    "min": min,
    "max": max,
    "abs": abs,
}
"""The pure functions a compile-time expression may call."""

_BINARY: dict[str, Callable[[object, object], object]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "//": lambda a, b: a // b,
    "%": lambda a, b: a % b,
    "**": lambda a, b: a**b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b,
}


class NotConstant(DslError):
    """A name that is not a compile-time constant (a tensor, or unknown)."""


def evaluate(expr: s.Expr, env: Mapping[str, object]) -> object:
    """The value of a compile-time expression over `env` (names -> constants)."""
    match expr:
        case s.Literal(value=value):
            return value
        case s.Name(name=name):
            if name not in env:
                raise NotConstant("E002", f"'{name}' is not a parameter or a let-bound constant here", expr.loc)
            return env[name]
        case s.ListExpr(items=items) | s.TupleExpr(items=items):
            return [evaluate(i, env) for i in items]
        case s.Unary(op="-", operand=operand):
            return -_number(evaluate(operand, env), expr)
        case s.Unary(op="not", operand=operand):
            return not _boolean(evaluate(operand, env), expr)
        case s.Binary(op="and", lhs=lhs, rhs=rhs):
            return _boolean(evaluate(lhs, env), expr) and _boolean(evaluate(rhs, env), expr)
        case s.Binary(op="or", lhs=lhs, rhs=rhs):
            return _boolean(evaluate(lhs, env), expr) or _boolean(evaluate(rhs, env), expr)
        case s.Binary(op=op, lhs=lhs, rhs=rhs):
            a, b = evaluate(lhs, env), evaluate(rhs, env)
            if op not in ("==", "!=") and not (_is_number(a) and _is_number(b)):
                raise DslError("E003", f"'{op}' needs numbers, got {a!r} and {b!r}", expr.loc)
            try:
                return _BINARY[op](a, b)
            except ZeroDivisionError:
                raise DslError("E003", f"division by zero in a compile-time expression ({a!r} {op} {b!r})", expr.loc) from None
        case s.Conditional(then=then, condition=condition, otherwise=otherwise):
            return evaluate(then if _boolean(evaluate(condition, env), expr) else otherwise, env)
        case s.Call(callee=s.Name(name=name), args=args, keywords=()) if name in INTRINSICS:
            values = [_number(evaluate(a, env), a) for a in args]
            try:
                return INTRINSICS[name](*values)
            except (TypeError, ValueError) as e:
                raise DslError("E003", f"{name}({', '.join(map(repr, values))}): {e}", expr.loc) from None
    raise NotConstant("E003", "this is not a compile-time expression", expr.loc)


def evaluate_int(expr: s.Expr, env: Mapping[str, object], what: str) -> int:
    value = evaluate(expr, env)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise DslError("E003", f"{what} must be an integer, got {value!r}", expr.loc)
    return value


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number(value: object, expr: s.Expr) -> object:
    if not _is_number(value):
        raise DslError("E003", f"expected a number, got {value!r}", expr.loc)
    return value


def _boolean(value: object, expr: s.Expr) -> bool:
    if not isinstance(value, bool):
        raise DslError("E003", f"expected true or false, got {value!r}", expr.loc)
    return value
