"""`plan-memory`: give every program buffer an arena and a 64-byte-aligned offset.

Runs on the tile-level program (after lower-graph-to-tile; also after lower-tile-to-loops).
The schedule is the launch order (step i = launch i; step N = the return); a buffer is
live from the first launch that touches it to the last (a reshape shares its operand's
buffer, so the alias root lives until its last alias use); results live to the return.
Arena classes (each planned on its own, so buffers of different lifetimes never compete
for one region):

    params       constants (filled once, when the executable is bound)
    external     the results (copied out after each call)
    (none)       function arguments, inputs and params alike: caller-owned, not planned
    activations  intermediates
    workspace    intermediates a composite op creates for its own next kernel
                 (attention scores, per-row losses, partial reductions)

Within an arena, buffers whose live ranges intersect never overlap in bytes: a linear
scan places each buffer at the lowest (first-fit) or tightest (best-fit) aligned gap.
An elementwise kernel may write its result over an input that dies at that launch
(`in_place`), so exp→relu→tanh chains run in one buffer.

Before:
    %0 = tile.buffer : memref<32xf32>
After:
    %0 = tile.buffer {tile.arena = "activations", tile.offset = 128 : i64, tile.live = array<i64: 1, 3>} : memref<32xf32>
    %1 = tile.buffer {tile.arena = "activations", tile.offset = 128 : i64, tile.live = array<i64: 1, 3>, tile.shares = 0 : i64} : memref<32xf32>

The plan is also written on the program as `tile.plan` (arena sizes, naive bytes, kernel
count); `read_plan` returns it as the plan JSON object of docs/interfaces.md, where a
buffer written in place over another names it (`"shares": "%3"`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from strata.dialects import tile
from strata.dialects.tile_types import element_bytes

ALIGNMENT = 64
ARENAS = ("params", "activations", "workspace", "grads", "external")
REUSABLE = ("activations", "workspace")
"""Arenas whose buffers a kernel may overwrite in place (not constants or results)."""


def aligned(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT


def buffer_bytes(value: SSAValue) -> int:
    t = value.type
    return math.prod(t.get_shape()) * element_bytes(t.element_type)


@dataclass
class Slot:
    """One planned buffer (several SSA buffers when written in place)."""

    values: list[SSAValue]
    arena: str
    bytes: int
    first: int
    last: int
    offset: int = 0


@dataclass
class Plan:
    kernels: int
    slots: list[Slot] = field(default_factory=list)

    def arena_sizes(self) -> dict[str, int]:
        sizes = dict.fromkeys(ARENAS, 0)
        for s in self.slots:
            sizes[s.arena] = max(sizes[s.arena], s.offset + aligned(s.bytes))
        return sizes

    def naive_bytes(self) -> int:
        return sum(buffer_bytes(v) for s in self.slots if s.arena in REUSABLE for v in s.values)


def place(slots: list[Slot], strategy: str) -> None:
    """Linear scan in order of first use: each slot takes the lowest (first-fit) or the
    smallest sufficient (best-fit) aligned gap among slots live at the same time."""
    placed: dict[str, list[Slot]] = {}
    for slot in sorted(slots, key=lambda s: (s.first, -s.bytes, s.last)):
        busy = sorted(
            (o for o in placed.get(slot.arena, []) if o.first <= slot.last and slot.first <= o.last),
            key=lambda o: o.offset,
        )
        gaps, cursor = [], 0
        for other in busy:
            if other.offset - cursor >= slot.bytes:
                gaps.append((other.offset - cursor, cursor))
            cursor = max(cursor, aligned(other.offset + other.bytes))
        gaps.append((math.inf, cursor))
        if strategy == "best-fit":
            slot.offset = min(gaps)[1]
        else:
            slot.offset = min(g[1] for g in gaps)
        placed.setdefault(slot.arena, []).append(slot)


def plan_program(program: func.FuncOp, kernels: dict[str, object], strategy: str, in_place: bool) -> Plan:
    block = program.body.block
    launches = [op for op in block.ops if isinstance(op, tile.LaunchOp)]
    live: dict[SSAValue, list[int]] = {}
    for step, launch in enumerate(launches):
        for arg in launch.args:
            span = live.setdefault(arg, [step, step])
            span[1] = step
    returned = list(block.last_op.operands) if isinstance(block.last_op, func.ReturnOp) else []
    buffers = [op for op in block.ops if isinstance(op, tile.BufferOp)]
    slot_of: dict[SSAValue, Slot] = {}
    plan = Plan(len(launches))
    for op in buffers:
        first, last = live.get(op.result, [0, 0])
        arena = arena_class(op, returned)
        if arena == "params":
            first, last = 0, len(launches)
        elif op.result in returned:
            last = len(launches)  # read after the last launch, when results are copied out
        slot = Slot([op.result], arena, buffer_bytes(op.result), first, last)
        slot_of[op.result] = slot
        plan.slots.append(slot)
    if in_place:
        share_in_place(launches, kernels, slot_of, live, plan)
    place(plan.slots, strategy)
    return plan


def arena_class(op: tile.BufferOp, returned: list[SSAValue]) -> str:
    if op.init is not None:
        return "params"
    if op.result in returned:
        return "external"
    if "tile.workspace" in op.attributes:
        return "workspace"
    return "activations"


def share_in_place(launches, kernels, slot_of: dict[SSAValue, Slot], live, plan: Plan) -> None:
    """A kernel that reads each input element before writing that position (elementwise,
    row kernels: `tile.in_place`) writes its output over an input that dies there."""
    for step, launch in enumerate(launches):
        kernel = kernels.get(launch.kernel.string_value())
        eligible = kernel.attributes.get("tile.in_place") if kernel is not None else None
        output = launch.args[-1]
        if eligible is None or output not in slot_of or slot_of[output].arena not in REUSABLE:
            continue
        for index in eligible.get_values():
            source = slot_of.get(launch.args[index])
            if source is None or source.arena != slot_of[output].arena or source.last != step:
                continue
            if source.bytes != slot_of[output].bytes or launch.args.count(launch.args[index]) > 1:
                continue
            target = slot_of[output]
            source.values += target.values
            source.last = target.last
            for v in target.values:
                slot_of[v] = source
            plan.slots.remove(target)
            kernel.attributes["tile.aliased"] = UnitAttr()
            break


def record(program: func.FuncOp, plan: Plan) -> None:
    """Each buffer's arena, offset and live range as attributes; a buffer written in place
    over another also gets `tile.shares`: the position (among the program's buffers) of
    the buffer whose storage it takes."""
    position = {op.result: i for i, op in enumerate(o for o in program.body.block.ops if isinstance(o, tile.BufferOp))}
    for slot in plan.slots:
        root = min(slot.values, key=position.__getitem__)
        for v in slot.values:
            v.owner.attributes.update({
                "tile.arena": StringAttr(slot.arena),
                "tile.offset": IntegerAttr(slot.offset, i64),
                "tile.live": DenseArrayBase.from_list(i64, [slot.first, slot.last]),
            })  # fmt: skip
            if v is not root:
                v.owner.attributes["tile.shares"] = IntegerAttr(position[root], i64)
    sizes = {name: IntegerAttr(size, i64) for name, size in plan.arena_sizes().items()}
    program.attributes["tile.plan"] = DictionaryAttr({
        "alignment": IntegerAttr(ALIGNMENT, i64),
        "kernels": IntegerAttr(plan.kernels, i64),
        "naive_bytes": IntegerAttr(plan.naive_bytes(), i64),
        "arenas": DictionaryAttr(sizes),
    })  # fmt: skip


def read_plan(program: func.FuncOp) -> dict:
    """The recorded plan as the plan JSON object (docs/interfaces.md). A value written in
    place over another carries `"shares": "<that value's name>"`."""
    recorded = program.attributes["tile.plan"].data
    buffers = [op for op in program.body.block.ops if isinstance(op, tile.BufferOp)]
    names = [f"%{op.result.name_hint or i}" for i, op in enumerate(buffers)]
    values = []
    for op, name in zip(buffers, names):
        if "tile.arena" in op.attributes:
            first, last = op.attributes["tile.live"].get_values()
            values.append({
                "name": name,
                "arena": op.attributes["tile.arena"].data,
                "offset": op.attributes["tile.offset"].value.data,
                "bytes": buffer_bytes(op.result),
                "first": first,
                "last": last,
            })  # fmt: skip
            if "tile.shares" in op.attributes:
                values[-1]["shares"] = names[op.attributes["tile.shares"].value.data]
    return {
        "alignment": recorded["alignment"].value.data,
        "kernels": recorded["kernels"].value.data,
        "arenas": {k: v.value.data for k, v in recorded["arenas"].data.items()},
        "naive_bytes": recorded["naive_bytes"].value.data,
        "values": values,
    }


def placement(op: tile.BufferOp) -> tuple[str, int, int]:
    """A planned buffer's arena, byte offset and element count."""
    offset = op.attributes["tile.offset"].value.data
    return op.attributes["tile.arena"].data, offset, op.result.type.get_shape()[0]


def programs(module: ModuleOp) -> Iterable[func.FuncOp]:
    """The tile programs: functions over flat buffers that are not kernels (a program that
    only returns its arguments has an empty plan, but a plan)."""
    return [
        f for f in module.ops
        if isinstance(f, func.FuncOp) and f.body.blocks and "tile.grid" not in f.attributes
        and all(isinstance(t, MemRefType) for t in (*f.function_type.inputs.data, *f.function_type.outputs.data))
    ]  # fmt: skip


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Plan arenas and offsets for every program (see module docstring)."""

    name = "plan-memory"

    strategy: str = "first-fit"
    in_place: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.strategy not in ("first-fit", "best-fit"):
            raise ValueError(f"plan-memory: strategy must be first-fit or best-fit, got '{self.strategy}'")
        kernels = {k.sym_name.data: k for k in op.ops if hasattr(k, "sym_name")}
        for program in programs(op):
            plan = plan_program(program, kernels, self.strategy, self.in_place)
            record(program, plan)
