"""Structural keys of lazy tiles and index values for lower-tile-to-gpu: straight-line code
computes an element of a lazy tile once per region, and equal keys find it again (a row read
by a max, a sum and the final store is loaded once)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from strata.dialects import tile
from strata.lowering.tile_to_loops.kernel import BroadcastTile, BufferTile, LoadedTile, MappedTile, Tile, static_value


def body_fingerprint(op: tile.MapOp) -> tuple:
    """The structure of a map body: op names, properties, attributes and operand sources
    (block argument, earlier body result, or an outside value by identity)."""
    block = op.body.block
    positions = {arg: ("arg", i) for i, arg in enumerate(block.args)}
    parts = []
    for index, inner in enumerate(block.ops):
        sources = tuple(positions.get(v, ("outside", v)) for v in inner.operands)
        parts.append((inner.name, str(inner.properties), str(inner.attributes), sources,
                      tuple(str(r.type) for r in inner.results)))
        positions.update({r: ("op", index, n) for n, r in enumerate(inner.results)})
    return tuple(parts)


class ElementKeys:
    """The keys of one kernel, memoized. A loaded tile's key is its tile position and the
    number of store groups that wrote its buffer before the load, so loads of one position
    share elements until a store to the buffer."""

    def __init__(self) -> None:
        self.load_keys: dict[int, tuple] = {}
        """Per loaded tile (by id): its tile position and the store epoch of its buffer."""
        self.store_epochs: dict[SSAValue, int] = {}
        """Per global buffer, how many store groups wrote it so far."""
        self.value_keys: dict[SSAValue, object] = {}
        self.tile_keys: dict[int, tuple[Tile, object]] = {}

    def note_load(self, loaded: LoadedTile, view: SSAValue, indices: Sequence[SSAValue]) -> None:
        """`loaded` was loaded from `view` at the tile position `indices`."""
        self.load_keys[id(loaded)] = (view, tuple(indices), self.store_epochs.get(loaded.buffer, 0))

    def note_stored(self, buffer: SSAValue) -> None:
        """A store group wrote `buffer`: later loads of it read new elements."""
        self.store_epochs[buffer] = self.store_epochs.get(buffer, 0) + 1

    def element_key(self, value: Tile, indices: Sequence[SSAValue]) -> tuple:
        """The key of the element of `value` at `indices`."""
        return self.tile_key(value), tuple(self.value_key(i) for i in indices)

    def value_key(self, value: SSAValue) -> object:
        """A structural key of an index value (constants by value, arith by operation and
        operand keys, anything else by identity): equal keys, equal values."""
        if value not in self.value_keys:
            constant = static_value(value)
            owner = value.owner
            if constant is not None:
                key = constant
            elif isinstance(owner, Operation) and owner.dialect_name() == "arith" and len(owner.results) == 1:
                operands = tuple(self.value_key(v) for v in owner.operands)
                key = (owner.name, str(owner.properties), str(value.type), operands)
            else:
                key = value
            self.value_keys[value] = key
        return self.value_keys[value]

    def extent_key(self, extent: SSAValue, size: int) -> object:
        """value_key of an extent of an axis of `size`, up to the identities of min on
        extents: min(e, c) = e for a constant c >= size, min(e, e) = e."""
        constant = static_value(extent)
        if constant is not None:
            return size if constant >= size else constant
        owner = extent.owner
        if isinstance(owner, arith.MinSIOp | arith.MinUIOp):
            left, right = self.extent_key(owner.lhs, size), self.extent_key(owner.rhs, size)
            if left == size or left == right:
                return right
            if right == size:
                return left
            return ("min", left, right)
        return self.value_key(extent)

    def tile_key(self, value: Tile) -> object:
        """A structural key of a lazy tile: loads of one tile position (until a store to
        the buffer), maps with the same body over equal inputs, and broadcasts of equal
        tiles have equal keys, so their elements are computed once per region."""
        if id(value) in self.tile_keys:
            return self.tile_keys[id(value)][1]
        match value:
            case LoadedTile():
                key = self.load_keys.get(id(value), id(value))
            case MappedTile():
                key = ("map", body_fingerprint(value.op), tuple(self.tile_key(t) for t in value.inputs))
            case BroadcastTile():
                key = ("broadcast", self.tile_key(value.input), tuple(value.broadcast_axes))
            case BufferTile():
                key = ("buffer", value.buffer)
            case _:
                key = id(value)
        self.tile_keys[id(value)] = (value, key)  # keeps `value` alive: ids stay unique
        return key
