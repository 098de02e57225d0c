"""A parallel entry point beside each CPU kernel, running its grid on an OpenMP team.

    i32 @k(ptr %buffer0, ..., i64 %begin, i64 %end)         the kernel (one grid range)
    i32 @k.parallel(ptr %buffers, i64 %grid, i32 %threads)   added here

`k.parallel` reads the buffer pointers from an array, opens an OpenMP parallel region of
`threads` threads (libgomp's `GOMP_parallel`; the calling thread is thread 0) and gives
thread t of n the grid range [grid·t/n, grid·(t+1)/n); the result is nonzero if any
range failed a check. The runtime calls it for launches worth splitting.

Why not a Python thread pool: handing a range to a pool thread and waiting for it costs
about 85 µs per launch in this VM (a futex wake-up each way), more than many kernels run
(a training step of the 4x128x256 block has 75 launches); an OpenMP team's threads wait
spinning between regions, so a two-thread region costs about 1 µs. OpenMP comes from
libgomp, loaded by `initialize_llvm` where the system has it (`openmp_library()`); without
it the kernels get no parallel entry and the runtime falls back to its Python pool.
"""

from __future__ import annotations

import ctypes.util
from functools import cache

from llvmlite import ir

from strata.lowering.llvm.types import I64, POINTER

I32 = ir.IntType(32)
CONTEXT = ir.LiteralStructType([POINTER, I64, I32])
"""What the team threads share: the buffer pointer array, the grid size, the status."""


@cache
def openmp_library() -> str | None:
    """libgomp's path, or None where the system has none."""
    return ctypes.util.find_library("gomp")


def parallel_name(kernel: str) -> str:
    return f"{kernel}.parallel"


def add_parallel_entry(module: ir.Module, kernel: ir.Function) -> ir.Function:
    """`kernel.parallel` (and the region body it runs on every thread) in `module`."""
    team_body = ir.Function(module, ir.FunctionType(ir.VoidType(), [POINTER]), f"{kernel.name}.team")
    team_body.linkage = "internal"
    team_body.attributes.add("nounwind")
    b = ir.IRBuilder(team_body.append_basic_block("entry"))
    context = team_body.args[0]
    thread = b.sext(b.call(external(module, "omp_get_thread_num", I32, []), []), I64)
    threads = b.sext(b.call(external(module, "omp_get_num_threads", I32, []), []), I64)
    grid = b.load(field(b, context, 1), typ=I64)
    begin = b.sdiv(b.mul(grid, thread), threads)
    end = b.sdiv(b.mul(grid, b.add(thread, ir.Constant(I64, 1))), threads)
    pointers = b.load(field(b, context, 0), typ=POINTER)
    buffers = [
        b.load(b.gep(pointers, [ir.Constant(I64, i)], inbounds=True, source_etype=POINTER), typ=POINTER)
        for i in range(len(kernel.args) - 2)
    ]
    status = b.call(kernel, [*buffers, begin, end])
    with b.if_then(b.icmp_signed("!=", status, ir.Constant(I32, 0))):
        # Several threads may fail at once: an atomic or keeps the status nonzero.
        b.atomic_rmw("or", field(b, context, 2), status, "monotonic")
    b.ret_void()

    entry = ir.Function(module, ir.FunctionType(I32, [POINTER, I64, I32]), parallel_name(kernel.name))
    entry.attributes.add("nounwind")
    b = ir.IRBuilder(entry.append_basic_block("entry"))
    pointers, grid, threads = entry.args
    # An opaque pointer, like every other here (llvmlite's alloca gives a typed one).
    context = b.inttoptr(b.ptrtoint(b.alloca(CONTEXT), I64), POINTER)
    b.store(pointers, field(b, context, 0))
    b.store(grid, field(b, context, 1))
    b.store(ir.Constant(I32, 0), field(b, context, 2))
    gomp_parallel = external(module, "GOMP_parallel", ir.VoidType(), [POINTER, POINTER, I32, I32])
    b.call(gomp_parallel, [team_body, context, threads, ir.Constant(I32, 0)])
    # GOMP_parallel has joined the team: its writes are visible.
    b.ret(b.load(field(b, context, 2), typ=I32))
    return entry


def field(b: ir.IRBuilder, context: ir.Value, index: int) -> ir.Value:
    return b.gep(context, [ir.Constant(I32, 0), ir.Constant(I32, index)], inbounds=True, source_etype=CONTEXT)


def external(module: ir.Module, name: str, result: ir.Type, arguments: list[ir.Type]) -> ir.Function:
    if name in module.globals:
        return module.globals[name]
    function = ir.Function(module, ir.FunctionType(result, arguments), name)
    function.attributes.add("nounwind")
    return function
