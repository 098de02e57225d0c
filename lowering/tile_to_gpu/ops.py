"""lower-tile-to-gpu for tile.reduce (warp shuffles) and scf.for
(loop-carried tiles in shared memory or registers); tile.mma is in mma.py. See lower.py's
module docstring for the design.
"""

from __future__ import annotations

from math import prod

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    i32,
    i64,
)
from xdsl.ir import Block, Region, SSAValue

from strata.dialects import tile, token
from strata.dialects.graph_base import is_float
from strata.support.errors import StrataError
from strata.lowering.tile_builder import next_power_of_two, previous_power_of_two
from strata.lowering.tile_to_gpu.kernel import GPU_LOWERINGS, NVVM_PREFIX, GpuKernelLowering
from strata.lowering.tile_to_gpu.threads import WARP, RegionValues
from strata.lowering.tile_to_gpu.tensor_core_loop import pipelined_loop
from strata.lowering.tile_to_gpu.warpgroup_loop import warpgroup_loop
from strata.lowering.tile_to_gpu.tiles import PartialsTile, RegisterTile, carried_in_registers, cell_values, register_tile_in
from strata.lowering.tile_to_loops.kernel import (
    REASSOCIATE,
    REDUCTION_COMBINERS,
    BufferTile,
    reduction_identity,
    stable_copies,
    static_value,
)

FULL_MASK = -1
SHUFFLE_CLAMP = WARP - 1
SHUFFLES = {
    Float32Type: (f"{NVVM_PREFIX}shfl.sync.bfly.f32", Float32Type()),
    IntegerType: (f"{NVVM_PREFIX}shfl.sync.bfly.i32", i32),
}


def i32_constant(k: GpuKernelLowering, value: int) -> SSAValue:
    return k.emit(arith.ConstantOp(IntegerAttr(value, i32)))


def shuffle_xor(k: GpuKernelLowering, value: SSAValue, offset: int) -> SSAValue:
    """The `value` of the lane `offset` away in butterfly order (shfl.sync.bfly, whole warp);
    64-bit values travel as two 32-bit halves, f16 and bf16 as f32."""
    t = value.type
    if isinstance(t, Float16Type | BFloat16Type):
        wide = k.emit(arith.ExtFOp(value, Float32Type()))
        return k.emit(arith.TruncFOp(shuffle_xor(k, wide, offset), t))
    if isinstance(t, Float64Type):
        bits = k.emit(arith.BitcastOp(value, i64))
        return k.emit(arith.BitcastOp(shuffle_xor(k, bits, offset), t))
    if isinstance(t, IntegerType) and t.width.data == 64:
        low = k.emit(arith.TruncIOp(value, i32))
        high = k.emit(arith.TruncIOp(k.emit(arith.ShRUIOp(value, k.emit(arith.ConstantOp(IntegerAttr(32, i64))))), i32))
        low, high = (k.emit(arith.ExtUIOp(shuffle_xor(k, half, offset), i64)) for half in (low, high))
        shifted = k.emit(arith.ShLIOp(high, k.emit(arith.ConstantOp(IntegerAttr(32, i64)))))
        return k.emit(arith.OrIOp(shifted, low))
    if isinstance(t, IntegerType) and t.width.data == 32 or isinstance(t, Float32Type):
        name, type_ = SHUFFLES[type(t)]
        args = [i32_constant(k, FULL_MASK), value, i32_constant(k, offset), i32_constant(k, SHUFFLE_CLAMP)]
        return k.call(name, args, ((i32, type_, i32, i32), (type_,)))
    raise StrataError(f"lower-tile-to-gpu: no warp shuffle for {t}")


def combiner(k: GpuKernelLowering, kind: str, element_type):
    float_op, int_op = REDUCTION_COMBINERS[kind]
    if is_float(element_type):
        return lambda a, b: k.emit(float_op(a, b, REASSOCIATE))
    return lambda a, b: k.emit(int_op(a, b))


def neutral(k: GpuKernelLowering, element_type, kind: str) -> SSAValue:
    """The reduction's identity element."""
    return k.emit(arith.ConstantOp(reduction_identity(element_type, kind)))


def warp_position(k: GpuKernelLowering) -> tuple[SSAValue, SSAValue]:
    """(this thread's warp, whether it is its warp's first lane)."""
    warp = k.emit(arith.DivUIOp(k.thread, k.index(WARP)))
    first_lane = k.emit(arith.CmpiOp(k.emit(arith.RemUIOp(k.thread, k.index(WARP))), k.index(0), "eq"))
    return warp, first_lane


def butterfly(k: GpuKernelLowering, value: SSAValue, lanes: int, combine) -> SSAValue:
    """`value` combined over aligned groups of `lanes` lanes (at most a warp)."""
    offset = lanes // 2
    while offset:
        value = combine(value, shuffle_xor(k, value, offset))
        offset //= 2
    return value


