"""The `token` dialect: explicit memory ordering between tile loads and stores.

A memory op takes a token and yields a fresh one; an op that must happen after
another consumes (a join of) its token. Tokens replace blanket barriers: a GPU lowering
places a barrier only where a token orders a shared-memory write before another thread's
read (the model of NVIDIA CUDA Tile IR's make_token / join_tokens).

    %t0 = token.make : !token.token
    %t3 = token.join %t1, %t2 : !token.token

`token.join` is associative, commutative and idempotent: join(a) = a,
join(a, a) = a, join(a, join(b, c)) = join(a, b, c). Tokens are SSA values, so the
ordering they express is a DAG by construction.
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Dialect, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

MEMORY_ORDERINGS = ("weak", "relaxed", "acquire", "release")
MEMORY_SCOPES = ("block", "device", "system")


@irdl_attr_definition
class TokenType(ParametrizedAttribute, TypeAttribute):
    """An ordering edge between memory operations: `!token.token`."""

    name = "token.token"


@irdl_op_definition
class MakeOp(IRDLOperation):
    """A token with no predecessors: `%t = token.make : !token.token`."""

    name = "token.make"
    result = result_def(TokenType)
    traits = traits_def(Pure())

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self):
        super().__init__(result_types=[TokenType()])


@irdl_op_definition
class JoinOp(IRDLOperation):
    """A token ordered after all of its operands: `%t = token.join %a, %b : !token.token`."""

    name = "token.join"
    tokens = var_operand_def(TokenType)
    result = result_def(TokenType)
    traits = traits_def(Pure())

    assembly_format = "$tokens attr-dict `:` type($result)"

    def __init__(self, *tokens):
        super().__init__(operands=[list(tokens)], result_types=[TokenType()])

    def verify_(self) -> None:
        if not self.tokens:
            raise VerifyException("'token.join' needs at least one token")


def verify_ordering(op: IRDLOperation, ordering: StringAttr, scope: StringAttr) -> None:
    """Check the memory_ordering / memory_scope properties of a token-ordered access."""
    if ordering.data not in MEMORY_ORDERINGS:
        raise VerifyException(
            f"'{op.name}': memory_ordering must be one of {', '.join(MEMORY_ORDERINGS)}, "
            f'got "{ordering.data}"'
        )
    if scope.data not in MEMORY_SCOPES:
        raise VerifyException(
            f"'{op.name}': memory_scope must be one of {', '.join(MEMORY_SCOPES)}, "
            f'got "{scope.data}"'
        )


Token = Dialect("token", [MakeOp, JoinOp], [TokenType])
