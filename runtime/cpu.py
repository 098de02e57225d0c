"""The CPU runtime: compile a graph program through cpu-pipeline, bind once, execute.

    exe = CpuExecutable(module, entry=None)      # lower, JIT, allocate every buffer once
    outs = exe(x, w)                             # launches kernels; allocates nothing

Binding allocates one 64-byte-aligned numpy buffer per `tile.buffer` of the program (the
memory planner will replace these with arena offsets). Executing walks the program's
launch list and calls each kernel's JIT-compiled function on buffer pointers. A launch
whose grid has several points and enough bytes runs on all cores: the runtime splits the
grid range [0, G) into one chunk per worker and calls the kernel from a thread pool
(ctypes releases the GIL during the call) — the runtime, not the generated code, owns
threads so kernels stay plain loops that LLVM vectorizes.

Inputs are used in place when already contiguous with the right dtype. Results are
returned as copies, so a later call never changes arrays the caller holds.
"""

from __future__ import annotations

import ctypes
import hashlib
import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from strata.dialects import tile
from strata.errors import ExecutionError
from strata.lowering.loops_to_llvm import translate_module
from strata.lowering.tile_to_loops import kernel_functions
from strata.pipelines import run_pipeline
from strata.runtime.dtypes import dense_to_numpy, numpy_dtype
from strata.runtime.jit import JitModule
from strata.runtime.reference.interpreter import check_inputs, find_entry

CPU_PIPELINE = "cpu-pipeline"
ALIGNMENT = 64
PARALLEL_MIN_BYTES = 1 << 18
"""Launches touching fewer bytes run on one thread: a pool round trip costs more."""

_JIT_CACHE: dict[str, JitModule] = {}
"""Compiled kernel modules by the hash of their loops-level IR (in-process)."""


def aligned_empty(count: int, dtype: np.dtype) -> np.ndarray:
    raw = np.empty(count * dtype.itemsize + ALIGNMENT, dtype=np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    return raw[start : start + count * dtype.itemsize].view(dtype)


def jit_kernels(module: ModuleOp) -> JitModule:
    kernels = ModuleOp([k.clone() for k in kernel_functions(module)])
    key = hashlib.sha256(str(kernels).encode()).hexdigest()
    if key not in _JIT_CACHE:
        _JIT_CACHE[key] = JitModule(translate_module(kernels))
    return _JIT_CACHE[key]


@dataclass
class Launch:
    name: str
    function: ctypes._CFuncPtr
    buffers: list[int]
    """Indices into the executable's slot table (inputs first, then bound buffers)."""
    grid_size: int
    parallel: bool
    error: str
    """What a nonzero status means (the kernel's tile.check messages)."""


class CpuExecutable:
    def __init__(self, module: ModuleOp, entry: str | None = None, pipeline: str | None = None):
        self.signature = find_entry(module, entry).clone()
        lowered = module.clone()
        if pipeline:
            run_pipeline(lowered, pipeline)
        run_pipeline(lowered, CPU_PIPELINE)
        self.module = lowered
        self.jit = jit_kernels(lowered)
        program = find_entry(lowered, entry)
        self.workers = ThreadPoolExecutor(max_workers=os.cpu_count() or 1)
        self._bind(program)

    def _bind(self, program: func.FuncOp) -> None:
        """Allocate every buffer once and resolve every launch to a function pointer."""
        block = program.body.block
        slots = {arg: i for i, arg in enumerate(block.args)}
        self.storage: list[np.ndarray | None] = [None] * len(block.args)
        self.launches: list[Launch] = []
        for op in block.ops:
            if isinstance(op, tile.BufferOp):
                buffer = aligned_empty(op.result.type.get_shape()[0], numpy_dtype(op.result.type.element_type))
                if op.init is not None:
                    buffer[...] = dense_to_numpy(op.init).reshape(-1)
                slots[op.result] = len(self.storage)
                self.storage.append(buffer)
            elif isinstance(op, tile.LaunchOp):
                self.launches.append(self._launch(op, [slots[a] for a in op.args]))
            elif isinstance(op, func.ReturnOp):
                self.results = [slots[v] for v in op.arguments]

    def _launch(self, op: tile.LaunchOp, buffers: list[int]) -> Launch:
        name = op.kernel.string_value()
        kernel = next(f for f in kernel_functions(self.module) if f.sym_name.data == name)
        prototype = ctypes.CFUNCTYPE(
            ctypes.c_int32, *([ctypes.c_void_p] * len(buffers)), ctypes.c_int64, ctypes.c_int64
        )
        grid_size = math.prod(kernel.attributes["tile.grid"].get_values())
        touched = sum(
            a.type.get_shape()[0] * numpy_dtype(a.type.element_type).itemsize for a in op.args
        )
        function = prototype(self.jit.function_address(name))
        error = kernel.attributes.get("tile.error")
        message = error.data if error is not None else f"kernel @{name} failed"
        parallel = grid_size > 1 and touched >= PARALLEL_MIN_BYTES
        return Launch(name, function, buffers, grid_size, parallel, message)

    def __call__(self, *args: object) -> tuple[np.ndarray, ...]:
        inputs = check_inputs(self.signature, args)
        storage = self.storage
        for i, array in enumerate(inputs):
            storage[i] = np.ascontiguousarray(array)
        pointers = [a.ctypes.data for a in storage]
        for launch in self.launches:
            self._run(launch, [pointers[b] for b in launch.buffers])
        outputs = []
        for slot, t in zip(self.results, self.signature.function_type.outputs.data):
            outputs.append(storage[slot].reshape(t.get_shape()).copy())
        return tuple(outputs)

    def _run(self, launch: Launch, pointers: list[int]) -> None:
        if not launch.parallel:
            statuses = [launch.function(*pointers, 0, launch.grid_size)]
        else:
            workers = min(self.workers._max_workers, launch.grid_size)
            bounds = [launch.grid_size * w // workers for w in range(workers + 1)]
            futures = [
                self.workers.submit(launch.function, *pointers, lo, hi)
                for lo, hi in zip(bounds, bounds[1:])
            ]
            statuses = [f.result() for f in futures]
        if any(statuses):
            raise ExecutionError(launch.error)
