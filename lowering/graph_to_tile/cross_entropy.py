"""graph.cross_entropy in `lower-graph-to-tile`: a row kernel over the logits (rows.py's
RowKernel) for each row's loss, then a mean kernel."""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import BFloat16Type, Float16Type, TensorType, f32, i64
from xdsl.ir import SSAValue

from strata.dialects import graph, tile
from strata.dialects.graph_base import shape_of
from strata.dialects.opinfo import register_tile_lowering
from strata.dialects.tile_types import TensorViewType
from strata.lowering.graph_to_tile.indexed import out_of_range
from strata.lowering.graph_to_tile.program import ProgramLowering
from strata.lowering.graph_to_tile.rows import RowKernel, RowLayout, column_partials_pay, reduce_axis
from strata.lowering.scalar_rules import Emitter
from strata.support.locations import location_prefix


@register_tile_lowering(graph.CrossEntropyOp)
def lower_cross_entropy(op: graph.CrossEntropyOp, p: ProgramLowering) -> None:
    """Per row: logsumexp(logits) - logits[label] (the label picked by a masked sum, after
    a tile.check that labels lie in [0, C); rows of several column tiles in one online
    pass, RowKernel.online_max_sum, on the GPU with per-column partials); then the mean
    over rows. The per-row losses of f16/bf16 logits are an f32 workspace: only the mean
    is rounded."""
    logits_type = op.logits.type
    n, classes = shape_of(logits_type)
    element = logits_type.element_type
    wide = f32 if isinstance(element, (Float16Type, BFloat16Type)) else element
    layout = RowLayout.of((n, classes), 1, p.cost.elements)
    logits, labels = p.buffer_of(op.logits), p.buffer_of(op.labels)
    losses = p.mark_workspace(p.new_buffer(TensorType(wide, [n])))
    row = RowKernel(op, p, layout, [logits, labels, losses], element, column_partials=column_partials_pay(p))
    k = row.k
    x = k.partition(0, layout.view(element), layout.tile)
    label_view = TensorViewType((n, classes), op.labels.type.element_type, (1, 0))
    label_tile = k.extend(k.load(k.partition(1, label_view, layout.tile), [*k.program_ids, k.index(0)]), i64, arith.ExtSIOp)
    message = f"{location_prefix(op)}'graph.cross_entropy': a label is outside [0, {classes})"
    k.add(tile.CheckOp(out_of_range(k, label_tile, classes), message))

    def picked(column: SSAValue) -> SSAValue:
        columns = k.iota(1, layout.tile)
        origin = k.add(arith.IndexCastOp(k.add(arith.MuliOp(column, k.index(layout.tile[-1]))).results[0], i64)).results[0]

        def select(e: Emitter, a: Sequence[SSAValue]) -> SSAValue:
            hit = e(arith.CmpiOp(e(arith.AddiOp(a[1], origin)), a[2], "eq"))
            return e(arith.SelectOp(hit, a[0], e.const(0.0, a[0].type)))

        return row.map([row.load(x, column), columns, label_tile], select)

    if layout.steps > 1:  # one online pass for the max, the sum of exp and the label's logit
        largest, total, (target,) = row.online_max_sum(lambda c: row.load(x, c), [picked])
    else:
        largest = row.row_pass(float("-inf"), "max", lambda c: row.load(x, c), arith.MaximumfOp)
        exp_shifted = lambda c: row.map(  # noqa: E731
            [row.load(x, c), row.spread(largest)], lambda e, a: e(xmath.ExpOp(e(arith.SubfOp(*a))))
        )
        total = row.row_pass(0.0, "sum", exp_shifted, arith.AddfOp)
        target = row.row_pass(0.0, "sum", picked, arith.AddfOp)

    def loss(e: Emitter, a: Sequence[SSAValue]) -> SSAValue:
        largest, total, target = a
        return e(arith.SubfOp(e(arith.AddfOp(largest, e(xmath.LogOp(total)))), target))

    result = row.narrow(row.map([largest, total, target], loss), wide)
    k.store(result, k.partition(2, layout.reduced_view(wide), layout.row_tile), [*k.program_ids, k.index(0)])
    p.launch(k, [logits, labels, losses])
    mean = reduce_axis(op, p, losses, (n,), 0, wide, 1.0 / n if n else math.nan, reducer=graph.ReduceMeanOp, out_element=element)
    p.bind(op.result, mean)
