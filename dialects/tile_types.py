"""Types of the `tile` dialect and the tile constraints (rank, dims, bytes per tile and
per kernel: the limits below, checked when a type is built).

    !tile.tile<16x64xf32>                                   a block of values a kernel instance holds
    !tile.tensor_view<4x8xf32, strides [8, 1], offset 0>    a buffer seen as a strided tensor
    !tile.partition_view<1x8, !tile.tensor_view<...>>       that tensor cut into a grid of tiles

Strides are in elements; a stride of 0 broadcasts. Partition views cover their tensor with
ceil(size / tile) tiles per axis; edge tiles are partial and loads/stores handle them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import AnyFloat, ArrayAttr, IntAttr, IntegerType
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

MAX_TILE_RANK = 8
"""The graph level's highest tensor rank (graph_base.MAX_RANK): every graph tensor has a tile."""
MAX_TILE_DIM = 4096
MAX_TILE_BYTES = 128 * 1024
"""The most one tile may take: a 128 x 256 f32 matmul accumulator, which the GPU's warpgroup
mma keeps in the registers of 256 threads. Lowerings size the tiles they stage on chip by
TILE_BYTES_BUDGET."""
TILE_BYTES_BUDGET = 64 * 1024
"""The bytes a lowering gives a tile it stages (operand tiles, fused attention's tiles):
comfortably in L1 (CPU) / shared memory (GPU)."""

KERNEL_BYTE_BUDGET = 1024 * 1024
"""All tiles one kernel instance defines together: the L2 of a CPU core (1 MiB on Zen 4).
It counts every tile value, also those the CPU lowering evaluates element by element
without storing them, so it is an upper bound of the working set."""


def is_scalar_element(element_type: Attribute) -> bool:
    return isinstance(element_type, AnyFloat | IntegerType)


