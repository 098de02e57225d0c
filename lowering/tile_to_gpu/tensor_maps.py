"""Copies by the tensor memory accelerator (TMA, sm_90): one thread's `cp.async.bulk.tensor`
moves a whole box of a global tensor into shared memory, swizzled, and reports the bytes
to an mbarrier, instead of every thread issuing 16-byte cp.async copies.

A copy reads through a tensor map: a 128-byte descriptor of the tensor (base address,
sizes and byte strides, outermost last) and of the box a copy takes, which only the CUDA
driver can encode (cuTensorMapEncodeTiled). The lowering records what each map needs
(`TensorMap`: the kernel argument, its view, the box) in the kernel attribute
`gpu.tensor_maps`; the NVVM translation gives the kernel a global table of that many
maps (`<kernel>_tensor_maps`, 64-byte aligned); the CUDA runtime encodes the maps from the
bound buffers' addresses and writes the table before the kernel's first launch
(runtime/tensor_maps.py).

Boxes here are 64 16-bit columns (128 bytes: the span of the 128-byte swizzle, the layout
wgmma reads, warpgroup_loop.py) by a tile's rows; a tile of wider rows takes one copy per
strip of 64 columns. Elements outside the tensor (rows past the keys, columns past the
head in its last strip) are written as zeros, and count toward the bytes the barrier
expects like any other.

    kernel: mbarrier.arrive.expect_tx [full], bytes       (the copying thread)
            cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
                [strip], [map, {column, row, batch}], [full]
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, DictionaryAttr, IntegerAttr, i32, i64
from xdsl.ir import SSAValue

from strata.dialects.tile_types import TensorViewType, element_bytes

TENSOR_MAPS = "gpu.tensor_maps"
"""A kernel attribute: the tensor maps its copies read (TensorMap.attribute each)."""
TABLE_ADDRESS = "tensor_maps.address"
"""The inline instruction whose result is the generic address of the kernel's table (the
NVVM translation declares the table and takes its address)."""
MAP_BYTES = 128
MAP_ALIGNMENT = 64
BOX_COLUMNS = 64
"""16-bit columns of a box: the 128 bytes of the swizzle span."""
MAX_RANK = 5
MAX_BOX_ROWS = 256
GLOBAL_ALIGNMENT = 16
"""A map's base address and byte strides are multiples of 16 (the runtime checks the base)."""


@dataclass(frozen=True)
class TensorMap:
    """What one tensor map describes: the kernel argument (position) it reads, that argument's
    view (shape, element strides and offset, outermost first) and the rows of a box."""

    argument: int
    view: TensorViewType
    box_rows: int

    def attribute(self) -> DictionaryAttr:
        shape = DenseArrayBase.from_list(i64, list(self.view.get_shape()))
        strides = DenseArrayBase.from_list(i64, list(self.view.get_strides()))
        return DictionaryAttr({
            "argument": IntegerAttr(self.argument, i64), "shape": shape, "strides": strides,
            "offset": IntegerAttr(self.view.offset.data, i64), "box_rows": IntegerAttr(self.box_rows, i64),
            "element": self.view.element_type,
        })  # fmt: skip

    @staticmethod
    def of(entry: DictionaryAttr) -> TensorMap:
        """The map an entry of gpu.tensor_maps (attribute) describes."""
        fields = entry.data
        view = TensorViewType(tuple(fields["shape"].get_values()), fields["element"], tuple(fields["strides"].get_values()),
                              fields["offset"].value.data)
        return TensorMap(fields["argument"].value.data, view, fields["box_rows"].value.data)

    @property
    def box_bytes(self) -> int:
        return BOX_COLUMNS * self.box_rows * element_bytes(self.view.element_type)


def mappable(view: TensorViewType, box_rows: int) -> bool:
    """Whether a view of 16-bit rows can be copied through a tensor map in boxes of
    `box_rows` rows: contiguous rows of whole 16-byte chunks, byte strides and offset
    multiples of 16, at most five axes, none empty, and no axis of several elements
    repeated in place (stride 0: a broadcast, which a map cannot describe)."""
    size = element_bytes(view.element_type)
    shape = view.get_shape()
    *outer, last = view.get_strides()
    return (
        size == 2 and last == 1 and len(shape) <= MAX_RANK and 0 < box_rows <= MAX_BOX_ROWS and min(shape) > 0
        and shape[-1] * size % GLOBAL_ALIGNMENT == 0
        and all(stride * size % GLOBAL_ALIGNMENT == 0 and (stride > 0 or extent == 1) for stride, extent in zip(outer, shape))
        and view.offset.data * size % GLOBAL_ALIGNMENT == 0
    )  # fmt: skip


def maps_attribute(maps: list[TensorMap]) -> ArrayAttr:
    return ArrayAttr([m.attribute() for m in maps])


def maps_of(attribute: ArrayAttr) -> list[TensorMap]:
    """The maps of a kernel's gpu.tensor_maps."""
    return [TensorMap.of(entry) for entry in attribute.data]


def table_name(kernel: str) -> str:
    """The global that holds a kernel's maps (the NVVM translation declares it, the runtime fills it)."""
    return f"{kernel}_tensor_maps"


class BulkCopies:
    """The tensor maps of one kernel lowering and the copies through them."""

    def __init__(self, k):
        self.k = k
        self.maps: list[TensorMap] = []

    def add(self, buffer: SSAValue, view: TensorViewType, box_rows: int) -> int:
        """The index of a new map of `buffer` (a kernel argument) seen through `view`."""
        argument = list(self.k.entry.args).index(buffer)
        self.maps.append(TensorMap(argument, view, box_rows))
        return len(self.maps) - 1

    def address(self, index: int) -> SSAValue:
        """The generic address (i64) of map `index` in the kernel's table."""
        k = self.k
        (table,) = k.inline_ptx(TABLE_ADDRESS, [], 1, i64)
        return k.emit(arith.AddiOp(table, k.emit(arith.ConstantOp(IntegerAttr(index * MAP_BYTES, i64)))))

    def acquire(self) -> None:
        """Orders the host's writes of the table before this thread's copies read it (the
        tensor-map proxy reads maps apart from ordinary loads); once, by the copying thread."""
        for index in range(len(self.maps)):
            self.k.inline_ptx("fence.proxy.tensormap::generic.acquire.gpu", [self.address(index)])

    def copy(self, index: int, target: SSAValue, coordinates: list[SSAValue], columns: int, barrier: SSAValue) -> None:
        """The box of map `index` at `coordinates` (its rows' first row, then the outer axes,
        outermost last: index values) and every strip of 64 columns up to `columns`, into
        strips of the box's bytes from the shared address `target` (index, 1024-aligned)."""
        k = self.k
        tensor_map = self.maps[index]
        rank = len(tensor_map.view.get_shape())
        outer = [k.emit(arith.IndexCastOp(c, i32)) for c in coordinates]
        address = self.address(index)
        for strip in range(-(-columns // BOX_COLUMNS)):
            column = k.emit(arith.ConstantOp(IntegerAttr(strip * BOX_COLUMNS, i32)))
            at = k.emit(arith.IndexCastOp(k.add(target, k.index(strip * tensor_map.box_bytes)), i32))
            k.inline_ptx(f"cp.async.bulk.tensor.{rank}d", [at, address, column, *outer, barrier])
