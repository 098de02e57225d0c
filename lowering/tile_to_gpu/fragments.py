"""Which tile.mma runs on tensor cores, and how its accumulator is spread over the warps.

A tensor-core mma multiplies 16-bit operands (bf16 or f16, widened to f32 by a `tile.map`
of `arith.extf` in the tile IR, as lower-graph-to-tile writes every low-precision matmul)
into an f32 accumulator with the warp-level `mma.sync.aligned.m16n8k16` instruction, or,
where the user allows TF32 (`lower-tile-to-gpu{tf32=true}`), f32 operands rounded to TF32
with `mma.sync.aligned.m16n8k8.tf32`. Its
accumulator lives in registers in the instruction's fragment layout (`MmaFragments`): the
block's warps form a warps_m x warps_n grid over the tile, each warp owns a
(rows / warps_m) x (columns / warps_n) part made of 16 x 8 instruction tiles, and in each
instruction tile lane l holds rows l // 4 and l // 4 + 8, columns 2 (l % 4) and 2 (l % 4) + 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type
from xdsl.ir import Attribute, SSAValue

from strata.dialects import tile
from strata.lowering.tile_to_gpu.threads import MicroTiles, ThreadMappedLowering

WARP = 32
INSTRUCTION_M, INSTRUCTION_N = 16, 8
"""The output shape of one `mma.sync.aligned.m16n8k*` (k 16 for bf16/f16, 8 for TF32)."""
MAX_CELLS = 128
"""Accumulator registers per thread at most (a thread has 255, the fragments need more)."""


@dataclass(frozen=True)
class TensorCoreKind:
    """The mma.sync instruction for an operand element type: bf16/f16 (k 16, two elements
    per 32-bit fragment word) or f32 as TF32 (k 8, one element per word, rounded to TF32's
    10-bit mantissa first)."""

    element: Attribute
    depth: int
    per_word: int

    @property
    def instruction(self) -> str:
        name = "tf32" if isinstance(self.element, Float32Type) else str(self.element)
        return f"mma.sync.aligned.m16n8k{self.depth}.row.col.f32.{name}.{name}.f32"

    @property
    def tf32(self) -> bool:
        return isinstance(self.element, Float32Type)


def tensor_core_operands(op: tile.MmaOp, tf32: bool = False) -> tuple[TensorCoreKind, SSAValue, SSAValue] | None:
    """(kind, a, b) when `op` runs on tensor cores: an f32 accumulator and both operands
    `tile.map`s that only widen bf16 or f16 tiles of one type (a and b are those tiles), or,
    with `tf32`, f32 operands (a and b are the operands)."""
    if not isinstance(op.acc.type.element_type, Float32Type):
        return None
    a, b = widened_from(op.a), widened_from(op.b)
    if a is not None and b is not None:
        element = a.type.element_type
        if isinstance(element, BFloat16Type | Float16Type) and b.type.element_type == element:
            return TensorCoreKind(element, 16, 2), a, b
        return None
    if tf32 and isinstance(op.a.type.element_type, Float32Type) and isinstance(op.b.type.element_type, Float32Type):
        return TensorCoreKind(op.a.type.element_type, 8, 1), op.a, op.b
    return None


def widened_from(value: SSAValue) -> SSAValue | None:
    """The tile `value` widens by a one-input `tile.map` of a single `arith.extf`, if it is one."""
    owner = value.owner
    if not isinstance(owner, tile.MapOp) or len(owner.inputs) != 1:
        return None
    body = list(owner.body.block.ops)
    if len(body) != 2 or not isinstance(body[0], arith.ExtFOp) or body[0].input is not owner.body.block.args[0]:
        return None
    return owner.inputs[0]


@dataclass(frozen=True)
class MmaFragments:
    """An f32 accumulator tile of `shape` ([1.., rows, columns]) in mma.sync fragments over
    a warps_m x warps_n grid of warps (see the module docstring)."""

    shape: tuple[int, ...]
    warps_m: int
    warps_n: int

    @staticmethod
    def of(shape: Sequence[int], threads: int) -> MmaFragments | None:
        """The warp grid with the fewest fragment loads per instruction, or None when no
        grid of the block's warps tiles `shape` with whole instruction tiles."""
        rows, columns = shape[-2], shape[-1]
        warps = threads // WARP
        best: tuple[float, MmaFragments] | None = None
        warps_m = 1
        while warps_m <= warps:
            warps_n = warps // warps_m
            if rows % (INSTRUCTION_M * warps_m) == 0 and columns % (INSTRUCTION_N * warps_n) == 0:
                tiles_m, tiles_n = rows // warps_m // INSTRUCTION_M, columns // warps_n // INSTRUCTION_N
                if tiles_m * tiles_n * 4 <= MAX_CELLS:
                    # Four 32-bit loads per a fragment, two per b fragment, shared by the warp's tiles.
                    loads_per_instruction = (4 * tiles_m + 2 * tiles_n) / (tiles_m * tiles_n)
                    if best is None or loads_per_instruction < best[0]:
                        best = (loads_per_instruction, MmaFragments(tuple(shape), warps_m, warps // warps_m))
            warps_m *= 2
        return best[1] if best else None

    @property
    def warp_rows(self) -> int:
        return self.shape[-2] // self.warps_m

    @property
    def warp_columns(self) -> int:
        return self.shape[-1] // self.warps_n

    @property
    def tiles_m(self) -> int:
        return self.warp_rows // INSTRUCTION_M

    @property
    def tiles_n(self) -> int:
        return self.warp_columns // INSTRUCTION_N

    @property
    def active(self) -> int:
        return self.warps_m * self.warps_n * WARP

    def lane_origin(self, k: ThreadMappedLowering) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue]:
        """(first row of this warp, first column of this warp, lane // 4, lane % 4)."""
        warp = k.emit(arith.DivUIOp(k.thread, k.index(WARP)))
        lane = k.emit(arith.RemUIOp(k.thread, k.index(WARP)))
        group = k.emit(arith.DivUIOp(lane, k.index(4)))
        thread_in_group = k.emit(arith.RemUIOp(lane, k.index(4)))
        warp_row = k.mul(k.emit(arith.DivUIOp(warp, k.index(self.warps_n))), k.index(self.warp_rows))
        warp_column = k.mul(k.emit(arith.RemUIOp(warp, k.index(self.warps_n))), k.index(self.warp_columns))
        return warp_row, warp_column, group, thread_in_group

    def cells(self, k: ThreadMappedLowering) -> list[list[SSAValue]]:
        """This thread's cells as tile indices: per instruction tile (row-major over the
        warp's part), its four accumulator registers c0..c3."""
        warp_row, warp_column, group, thread_in_group = self.lane_origin(k)
        row = k.add(warp_row, group)
        column = k.add(warp_column, k.mul(thread_in_group, k.index(2)))
        zeros = [k.index(0)] * (len(self.shape) - 2)
        cells = []
        for tm in range(self.tiles_m):
            for tn in range(self.tiles_n):
                for register in range(4):
                    r = k.add(row, k.index(tm * INSTRUCTION_M + 8 * (register // 2)))
                    c = k.add(column, k.index(tn * INSTRUCTION_N + register % 2))
                    cells.append([*zeros, r, c])
        return cells


AccumulatorLayout = MicroTiles | MmaFragments


def accumulator_layout(op: tile.MmaOp, threads: int, tf32: bool = False) -> AccumulatorLayout:
    """Tensor-core fragments where `op` qualifies and its tile fits them, else micro-tiles."""
    shape = op.acc.type.get_shape()
    operands = tensor_core_operands(op, tf32)
    if operands is not None and op.a.type.get_shape()[-1] % operands[0].depth == 0:
        fragments = MmaFragments.of(shape, threads)
        if fragments is not None:
            return fragments
    return MicroTiles.of(shape, threads)


def ldmatrix_lanes(k: ThreadMappedLowering, chunk: int) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(lane, lane % 16, lane // 16 · chunk): this lane, and the row and column (in elements,
    `chunk` per 16 bytes) it addresses for an ldmatrix.x4 of a warp's 16-row tile: lanes 0-15
    the rows' first 16 bytes, lanes 16-31 their second."""
    lane = k.emit(arith.RemUIOp(k.thread, k.index(WARP)))
    lane_row = k.emit(arith.RemUIOp(lane, k.index(16)))
    lane_column = k.mul(k.emit(arith.DivUIOp(lane, k.index(16))), k.index(chunk))
    return lane, lane_row, lane_column
