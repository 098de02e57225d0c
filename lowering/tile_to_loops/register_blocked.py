"""tile.mma's register-blocked CPU micro-kernel, as `lower-tile-to-loops` emits it.

The accumulator tile is cut into blocks of MICRO_ROWS rows x MICRO_VECTORS vectors. A
block is loaded into vector registers once, carried through the k loop as loop values
(never stored in between), and stored once:

    for j in columns, step MICRO_VECTORS * lanes:            # a panel of b, reused ...
      for i in rows, step MICRO_ROWS:                        # ... by every row block
        acc[r][v] = vector.load target[i + r, j + v * lanes]
        for kk in depth:                                     # carries acc[r][v]
          bv[v] = vector.load b[kk, j + v * lanes]
          acc[r][v] = vector.fma(vector.broadcast a[i + r, kk], bv[v], acc[r][v])
        vector.store acc[r][v], target[i + r, j + v * lanes]

Per k step that is MICRO_VECTORS loads of b, MICRO_ROWS broadcasts of a and
MICRO_ROWS * MICRO_VECTORS FMAs: 8 x 2 keeps 16 accumulators, 2 b vectors and a
broadcast in 19 of AVX-512's 32 registers, and two FMA units busy. Remainder rows and
columns get smaller blocks of the same form. b is first packed into a stack tile, one
contiguous run per vector column (`pack`), whatever its layout (row-major, transposed,
or widened from f16/bf16). Each multiply-add is one FMA (one rounding), as tile.mma's other CPU
loop orders contract them too.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref, vector
from xdsl.dialects.builtin import DenseArrayBase, Float32Type, Float64Type, VectorType, i64
from xdsl.ir import SSAValue

from strata.lowering.tile_to_loops.kernel import BufferTile, KernelLowering, LoadedTile, Tile

VECTOR_BITS = 512
MICRO_ROWS = 8
MICRO_VECTORS = 2


def fits_micro_kernel(target: BufferTile, columns: int) -> bool:
    """Whether a tile can take the micro-kernel: a float element, and `columns` a whole
    number of vectors."""
    element = target.buffer.type.element_type
    return isinstance(element, Float32Type | Float64Type) and columns % (VECTOR_BITS // element.bitwidth) == 0


def register_blocked(k: KernelLowering, a: Tile, b: Tile, target: BufferTile, zeros: Sequence[SSAValue],
                     rows: int, depth: int, columns: int) -> None:
    """Emit target += a @ b as the micro-kernel, for a tile that fits_micro_kernel and is
    whole: a and b are read at rows x depth and depth x columns whatever their extents."""
    element = target.buffer.type.element_type
    lanes = VECTOR_BITS // element.bitwidth
    packed = pack(k, b, depth, columns, lanes, element)
    kernel = MicroKernel(k, a, packed, target, list(zeros), k.index(depth), VectorType(element, [lanes]))
    panel = MICRO_VECTORS * lanes
    full_columns = columns - columns % panel
    if full_columns:
        k.loop(k.index(full_columns), lambda j: kernel.panel(j, MICRO_VECTORS, rows), step=panel)
    if columns % panel:
        kernel.panel(k.index(full_columns), (columns % panel) // lanes, rows)


def pack(k: KernelLowering, b: Tile, depth: int, columns: int, lanes: int, element) -> SSAValue:
    """b copied into a stack buffer [columns / lanes, depth, lanes]: each vector column of
    b becomes one contiguous run. Unpacked, the rows of b are a row stride apart, and at a
    stride that is a multiple of 4 KiB (n = 1024, 2048, ...) every row falls into the
    same few L1 sets: the panel thrashes. Copying costs one load and store per element
    of b, against the MICRO_ROWS-row blocks' worth of FMAs that read each element."""
    packed = k.emit_alloca([columns // lanes, depth, lanes], element)
    if along_k(b) and depth % lanes == 0:
        pack_transposed(k, b, packed, depth, columns, VectorType(element, [lanes]))
        return packed

    def copy(indices: list[SSAValue]) -> None:
        kk, column_vector, lane = indices
        column = k.add(k.mul(column_vector, k.index(lanes)), lane)
        value = k.read(b, [*[k.index(0)] * (len(b.extents) - 2), kk, column])
        k.emit(memref.StoreOp.get(value, packed, [column_vector, kk, lane]))

    # Row by row: each row of b is read once, front to back.
    k.loop_nest([k.index(depth), k.index(columns // lanes), k.index(lanes)], copy)
    return packed


def along_k(b: Tile) -> bool:
    """b is a loaded view of some matrix w transposed (b = wᵀ: consecutive along k)."""
    return isinstance(b, LoadedTile) and b.view.get_strides()[-2] == 1 and b.view.get_strides()[-1] != 1


def pack_transposed(k: KernelLowering, b: LoadedTile, packed: SSAValue, depth: int, columns: int,
                    vector_type: VectorType) -> None:
    """`pack` for b = wᵀ, by lanes x lanes blocks: `lanes` vector loads along k (rows of
    w), a transpose in registers, `lanes` vector stores into the packed runs. Element
    by element, each packed value would be a load from a different row of w."""
    lanes = vector_type.get_shape()[0]
    zeros = [k.index(0)] * (len(b.extents) - 2)

    def block(column_vector: SSAValue, k_block: SSAValue) -> None:
        first_k = k.mul(k_block, k.index(lanes))
        first_column = k.mul(column_vector, k.index(lanes))
        rows = []
        for lane in range(lanes):
            offset = k.element_offset(b.view, b.origin, [*zeros, first_k, k.add(first_column, k.index(lane))])
            rows.append(k.emit(vector.LoadOp(b.buffer, [offset], vector_type)))
        for step, row in enumerate(transpose(k, rows, vector_type)):
            k.emit(vector.StoreOp(row, packed, [column_vector, k.add(first_k, k.index(step)), k.index(0)]))

    k.loop(k.index(columns // lanes), lambda c: k.loop(k.index(depth // lanes), lambda kb: block(c, kb)))


def transpose(k: KernelLowering, rows: list[SSAValue], vector_type: VectorType) -> list[SSAValue]:
    """The lanes x lanes matrix whose rows are `rows`, transposed, in log2(lanes) rounds
    of shuffles: round `half` swaps the off-diagonal half x half blocks of every
    2·half x 2·half block (lanes / 2, ..., 1)."""
    lanes = len(rows)
    half = lanes // 2
    while half:
        for first in (i for i in range(lanes) if not i & half):
            upper, lower = rows[first], rows[first + half]
            # Indices into the concatenation (upper, lower).
            low = [j if not j & half else lanes + j - half for j in range(lanes)]
            high = [j + half if not j & half else lanes + j for j in range(lanes)]
            rows[first], rows[first + half] = (
                k.emit(vector.ShuffleOp(upper, lower, DenseArrayBase.from_list(i64, mask), result_type=vector_type))
                for mask in (low, high)
            )
        half //= 2
    return rows


class MicroKernel:
    def __init__(self, k: KernelLowering, a: Tile, b: SSAValue, target: BufferTile, zeros: list[SSAValue],
                 depth: SSAValue, vector_type: VectorType):
        self.k, self.a, self.b, self.target, self.zeros = k, a, b, target, zeros
        self.depth, self.vector_type = depth, vector_type
        self.lanes = vector_type.get_shape()[0]

    def panel(self, column: SSAValue, vectors: int, rows: int) -> None:
        """Every row block of the columns [column, column + vectors * lanes)."""
        k = self.k
        full_rows = rows - rows % MICRO_ROWS
        if full_rows:
            k.loop(k.index(full_rows), lambda i: self.block(i, MICRO_ROWS, column, vectors), step=MICRO_ROWS)
        if rows % MICRO_ROWS:
            self.block(k.index(full_rows), rows % MICRO_ROWS, column, vectors)

    def block(self, row: SSAValue, rows: int, column: SSAValue, vectors: int) -> None:
        k = self.k
        row_indices = consecutive(k, row, rows)
        column_indices = [k.add(column, k.index(v * self.lanes)) if v else column for v in range(vectors)]
        first_vector = k.emit(arith.DivUIOp(column, k.index(self.lanes)))
        column_vectors = consecutive(k, first_vector, vectors)
        places = [[*self.zeros, r, c] for r in row_indices for c in column_indices]
        initial = [k.emit(vector.LoadOp(self.target.buffer, place, self.vector_type)) for place in places]

        def step(kk: SSAValue, accumulators: Sequence[SSAValue]) -> list[SSAValue]:
            b_vectors = [self.load_b(kk, c) for c in column_vectors]
            updated = []
            for r_index, r in enumerate(row_indices):
                a_value = k.emit(vector.BroadcastOp(k.read(self.a, [*self.zeros, r, kk]), self.vector_type))
                for v, b_vector in enumerate(b_vectors):
                    updated.append(k.emit(vector.FMAOp(a_value, b_vector, accumulators[r_index * vectors + v])))
            return updated

        final = k.loop_carrying(self.depth, initial, step)
        for value, place in zip(final, places):
            k.emit(vector.StoreOp(value, self.target.buffer, place))

    def load_b(self, kk: SSAValue, column_vector: SSAValue) -> SSAValue:
        return self.k.emit(vector.LoadOp(self.b, [column_vector, kk, self.k.index(0)], self.vector_type))


def consecutive(k: KernelLowering, start: SSAValue, count: int) -> list[SSAValue]:
    """start, start + 1, ..., start + count - 1."""
    return [start] + [k.add(start, k.index(offset)) for offset in range(1, count)]
