"""Tensor maps for kernels that copy through the tensor memory accelerator (sm_90).

A kernel lowered with `gpu.tensor_maps` (lowering/tile_to_gpu/tensor_maps.py) reads a
table of 128-byte maps, the global `<kernel>_tensor_maps` of its module, each describing
one of its buffer arguments as the lowering saw it: the view's shape, element strides and
offset, the box a copy takes (64 16-bit columns by `box_rows` rows, 128-byte swizzle),
elements outside the tensor read as zeros. Only the driver encodes maps
(cuTensorMapEncodeTiled, called through ctypes on libcuda, which every CUDA install
has); `TensorMapTable` encodes a kernel's maps from the bound buffers' device addresses
and writes its table, again whenever an address changes (a device array passed in place).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import numpy as np

from strata.dialects.tile_types import element_bytes
from strata.lowering.tile_to_gpu.tensor_maps import (
    BOX_COLUMNS,
    GLOBAL_ALIGNMENT,
    MAP_ALIGNMENT,
    MAP_BYTES,
    TensorMap,
    table_name,
)
from strata.support.errors import StrataError

DATA_TYPES = {"bf16": 9, "f16": 6}
"""CUtensorMapDataType of the 16-bit element types."""
INTERLEAVE_NONE = 0
SWIZZLE_128B = 3
L2_PROMOTION_256B = 3
OOB_FILL_ZEROS = 0


class _Driver:
    """cuTensorMapEncodeTiled from libcuda, loaded once."""

    _encode = None

    @classmethod
    def encode(cls):
        if cls._encode is None:
            try:
                library = ctypes.CDLL("libcuda.so.1")
            except OSError as e:  # pragma: no cover - a GPU machine has the driver library
                raise StrataError(f"tensor maps need the CUDA driver library (libcuda.so.1): {e}") from None
            encode = library.cuTensorMapEncodeTiled
            u32, u64 = ctypes.c_uint32, ctypes.c_uint64
            encode.argtypes = [ctypes.c_void_p, ctypes.c_int, u32, ctypes.c_void_p, ctypes.POINTER(u64),
                               ctypes.POINTER(u64), ctypes.POINTER(u32), ctypes.POINTER(u32),
                               ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]  # fmt: skip
            encode.restype = ctypes.c_int
            cls._encode = encode
        return cls._encode


def map_layout(shape: Sequence[int], strides: Sequence[int], size: int) -> tuple[list[int], list[int]]:
    """The map's sizes and byte strides, innermost first (the driver's order; the innermost
    axis has no stride). An axis of one element has no stride of its own in the view (a
    broadcast may give it 0): it takes the next inner axis' extent in bytes."""
    sizes = list(reversed(shape))
    element_strides = list(reversed(strides))
    byte_strides = []
    for axis in range(1, len(sizes)):
        stride = element_strides[axis] * size
        if sizes[axis] == 1:
            inner = byte_strides[-1] if byte_strides else size
            stride = max(GLOBAL_ALIGNMENT, -(-inner * sizes[axis - 1] // GLOBAL_ALIGNMENT) * GLOBAL_ALIGNMENT)
        byte_strides.append(stride)
    return sizes, byte_strides


def encode_map(tensor_map: TensorMap, pointer: int) -> bytes:
    """The 128-byte map of `tensor_map` (an entry of gpu.tensor_maps) over the buffer at
    device address `pointer`."""
    view = tensor_map.view
    element = view.element_type
    size = element_bytes(element)
    shape, strides = view.get_shape(), view.get_strides()
    sizes, byte_strides = map_layout(shape, strides, size)
    address = pointer + view.offset.data * size
    if address % GLOBAL_ALIGNMENT:
        raise StrataError(f"a tensor map's buffer at 0x{address:x} is not {GLOBAL_ALIGNMENT}-byte aligned")
    rank = len(sizes)
    box = [BOX_COLUMNS, tensor_map.box_rows, *[1] * (rank - 2)]
    result = ctypes.create_string_buffer(MAP_BYTES + MAP_ALIGNMENT)
    aligned = -(-ctypes.addressof(result) // MAP_ALIGNMENT) * MAP_ALIGNMENT  # a CUtensorMap is 64-byte aligned
    u32, u64 = ctypes.c_uint32, ctypes.c_uint64
    status = _Driver.encode()(
        ctypes.c_void_p(aligned), DATA_TYPES[str(element)], rank, ctypes.c_void_p(address),
        (u64 * rank)(*sizes), (u64 * max(1, rank - 1))(*byte_strides), (u32 * rank)(*box), (u32 * rank)(*[1] * rank),
        INTERLEAVE_NONE, SWIZZLE_128B, L2_PROMOTION_256B, OOB_FILL_ZEROS,
    )  # fmt: skip
    if status:
        raise StrataError(f"cuTensorMapEncodeTiled failed ({status}) for a view of shape {list(shape)}, strides "
                          f"{list(strides)}, box {box[:2]}")
    return ctypes.string_at(aligned, MAP_BYTES)


class TensorMapTable:
    """One launch's table: where it lives on the device, the maps it holds, over which of the
    executable's buffers (the launch's argument slots), and what it holds now."""

    def __init__(self, cuda_module, kernel_name: str, maps: list[TensorMap], slots: list[int]):
        self.symbol, symbol_bytes = cuda_module.get_global_symbol(table_name(kernel_name))
        if symbol_bytes != MAP_BYTES * len(maps):
            raise StrataError(f"kernel @{kernel_name}: its tensor-map table has {symbol_bytes} bytes for {len(maps)} maps")
        self.maps, self.slots = maps, slots
        self.written: bytes | None = None

    def update(self, cuda, pointers: list[int]) -> None:
        """Encodes the maps over the buffers' addresses (`pointers`, by slot) and writes them
        where they changed (after the work in flight, which may be reading the old ones)."""
        from numba.cuda.cudadrv import driver

        encoded = b"".join(encode_map(m, pointers[self.slots[m.argument]]) for m in self.maps)
        if encoded == self.written:
            return
        if self.written is not None:
            cuda.synchronize()
        driver.host_to_device(self.symbol, np.frombuffer(encoded, np.uint8).copy(), len(encoded))
        self.written = encoded