def element_bytes(element_type: Attribute) -> int:
    if isinstance(element_type, IntegerType):
        return max(1, element_type.width.data // 8)
    return element_type.bitwidth // 8


def _ints(values: Sequence[int]) -> ArrayAttr[IntAttr]:
    return ArrayAttr([IntAttr(v) for v in values])


def _print_dims(printer: Printer, dims: Sequence[int], element_type: Attribute | None = None):
    printer.print_string("x".join(str(d) for d in dims))
    if element_type is not None:
        printer.print_string("x" if dims else "")
        printer.print_attribute(element_type)


@irdl_attr_definition
class TileType(ParametrizedAttribute, TypeAttribute):
    """A statically shaped block of elements held by one kernel instance."""

    name = "tile.tile"
    shape: ArrayAttr[IntAttr] = param_def()
    element_type: Attribute = param_def()

    def __init__(self, shape: Sequence[int], element_type: Attribute):
        super().__init__(_ints(shape), element_type)

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    def num_bytes(self) -> int:
        return math.prod(self.get_shape()) * element_bytes(self.element_type)

    def verify(self) -> None:
        shape = self.get_shape()
        if not is_scalar_element(self.element_type):
            raise VerifyException(
                f"tile element type must be a float or integer type, got {self.element_type}"
            )
        if not 1 <= len(shape) <= MAX_TILE_RANK:
            raise VerifyException(
                f"tile rank must be 1..{MAX_TILE_RANK}, got {len(shape)}: "
                "use a rank-1 tile of size 1 for scalars"
            )
        for d in shape:
            if d < 1 or d & (d - 1):
                raise VerifyException(
                    f"tile dimension {d} in {list(shape)} is not a power of two: "
                    "round it up and let loads pad / stores mask the edge"
                )
            if d > MAX_TILE_DIM:
                raise VerifyException(
                    f"tile dimension {d} exceeds {MAX_TILE_DIM}: loop over several tiles instead"
                )
        if self.num_bytes() > MAX_TILE_BYTES:
            raise VerifyException(
                f"tile {list(shape)} of {self.element_type} takes {self.num_bytes()} bytes, "
                f"over the {MAX_TILE_BYTES}-byte limit: use smaller tile dimensions"
            )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            shape, element_type = parser.parse_ranked_shape()
        return (_ints(shape), element_type)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            _print_dims(printer, self.get_shape(), self.element_type)


@irdl_attr_definition
class TensorViewType(ParametrizedAttribute, TypeAttribute):
    """A buffer viewed as a strided tensor: shape, element strides, element offset."""

    name = "tile.tensor_view"
    shape: ArrayAttr[IntAttr] = param_def()
    element_type: Attribute = param_def()
    strides: ArrayAttr[IntAttr] = param_def()
    offset: IntAttr = param_def()

    def __init__(
        self,
        shape: Sequence[int],
        element_type: Attribute,
        strides: Sequence[int],
        offset: int = 0,
    ):
        super().__init__(_ints(shape), element_type, _ints(strides), IntAttr(offset))

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    def get_strides(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.strides.data)

    def verify(self) -> None:
        if not is_scalar_element(self.element_type):
            raise VerifyException(
                f"tensor_view element type must be a float or integer type, got {self.element_type}"
            )
        if any(d < 0 for d in self.get_shape()):
            raise VerifyException("tensor_view shape must be static (no ? dimensions)")
        if len(self.strides.data) != len(self.shape.data):
            raise VerifyException(
                f"tensor_view has {len(self.shape.data)} dims but {len(self.strides.data)} strides"
            )
        if any(s < 0 for s in self.get_strides()):
            raise VerifyException(f"tensor_view strides {list(self.get_strides())} must be non-negative")
        if self.offset.data < 0:
            raise VerifyException(f"tensor_view offset {self.offset.data} must be non-negative")

    def max_element_index(self) -> int:
        """The largest element index the view touches (for bounds checks)."""
        return self.offset.data + sum(
            (d - 1) * s for d, s in zip(self.get_shape(), self.get_strides()) if d > 0
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            shape, element_type = parser.parse_ranked_shape()
            parser.parse_punctuation(",")
            parser.parse_keyword("strides")
            strides = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, parser.parse_integer
            )
            parser.parse_punctuation(",")
            parser.parse_keyword("offset")
            offset = parser.parse_integer()
        return (_ints(shape), element_type, _ints(strides), IntAttr(offset))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            _print_dims(printer, self.get_shape(), self.element_type)
            strides = ", ".join(str(s) for s in self.get_strides())
            printer.print_string(f", strides [{strides}], offset {self.offset.data}")


@irdl_attr_definition
class PartitionViewType(ParametrizedAttribute, TypeAttribute):
    """A tensor_view cut into a grid of equally shaped tiles."""

    name = "tile.partition_view"
    tile_shape: ArrayAttr[IntAttr] = param_def()
    view: TensorViewType = param_def()

    def __init__(self, tile_shape: Sequence[int], view: TensorViewType):
        super().__init__(_ints(tile_shape), view)

    def get_tile_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.tile_shape.data)

    def tile_type(self) -> TileType:
        return TileType(self.get_tile_shape(), self.view.element_type)

    def grid_shape(self) -> tuple[int, ...]:
        return tuple(
            -(-size // t) for size, t in zip(self.view.get_shape(), self.get_tile_shape())
        )

    def verify(self) -> None:
        if len(self.tile_shape.data) != len(self.view.shape.data):
            raise VerifyException(
                f"partition_view tile rank {len(self.tile_shape.data)} differs from "
                f"its tensor_view rank {len(self.view.shape.data)}"
            )
        self.tile_type()  # constructing the tile type verifies it

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            tile_shape = parser.parse_dimension_list()
            parser.parse_punctuation(",")
            view = parser.parse_type()
        return (_ints(tile_shape), view)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            _print_dims(printer, self.get_tile_shape())
            printer.print_string(", ")
            printer.print_attribute(self.view)
