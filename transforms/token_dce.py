"""`token-dce`: remove ordering nobody needs.

Before:

    %t0 = token.make : !token.token
    %t1 = token.make : !token.token                  // never consumed
    %j = token.join %t0 : !token.token               // a join of one token
    %k = token.join %j, %t2, %t2 : !token.token      // a repeated operand, a nested join
    %x, %t3 = tile.load_view_tko %p[%i] token %j ...

After:

    %t0 = token.make : !token.token
    %k = token.join %t0, %t2 : !token.token
    %x, %t3 = tile.load_view_tko %p[%i] token %t0 ...

Joins are associative, commutative and idempotent (dialects/token.py), so flattening
nested joins and dropping repeats keeps every order. Memory ops are never removed: their
result tokens may simply go unused.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.passes import ModulePass

from strata.dialects import token


class FlattenJoin(RewritePattern):
    """join(a, join(b, c), a) -> join(a, b, c): nested joins inlined, repeats dropped."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: token.JoinOp, rewriter: PatternRewriter):
        flat = []
        for value in op.tokens:
            inner = value.owner
            for t in inner.tokens if isinstance(inner, token.JoinOp) else (value,):
                if t not in flat:
                    flat.append(t)
        if flat != list(op.tokens):
            rewriter.replace(op, token.JoinOp(*flat))


class ForwardSingleJoin(RewritePattern):
    """join(a) -> a."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: token.JoinOp, rewriter: PatternRewriter):
        if len(op.tokens) == 1:
            rewriter.replace(op, [], [op.tokens[0]])


@dataclass(frozen=True)
class TokenDcePass(ModulePass):
    """Remove unused tokens and redundant joins (see module docstring)."""

    name = "token-dce"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # token.make and token.join are Pure: the applier's dead-code elimination erases
        # those whose token nobody consumes.
        patterns = GreedyRewritePatternApplier([FlattenJoin(), ForwardSingleJoin()])
        PatternRewriteWalker(patterns, walk_reverse=True).rewrite_module(op)