def _reduce(k: GpuKernelLowering, op: tile.ReduceOp) -> None:
    if not (_reduce_in_row_lanes(k, op) or _reduce_straight_line(k, op)):
        _reduce_in_groups(k, op)


def _reduce_in_row_lanes(k: GpuKernelLowering, op: tile.ReduceOp) -> bool:
    """A reduction of the last axis of a straight-line tile whose rows are shorter than the
    block, each row on L lanes of one warp (ThreadMappedLowering.row_lanes): each thread
    folds its elements of its row and a butterfly over the L lanes gives every one of them
    the row's result, which straight-line code of the region reads from the register (its
    element is cached under the result's key). The row's first lane also writes it to a
    shared row of results (a PartialsTile of one part) for other readers; a reader that
    takes it from there gets its barrier. False if the reduction does not apply."""
    source = k.tile_of(op.input)
    shape = tuple(op.input.type.get_shape())
    lanes = k.row_lanes(shape)
    if lanes is None or sorted({a % len(shape) for a in op.axes.get_values()}) != [len(shape) - 1]:
        return False
    out_shape = tuple(op.result.type.get_shape())
    element_type = op.result.type.element_type
    kind = op.kind.data
    combine = combiner(k, kind, element_type)
    scratch = k.shared_alloca([prod(out_shape)], element_type)
    result = PartialsTile(scratch, 1, out_shape, combine, [*source.extents[:-1], k.index(1)])

    def per_thread() -> None:
        total, row_inside = None, None
        for iteration in range(k.straight_line_iterations(shape)):
            indices, inside = k.element_indices(shape, source.extents, iteration)
            value = k.read(source, indices)
            if inside is not None:
                value = k.emit(arith.SelectOp(inside, value, neutral(k, element_type, kind)))
            if iteration == 0:  # column 0: inside exactly when the row is
                row, row_inside = indices[:-1], inside
            total = value if total is None else combine(total, value)
        total = butterfly(k, total, lanes, combine)
        out_indices = [*row, k.index(0)]
        k.element_cache[k.keys.element_key(result, out_indices)] = total
        slot = result.output(k, out_indices)
        first_lane = k.emit(arith.CmpiOp(k.emit(arith.RemUIOp(k.thread, k.index(lanes))), k.index(0), "eq"))
        k.note_write(scratch, (), None)
        writes = k.all_of([first_lane] + ([row_inside] if row_inside is not None else []))
        k.guarded(writes, lambda: k.emit(memref.StoreOp.get(total, scratch, [slot])))

    code, accesses = k.block_code(per_thread, straight_line=True)
    k.place_inline(code, accesses)
    k.values[op.result] = result
    return True


def _reduce_straight_line(k: GpuKernelLowering, op: tile.ReduceOp) -> bool:
    """A reduction over trailing axes at least a block long, whose tile is a few elements per
    thread, in straight-line code over the same elements the thread loops of the kernel take
    (so a row read by a max, a sum and a store is loaded once): each thread folds its
    elements of an output, a warp butterfly combines lanes, and each warp's partial goes to
    a shared scratch row. The result is those partials (PartialsTile): a reader combines
    the partials of its output, after the one barrier the scratch writes call for.
    False if the reduction does not apply."""
    source = k.tile_of(op.input)
    shape = tuple(op.input.type.get_shape())
    out_shape = tuple(op.result.type.get_shape())
    axes = sorted({a % len(shape) for a in op.axes.get_values()})
    iterations = k.straight_line_iterations(shape)
    if k.row_lanes(shape) is not None:  # not the block-strided order the folds below assume
        return False
    block = k.block_size
    reduced = prod(shape[a] for a in axes)
    # Rows shorter than the block span several warps per element column: lane groups fold
    # them with fewer shuffles (measured: 32768x128 softmax 15 us in groups, 20 us here).
    if iterations is None or reduced < block or axes != list(range(len(shape) - len(axes), len(shape))):
        return False
    outputs, parts = prod(shape) // reduced, block // WARP
    element_type = op.result.type.element_type
    kind = op.kind.data
    combine = combiner(k, kind, element_type)
    scratch = k.shared_alloca([outputs * parts], element_type)

    def per_thread() -> None:
        values = []
        for iteration in range(iterations):
            indices, inside = k.element_indices(shape, source.extents, iteration)
            value = k.read(source, indices)
            values.append(value if inside is None else k.emit(arith.SelectOp(inside, value, neutral(k, element_type, kind))))
        per_output = reduced // block  # consecutive iterations of one output
        warp, first_lane = warp_position(k)
        k.note_write(scratch, (), None)
        for output in range(outputs):
            partial = values[output * per_output]
            for value in values[output * per_output + 1 : (output + 1) * per_output]:
                partial = combine(partial, value)
            partial = butterfly(k, partial, WARP, combine)
            slot = k.add(warp, k.index(output * parts))
            k.guarded(first_lane, lambda slot=slot, partial=partial: k.emit(memref.StoreOp.get(partial, scratch, [slot])))

    code, accesses = k.block_code(per_thread, straight_line=True)
    k.place_inline(code, accesses)
    one = k.index(1)
    extents = [one if a in axes else e for a, e in enumerate(source.extents)]
    k.values[op.result] = PartialsTile(scratch, parts, out_shape, combine, extents)
    return True


