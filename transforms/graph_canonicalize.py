"""Canonicalization patterns of the `graph` dialect (run by xDSL's `canonicalize` pass).

Graph ops carry the `GraphCanonicalization` trait, which asks the op registry
(dialects/opinfo.py) for the patterns registered here, so `strata-opt -p canonicalize`
applies these next to upstream ones:

    %t = graph.transpose %x {permutation = array<i64: 1, 0>}      // gone: transpose∘transpose
    %u = graph.transpose %t {permutation = array<i64: 1, 0>}      //       is the identity
    %s = graph.scale %u {value = 1.0 : f64}                        // gone: scale by 1
    %c = graph.add %k0, %k1                                        // folded: both constants
    %g = graph.gelu (graph.reshape %m)                             // reshape(gelu(%m)): the
                                                                   // gelu joins %m's kernel

Numerics: nothing here changes a result. `scale∘scale` becomes one scale only when one
factor is a power of two or zero, where the one-step product equals the two-step one
(outside overflow and subnormal results); scale by 3 then by 0.75 stays two scales, since
x·2.25 may differ from (x·3)·0.75 in the last bit. Constant folding
uses the reference semantics registered for the op, i.e. it computes what the program
would have computed.
"""

from __future__ import annotations

import math
import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from strata.dialects import graph
from strata.dialects.graph_fused import fusible
from strata.dialects.opinfo import evaluate, op_info, register_canonicalization
from strata.support.errors import ExecutionError
from strata.support.dtypes import dense_to_numpy, numpy_to_dense

FOLD_ELEMENT_LIMIT = 4096
"""Largest result (in elements) that constant folding materializes as a literal."""


class ComposeTransposes(RewritePattern):
    """transpose(transpose(x, p), q) -> transpose(x, p∘q), or x when that is the identity."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.TransposeOp, rewriter: PatternRewriter):
        inner = op.x.owner
        if not isinstance(inner, graph.TransposeOp):
            return
        first = inner.params()["permutation"]
        composed = tuple(first[p] for p in op.params()["permutation"])
        if composed == tuple(range(len(composed))):
            rewriter.replace(op, [], [inner.x])
            return
        rewriter.replace(op, graph.TransposeOp.make([inner.x], permutation=composed))


class ComposeReshapes(RewritePattern):
    """reshape(reshape(x)) -> reshape(x)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ReshapeOp, rewriter: PatternRewriter):
        inner = op.x.owner
        if isinstance(inner, graph.ReshapeOp):
            rewriter.replace(op, graph.ReshapeOp.make([inner.x], op.result.type))


class RemoveIdentityShapeOp(RewritePattern):
    """reshape / broadcast_to / transpose / slice that return x unchanged -> x."""

    @staticmethod
    def is_identity(op: Operation) -> bool:
        if op.results[0].type != op.operands[0].type:
            return False
        if isinstance(op, graph.TransposeOp):
            permutation = op.params()["permutation"]
            return permutation == tuple(range(len(permutation)))
        if isinstance(op, graph.SliceOp):
            p = op.params()
            return all(s == 0 for s in p["starts"]) and all(s == 1 for s in p["steps"])
        return True

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        if self.is_identity(op):
            rewriter.replace(op, [], [op.operands[0]])


