"""Helpers for emitting tile kernels: the tile-shape cost model and a kernel builder.

`KernelBuilder` owns one `tile.kernel` under construction: its buffer arguments, grid
coordinates, views and the token chain, so a per-op lowering reads like the kernel it makes:

    k = KernelBuilder("add_3", [lhs_buf, rhs_buf, out_buf], grid)
    x = k.load(k.partition(0, view_x, tile), k.tile_index())
    y = k.load(k.partition(1, view_y, tile), k.tile_index())
    k.store(k.map([x, y], body), k.partition(2, view_out, tile), k.tile_index())
    kernel = k.finish()
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import DenseArrayBase, IndexType, MemRefType, StringAttr, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from strata.dialects import tile, token
from strata.dialects.tile_types import (
    KERNEL_BYTE_BUDGET,
    TILE_BYTES_BUDGET,
    MAX_TILE_DIM,
    TensorViewType,
    TileType,
    element_bytes,
)


@dataclass(frozen=True)
class TileCostModel:
    """Tile shapes for the CPU target: a tile of about `elements` elements, widest along
    the contiguous last axis (vector loads), never over the tile byte budget."""

    elements: int = 4096
    matmul_m: int = 128
    """128 x 64 output tiles, k tiles of 128: the micro-kernel's packed b panel (32 KiB)
    and a's rows stay in L1/L2; measured best of 64..128 in each dimension at 256..2048."""
    matmul_n: int = 64
    matmul_k: int = 128
    dot_k: int = 256
    """K tile when b is read along k (transpose_b): long dot products, few horizontal sums."""
    matmul_bytes: int = 0
    """On-chip bytes for a matmul's a, b and accumulator tiles together (0: no limit; the
    GPU stages all three in shared memory): k, then m or n tiles shrink to fit."""
    matmul_min_tiles: int = 0
    """Output tiles a matmul should have at least (0: any): smaller tiles until there are
    enough to fill the machine (the GPU's streaming multiprocessors)."""
    pretranspose_rows: int = 0
    """With transpose_b, from this many rows of a on, b is transposed once into a
    workspace instead of being re-read along k by every row tile (0: never). The GPU
    asks for 256; the CPU's micro-kernel packs wᵀ by register transposes, faster than a
    strided copy (a 1024x768 @ (50257x768)ᵀ LM head: 568 ms with the copy, 302 without),
    and 16-bit operands with matmul_16bit_scale > 1 (the GPU's tensor cores stage wᵀ's rows
    as they are) are never copied either."""
    matmul_16bit_scale: int = 1
    """For f16/bf16 operands, matmul_m and matmul_n times this and matmul_bytes times its
    square: the GPU's tensor cores keep the accumulator in registers, stage 16-bit
    operands at half the bytes and need larger tiles to keep up with them."""
    matmul_16bit_k: int = 0
    """For f16/bf16 operands, the k tile (0: as other matmuls): the GPU's warpgroup mma
    (sm_90) reads k in rows of 64 16-bit elements, one 128-byte swizzled shared row."""
    matmul_16bit_n: int = 0
    """For f16/bf16 operands, a wide n tile (0: none): the warpgroup mma multiplies 64 x up to
    256 per instruction. Taken where k is long and the tiles fill whole waves
    (graph_to_tile/matmul.py, wide_tiles_pay); else matmul_n times matmul_16bit_scale."""
    flash_attention: bool = False
    """graph.attention of bf16/f16 with head sizes of 16 to 256 (multiples of 16) as the fused
    kernel marked `tile.flash_attention`, which lower-tile-to-gpu replaces by its own
    tensor-core kernel (the GPU; flash_attention.py there), and its gradient as the three
    kernels marked `tile.flash_attention_grad` (graph_to_tile/attention_grad.py)."""
    fused_attention: bool = True
    """graph.attention as one kernel with an online softmax (attention.py); False: three
    kernels (scores, softmax, values), the GPU's form."""
    resident_row_bytes: int = 0
    """A softmax or log_softmax whose rows are longer than one column tile but at most this
    many bytes is marked `tile.resident_softmax` (0: never): the GPU (sm_90) replaces it by a
    kernel that keeps each row in shared memory and reads it once (graph_to_tile/rows.py)."""
    matmul_tf32: bool = False
    """f32 matmuls tiled for sm_90's TF32 warpgroup mma (the GPU pipeline with allow_tf32):
    tiles as 16-bit ones (matmul_16bit_scale), k tiles of one 128-byte row, and both operands
    read along k (the instruction takes TF32 operands K-major only): a b along n, or an a
    read along m, is copied once with its last two axes swapped (graph_to_tile/matmul.py)."""
    flash_grad_head: int = 128
    """With flash_attention, the largest head (of q/k and of v) past 128 whose gradient takes
    the flash kernels, which take every head up to 128 (expand_attention_grad.flash_grad_shaped;
    sm_90's warpgroup kernels: 256)."""

    def elementwise_tile(self, shape: Sequence[int], element_type: Attribute, tiles: int = 2) -> tuple[int, ...]:
        """A tile shape for `shape`; `tiles` tiles of it (a kernel's loads and results)
        must fit the kernel's on-chip byte budget together."""
        per_tile = KERNEL_BYTE_BUDGET // max(tiles, 1) // element_bytes(element_type)
        budget = previous_power_of_two(min(self.elements, TILE_BYTES_BUDGET // element_bytes(element_type), per_tile))
        tile: list[int] = []
        for size in reversed(shape):
            t = min(next_power_of_two(size), MAX_TILE_DIM, max(1, budget))
            tile.insert(0, t)
            budget //= t
        return tuple(tile)


def next_power_of_two(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def previous_power_of_two(n: int) -> int:
    """The largest power of two <= n (1 for n <= 1)."""
    return 1 << (max(1, n).bit_length() - 1)


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.insert(0, step)
        step *= size
    return tuple(strides)


def broadcast_strides(
    shape: Sequence[int], target: Sequence[int], strides: Sequence[int] | None = None
) -> tuple[int, ...]:
    """Strides that read a `shape` tensor (contiguous, or with `strides`) as `target`
    under NumPy broadcasting (stride 0 on broadcast axes)."""
    own = contiguous_strides(shape) if strides is None else strides
    lead = len(target) - len(shape)
    return tuple(
        0 if axis < lead or shape[axis - lead] == 1 else own[axis - lead]
        for axis in range(len(target))
    )


def grid_of(shape: Sequence[int], tile_shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(-(-s // t) for s, t in zip(shape, tile_shape))


def flat_buffer_type(shape: Sequence[int], element_type: Attribute) -> MemRefType:
    """Buffers are flat and contiguous; views give them shape and strides."""
    return MemRefType(element_type, [max(1, math.prod(shape))])


ScalarBody = Callable[[Block, Sequence[SSAValue]], SSAValue]
"""Emits scalar ops into the block from the elements, returns the result element."""


class KernelBuilder:
    def __init__(self, name: str, buffers: Sequence[SSAValue], grid: Sequence[int]):
        self.name = name
        self.grid = tuple(grid)
        self.arg_types = [b.type for b in buffers]
        self.block = Block(arg_types=self.arg_types)
        self.entry = self.block
        self.program_ids = [self.add(tile.ProgramIdOp(d)).results[0] for d in range(len(grid))]
        self.token = self.add(token.MakeOp()).results[0]
        self._constants: dict[int, SSAValue] = {}

    def add(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def index(self, value: int) -> SSAValue:
        """An index constant, defined once at the top of the kernel so every loop sees it."""
        if value not in self._constants:
            constant = arith.ConstantOp.from_int_and_width(value, IndexType())
            self.entry.insert_op_before(constant, self.entry.first_op)
            self._constants[value] = constant.results[0]
        return self._constants[value]

    def partition(self, arg: int, view: TensorViewType, tile_shape: Sequence[int]) -> SSAValue:
        """Kernel argument `arg` viewed and cut into tiles, defined at the kernel's top
        level (even while a loop body is being built) so every later loop can use it."""
        made = tile.MakeTensorViewOp(self.entry.args[arg], view)
        partition = tile.MakePartitionViewOp(made.results[0], tile_shape)
        self.entry.add_ops([made, partition])
        return partition.results[0]

    def load(self, partition: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
        op = self.add(tile.LoadViewTkoOp(partition, indices, self.token))
        return op.results[0]

    def store(self, value: SSAValue, partition: SSAValue, indices: Sequence[SSAValue]) -> None:
        op = self.add(tile.StoreViewTkoOp(value, partition, indices, self.token))
        self.token = op.results[0]

    def scatter_add(self, value: SSAValue, view: SSAValue, rows: SSAValue, column: SSAValue) -> None:
        op = self.add(tile.ScatterAddTkoOp(value, view, rows, column, self.token))
        self.token = op.results[0]

    def map(self, inputs: Sequence[SSAValue], result_element: Attribute, body: ScalarBody,
            shape: Sequence[int] | None = None) -> SSAValue:
        shape = shape if shape is not None else inputs[0].type.get_shape()
        block = Block(arg_types=[v.type.element_type for v in inputs])
        value = body(block, block.args)
        block.add_op(tile.YieldOp(value))
        op = self.add(tile.MapOp(inputs, TileType(shape, result_element), Region(block)))
        return op.results[0]

    def extend(self, value: SSAValue, element: Attribute, cast: type[Operation] = arith.ExtFOp) -> SSAValue:
        """The tile widened elementwise to `element` by `cast` (ExtFOp, ExtSIOp), or itself."""
        if value.type.element_type == element:
            return value

        def body(block: Block, elements) -> SSAValue:
            op = cast(elements[0], element)
            block.add_op(op)
            return op.results[0]

        return self.map([value], element, body)

    def fill(self, value: float, shape: Sequence[int], element: Attribute) -> SSAValue:
        """A tile with every element `value`."""
        from strata.lowering.scalar_rules import Emitter

        return self.map([], element, lambda block, _: Emitter(block).const(value, element), shape=shape)

    def reduce(self, value: SSAValue, axis: int, kind: str) -> SSAValue:
        t = value.type
        shape = [1 if a == axis else d for a, d in enumerate(t.get_shape())]
        return self.add(
            tile.ReduceOp.create(
                operands=[value],
                result_types=[TileType(shape, t.element_type)],
                properties={"axes": DenseArrayBase.from_list(i64, [axis]), "kind": StringAttr(kind)},
            )
        ).results[0]

    def broadcast(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        result = TileType(shape, value.type.element_type)
        return self.add(tile.BroadcastOp.create(operands=[value], result_types=[result])).results[0]

    def iota(self, axis: int, shape: Sequence[int]) -> SSAValue:
        return self.add(tile.IotaOp(axis, TileType(shape, i64))).results[0]

    def loop(
        self,
        count: int | SSAValue,
        carried: Sequence[SSAValue],
        body: Callable[[SSAValue, Sequence[SSAValue]], Sequence[SSAValue]],
        start: int | SSAValue = 0,
    ) -> Sequence[SSAValue]:
        """scf.for over steps start .. count - 1 (constants, or indices computed in the
        kernel) carrying tiles; `body(step, carried)` returns the next carried values.
        Returns the final ones."""
        block = Block(arg_types=[IndexType(), *(v.type for v in carried)])
        outer, self.block = self.block, block
        yielded = body(block.args[0], block.args[1:])
        self.add(scf.YieldOp(*yielded))
        self.block = outer
        upper = self.index(count) if isinstance(count, int) else count
        lower = self.index(start) if isinstance(start, int) else start
        loop = self.add(scf.ForOp(lower, upper, self.index(1), list(carried), Region(block)))
        return loop.results

    def finish(self) -> tile.KernelOp:
        self.block.add_op(tile.ReturnOp())
        return tile.KernelOp(self.name, self.arg_types, self.grid, Region(self.block))
