"""What the CPU and CUDA runtimes share: a graph entry lowered with its memory plan, and
the walk that binds the lowered program's buffers, launches and results to slots.

Slots number the program's storage: its arguments first (the inputs), then each
`tile.buffer` in program order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from strata.dialects import tile
from strata.support.dtypes import dense_to_numpy, numpy_dtype
from strata.runtime.reference.interpreter import InputSpecs, find_entry
from strata.transforms.plan_memory import placement, read_plan


@dataclass
class LoweredProgram:
    signature: func.FuncOp
    """The graph entry as given (a copy): argument and result types."""
    inputs: InputSpecs
    module: ModuleOp
    """The lowered module: the program function and its kernels."""
    program: func.FuncOp
    plan: dict
    """The memory plan (plan-memory's JSON form)."""
    result_shapes: tuple[tuple[int, ...], ...]

    @staticmethod
    def lower(module: ModuleOp, entry: str | None, lower: Callable[[ModuleOp], None]) -> LoweredProgram:
        """`module`'s entry lowered by `lower` (a target's pipeline, run on a copy)."""
        signature = find_entry(module, entry).clone()
        lowered = module.clone()
        lower(lowered)
        program = find_entry(lowered, entry)
        result_shapes = tuple(tuple(t.get_shape()) for t in signature.function_type.outputs.data)
        return LoweredProgram(signature, InputSpecs.of(signature), lowered, program, read_plan(program), result_shapes)

    def bind(self, view: Callable[[tile.BufferOp], object]) -> tuple[list[object], list[tuple[tile.LaunchOp, list[int]]], list[int]]:
        """(the bound buffers, `view(op)` for each tile.buffer in slot order after the
        inputs; each launch with the slots of its arguments; the result slots)."""
        block = self.program.body.block
        slots = {arg: i for i, arg in enumerate(block.args)}
        buffers: list[object] = []
        launches: list[tuple[tile.LaunchOp, list[int]]] = []
        results: list[int] = []
        for op in block.ops:
            if isinstance(op, tile.BufferOp):
                slots[op.result] = len(block.args) + len(buffers)
                buffers.append(view(op))
            elif isinstance(op, tile.LaunchOp):
                launches.append((op, [slots[a] for a in op.args]))
            elif isinstance(op, func.ReturnOp):
                results = [slots[v] for v in op.arguments]
        return buffers, launches, results


def planned_view(
    op: tile.BufferOp, arenas: dict, storage: Callable[[np.dtype], np.dtype] = np.dtype
) -> tuple[object, np.ndarray | None]:
    """The buffer's view of its arena at its planned offset (numpy or device arrays alike),
    and the constant it starts with, if any; both of dtype `storage(element dtype)` (a
    dtype of the same size whose bits are the elements')."""
    dtype = numpy_dtype(op.result.type.element_type)
    stored = storage(dtype)
    arena, offset, count = placement(op)
    view = arenas[arena][offset : offset + count * dtype.itemsize].view(stored)
    init = None if op.init is None else np.ascontiguousarray(dense_to_numpy(op.init).reshape(-1), dtype=dtype).view(stored)
    return view, init