class SinkReshapes(RewritePattern):
    """An elementwise op (no broadcasting) most of whose operands are reshapes of one shape
    runs on that shape, reshaped after: gelu(reshape(x)) -> reshape(gelu(x)), and
    add(reshape(a), reshape(b)) -> reshape(add(a, b)); an operand that is not such a
    reshape is reshaped to it (reshapes of row-major buffers are free). The op then sits
    next to what produced x, where fuse-elementwise can make it that kernel's epilogue (a
    PyTorch Linear's view of the matmul result no longer keeps the activation after it out
    of the matmul's kernel). Only a majority of reshaped operands moves, so the rewrite
    never undoes itself."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        if len(op.results) != 1:
            return
        shape = op.results[0].type.get_shape()
        if any(v.type.get_shape() != shape for v in op.operands):
            return
        reshaped = [v.owner for v in op.operands if isinstance(v.owner, graph.ReshapeOp)]
        if not reshaped:
            return
        source = reshaped[0].x.type.get_shape()
        moved = [r for r in reshaped if r.x.type.get_shape() == source]
        if 2 * len(moved) <= len(op.operands):
            return
        operands = []
        for value in op.operands:
            if isinstance(value.owner, graph.ReshapeOp) and value.owner in moved:
                operands.append(value.owner.x)
                continue
            reshape = graph.ReshapeOp.make([value], TensorType(value.type.element_type, source))
            rewriter.insert(reshape)
            operands.append(reshape.result)
        result_type = TensorType(op.results[0].type.element_type, source)
        inner = type(op).make(operands, result_type, **op.params())
        rewriter.insert(inner)
        rewriter.replace(op, graph.ReshapeOp.make([inner.results[0]], op.results[0].type))


class RemoveScaleByOne(RewritePattern):
    """scale(x, 1.0) -> x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ScaleOp, rewriter: PatternRewriter):
        if op.params()["value"] == 1.0:
            rewriter.replace(op, [], [op.x])


class ComposeScales(RewritePattern):
    """scale(scale(x, a), b) -> scale(x, a·b) when that is exact: a or b a power of two
    or zero (see module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ScaleOp, rewriter: PatternRewriter):
        inner = op.x.owner
        if isinstance(inner, graph.ScaleOp):
            a, b = inner.params()["value"], op.params()["value"]
            if _exact_factor(a) or _exact_factor(b):
                rewriter.replace(op, graph.ScaleOp.make([inner.x], value=a * b))


def _exact_factor(value: float) -> bool:
    """Whether multiplying by `value` commutes with rounding: zero or a power of two."""
    return value == 0 or (math.isfinite(value) and math.frexp(abs(value))[0] == 0.5)


class RemoveDoubleNegation(RewritePattern):
    """neg(neg(x)) -> x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.NegOp, rewriter: PatternRewriter):
        inner = op.x.owner
        if isinstance(inner, graph.NegOp):
            rewriter.replace(op, [], [inner.x])


class FoldConstantOperands(RewritePattern):
    """An op whose operands are all graph.constant becomes a graph.constant holding its
    reference result, when that has at most FOLD_ELEMENT_LIMIT elements. An op that
    would fail at run time (an id out of range) is left for run time to report."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        if not op.operands or not all(
            isinstance(v.owner, graph.ConstantOp) for v in op.operands
        ) or len(op.results) != 1:
            return
        result_type = op.results[0].type
        if np.prod(result_type.get_shape()) > FOLD_ELEMENT_LIMIT or op_info(op).reference is None:
            return
        operands = [dense_to_numpy(v.owner.value) for v in op.operands]
        try:
            (value,) = evaluate(op, operands)
        except ExecutionError:
            return
        folded = graph.ConstantOp.make([], value=numpy_to_dense(value, result_type))
        rewriter.replace(op, folded)


_FOLD = FoldConstantOperands()
_IDENTITY = RemoveIdentityShapeOp()

PATTERNS: dict[type[Operation], tuple[RewritePattern, ...]] = {
    graph.TransposeOp: (_IDENTITY, ComposeTransposes()),
    graph.ReshapeOp: (_IDENTITY, ComposeReshapes()),
    graph.BroadcastToOp: (_IDENTITY,),
    graph.SliceOp: (_IDENTITY,),
    graph.ScaleOp: (RemoveScaleByOne(), ComposeScales()),
    graph.NegOp: (RemoveDoubleNegation(),),
}
"""Op-specific patterns; every graph op except constant also gets constant folding."""


_SINK_RESHAPES = SinkReshapes()

for _op_type in graph.GRAPH_OPS:
    if _op_type is not graph.ConstantOp:
        sink = (_SINK_RESHAPES,) if fusible(_op_type) else ()
        register_canonicalization(_op_type, (*PATTERNS.get(_op_type, ()), *sink, _FOLD))