def _reduce_in_groups(k: GpuKernelLowering, op: tile.ReduceOp) -> None:
    """Each output element gets a group of `lanes` threads: strided partial folds, then a
    butterfly of warp shuffles; groups wider than a warp meet in a shared scratch row."""
    source = k.tile_of(op.input)
    in_shape = tuple(op.input.type.get_shape())
    out_shape = tuple(op.result.type.get_shape())
    axes = sorted({a % len(in_shape) for a in op.axes.get_values()})
    element_type = op.result.type.element_type
    kind = op.kind.data
    outputs, reduced = prod(out_shape), prod(in_shape[a] for a in axes)
    lanes = min(next_power_of_two(reduced), previous_power_of_two(k.block_size // outputs))
    groups = k.block_size // lanes
    buffer = k.shared_alloca(out_shape, element_type)
    scratch = k.shared_alloca([k.block_size // WARP], element_type) if lanes > WARP else None
    combine = combiner(k, kind, element_type)
    kept_axes = [a for a in range(len(in_shape)) if a not in axes]

    def per_thread() -> None:
        base = k.cursor.args[0]
        group = k.emit(arith.DivUIOp(k.thread, k.index(lanes)))
        lane = k.emit(arith.RemUIOp(k.thread, k.index(lanes)))
        output = k.add(base, group)
        valid = [] if outputs % groups == 0 else [k.emit(arith.CmpiOp(output, k.index(outputs), "ult"))]
        out_indices = k.delinearize(output, out_shape)
        start = neutral(k, element_type, kind)

        def fold(r: SSAValue, partial: SSAValue) -> SSAValue:
            reduced_indices = k.delinearize(r, [in_shape[a] for a in axes])
            indices = [None] * len(in_shape)
            for a, i in zip(axes, reduced_indices):
                indices[a] = i
            for a in kept_axes:
                indices[a] = out_indices[a]
            checks = list(valid)
            for a, i in enumerate(indices):
                if static_value(source.extents[a]) != in_shape[a]:
                    checks.append(k.emit(arith.CmpiOp(i, source.extents[a], "ult")))
            inside = k.all_of(checks)
            if inside is None:
                return combine(partial, k.read(source, indices))
            then_block, else_block = Block(), Block()
            outer, k.cursor = k.cursor, then_block
            k.emit(scf.YieldOp(k.read(source, indices)))
            k.cursor = else_block
            k.emit(scf.YieldOp(neutral(k, element_type, kind)))
            k.cursor = outer
            element = k.emit(scf.IfOp(inside, [element_type], Region(then_block), Region(else_block)))
            return combine(partial, element)

        body = Block(arg_types=[IndexType(), element_type])
        outer, k.cursor = k.cursor, body
        k.emit(scf.YieldOp(fold(body.args[0], body.args[1])))
        k.cursor = outer
        partial = k.emit(scf.ForOp(lane, k.index(reduced), k.index(lanes), [start], Region(body)))
        partial = butterfly(k, partial, min(lanes, WARP), combine)
        if scratch is not None:
            warp, first_lane = warp_position(k)
            k.guarded(first_lane, lambda: k.emit(memref.StoreOp.get(partial, scratch, [warp])))
            k.barriers.barrier(settle=False)
            warps = lanes // WARP
            has_partial = k.emit(arith.CmpiOp(lane, k.index(warps), "ult"))
            slot = k.add(k.mul(group, k.index(warps)), k.emit(arith.MinUIOp(lane, k.index(warps - 1))))
            loaded = k.emit(memref.LoadOp.get(scratch, [slot]))
            partial = k.emit(arith.SelectOp(has_partial, loaded, neutral(k, element_type, kind)))
            partial = butterfly(k, partial, warps, combine)
        leader = k.emit(arith.CmpiOp(lane, k.index(0), "eq"))
        k.note_write(buffer, out_indices, None)
        k.guarded(k.all_of([leader, *valid]), lambda: k.emit(memref.StoreOp.get(partial, buffer, out_indices)))
        if scratch is not None and outputs > groups:
            k.barriers.barrier(settle=False)  # the scratch row is reused by the next round of outputs
        k.emit(scf.YieldOp())

    block, accesses = k.block_code(per_thread)
    loop = scf.ForOp(k.index(0), k.index(outputs), k.index(groups), [], Region(block))
    k.place(loop, accesses)
    one = k.index(1)
    k.values[op.result] = BufferTile(buffer, [one if a in axes else e for a, e in enumerate(source.extents)])


def _for(k: GpuKernelLowering, op: scf.ForOp) -> None:
    """A uniform loop. An accumulator only an mma updates stays in registers (the loop
    carries the thread's cells); other carried tiles live in shared memory. A body that
    leaves shared accesses pending ends with a barrier when the next iteration's first
    accesses conflict with them."""
    body = op.body.block
    # A tensor-core k loop keeps its pipeline even for one trip: its tiles are sized for
    # dynamic shared memory, which element-wise staging (static, 48 KiB) may not hold.
    if warpgroup_loop(k, op) or pipelined_loop(k, op):
        return
    bounds = [static_value(k.values[v]) for v in (op.lb, op.ub, op.step)]
    if None not in bounds and bounds[2] > 0 and bounds[0] < bounds[1] <= bounds[0] + bounds[2]:
        _single_trip(k, op)
        return
    carried: list[BufferTile | RegisterTile | None] = []
    initial: list[SSAValue] = []
    for init, arg, result in zip(op.iter_args, body.args[1:], op.results):
        t = arg.type
        if isinstance(t, token.TokenType):
            k.values[arg] = k.values[result] = None
            carried.append(None)
            continue
        if not isinstance(t, tile.TileType):
            raise StrataError(
                f"lower-tile-to-gpu: @{k.kernel.sym_name.data}: scf.for may only carry tiles and tokens, not {t}"
            )
        start = k.tile_of(init)
        layout = carried_in_registers(k, arg)
        if layout is not None:
            values = cell_values(k, start, layout)
            initial += values
            carried.append(RegisterTile(values, layout, start.extents))
            continue
        buffer = k.materialize(start, t.get_shape(), t.element_type)
        k.values[arg] = k.iter_buffers[arg] = buffer
        carried.append(buffer)
    block = Block(arg_types=[IndexType(), *(v.type for v in initial)])
    k.values[body.args[0]] = block.args[0]
    cells = iter(block.args[1:])
    for arg, slot in zip(body.args[1:], carried):
        if isinstance(slot, RegisterTile):
            k.values[arg] = RegisterTile([next(cells) for _ in slot.values], slot.layout, slot.extents)
    outer, k.cursor = k.cursor, block
    outer_region, k.region = k.region, RegionValues()
    runs = None not in bounds and bounds[0] < bounds[1]
    entry = k.barriers.enter_loop()
    k.lower_region(body)
    yielded: list[SSAValue] = []
    copies: list[tuple[SSAValue, object, BufferTile]] = []
    for value, slot in zip(body.last_op.operands, carried):
        produced = k.tile_of(value) if slot is not None else None
        if isinstance(slot, RegisterTile):
            yielded += cell_values(k, produced, slot.layout)
        elif isinstance(slot, BufferTile) and not (isinstance(produced, BufferTile) and produced.buffer is slot.buffer):
            if register_tile_in(produced) is not None:
                produced = k.spill(produced, value.type.get_shape(), value.type.element_type)
            copies.append((value, produced, slot))
    for produced, slot in stable_copies(k, copies):
        k.copy_into(produced, slot.buffer, slot.extents)
    k.barriers.end_loop_body()
    k.emit(scf.YieldOp(*yielded))
    k.cursor, k.region = outer, outer_region
    loop = k.emit(scf.ForOp(k.values[op.lb], k.values[op.ub], k.values[op.step], initial, Region(block)))
    k.forget_region_values()  # the loop rewrote its carried tiles
    k.barriers.leave_loop(entry, always_runs=runs)
    results = iter(loop.owner.results if loop is not None else ())
    for result, slot in zip(op.results, carried):
        if isinstance(slot, RegisterTile):
            k.values[result] = RegisterTile([next(results) for _ in slot.values], slot.layout, slot.extents)
        elif slot is not None:
            k.values[result] = slot


def _single_trip(k: GpuKernelLowering, op: scf.ForOp) -> None:
    """A loop that runs once (a row that fits one chunk, a k extent of one tile) is its
    body: carried tiles stay lazy, so no shared copies and no barriers for them."""
    body = op.body.block
    k.values[body.args[0]] = k.values[op.lb]
    for init, arg in zip(op.iter_args, body.args[1:]):
        k.values[arg] = k.values[init]
    k.lower_region(body)
    for result, value in zip(op.results, body.last_op.operands):
        k.values[result] = k.values[value]


GPU_LOWERINGS.update({
    tile.ReduceOp: _reduce,
    scf.ForOp: _for,
})
