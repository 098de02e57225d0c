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
from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp, i32

from strata.dialects import tile
from strata.dialects.tile_program import written_arguments
from strata.support.errors import StrataError
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
        kernels = {op.sym_name.data: op for op in self.module.ops if isinstance(op, func.FuncOp | tile.KernelOp)}
        slots = {arg: i for i, arg in enumerate(block.args)}
        buffers: list[object] = []
        launches: list[tuple[tile.LaunchOp, list[int]]] = []
        results: list[int] = []
        for op in block.ops:
            if isinstance(op, tile.BufferOp):
                slots[op.result] = len(block.args) + len(buffers)
                buffers.append(view(op))
            elif isinstance(op, tile.LaunchOp):
                launch_slots = [slots[a] for a in op.args]
                check_writes(op, kernels, launch_slots, len(block.args))
                launches.append((op, launch_slots))
            elif isinstance(op, func.ReturnOp):
                results = [slots[v] for v in op.arguments]
        return buffers, launches, results


def check_writes(op: tile.LaunchOp, kernels: dict, launch_slots: list[int], inputs: int) -> None:
    """The inputs are the caller's arrays, passed without a copy: no kernel may write
    one (the launch verifier says so too; this holds for unverified modules as well)."""
    name = op.kernel.string_value()
    if name not in kernels:
        raise StrataError(f"tile.launch of @{name}: no such kernel in the lowered module")
    for position in sorted(written_arguments(kernels[name])):
        if position < len(launch_slots) and launch_slots[position] < inputs:
            raise StrataError(
                f"kernel @{name} writes its argument {position}, the program's input "
                f"{launch_slots[position]} (the caller's array): refusing to run it"
            )


def check_kernel_abi(kernel: func.FuncOp, buffer_count: int, status: bool, result: bool) -> None:
    """The lowered kernel's signature is the one the runtime calls it with: `buffer_count`
    memrefs, the grid range (two index arguments), the status memref when `status` (GPU
    kernels with checks), and an i32 status result when `result` (CPU kernels); a
    StrataError naming the kernel otherwise, never a call with a wrong prototype."""
    inputs = list(kernel.function_type.inputs.data)
    outputs = list(kernel.function_type.outputs.data)
    name = kernel.sym_name.data
    expected = buffer_count + 2 + status
    problems = []
    if len(inputs) != expected:
        problems.append(f"takes {len(inputs)} arguments, not {expected}")
    else:
        if not all(isinstance(t, MemRefType) for t in inputs[:buffer_count]):
            problems.append("its first arguments must be the launch's memrefs")
        if not all(isinstance(t, IndexType) for t in inputs[buffer_count : buffer_count + 2]):
            problems.append("the grid range must be two index arguments")
        if status and not isinstance(inputs[-1], MemRefType):
            problems.append("the status argument must be a memref")
    if result and outputs != [i32]:
        problems.append(f"returns ({', '.join(str(t) for t in outputs)}), not the i32 status")
    if not result and outputs:
        problems.append("returns values: a GPU kernel returns nothing")
    if problems:
        raise StrataError(f"kernel @{name} does not have the runtime's calling convention: " + "; ".join(problems))


@dataclass(frozen=True)
class BufferSpec:
    """A planned `tile.buffer` as plain data (what binding needs; the CPU compile cache
    stores it): its arena, byte offset, element count and dtype, and the constant it
    starts with (one dimension, possibly a single element to splat) or None."""

    arena: str
    offset: int
    count: int
    dtype: np.dtype
    init: np.ndarray | None

    @staticmethod
    def of(op: tile.BufferOp) -> BufferSpec:
        dtype = numpy_dtype(op.result.type.element_type)
        arena, offset, count = placement(op)
        init = None if op.init is None else np.ascontiguousarray(dense_to_numpy(op.init).reshape(-1), dtype=dtype)
        return BufferSpec(arena, offset, count, dtype, init)

    def view(self, arenas: dict, storage: Callable[[np.dtype], np.dtype] = np.dtype) -> tuple[object, np.ndarray | None]:
        """The buffer's view of its arena (numpy or device arrays alike) and its initial
        constant, both of dtype `storage(dtype)` (a dtype of the same size whose bits are
        the elements')."""
        stored = storage(self.dtype)
        view = arenas[self.arena][self.offset : self.offset + self.count * self.dtype.itemsize].view(stored)
        return view, None if self.init is None else self.init.view(stored)


def planned_view(
    op: tile.BufferOp, arenas: dict, storage: Callable[[np.dtype], np.dtype] = np.dtype
) -> tuple[object, np.ndarray | None]:
    """The buffer's view of its arena at its planned offset and the constant it starts
    with, if any (see `BufferSpec.view`)."""
    return BufferSpec.of(op).view(arenas, storage)
