"""`dedupe-kernels`: one kernel per distinct body, every launch of a copy sent to it.

A program often launches kernels that are the same code under another name: the
backward pass of a layer repeats its forward kernels, every parameter gets the same
optimizer update, each head of an attention block the same row kernels. Each copy would
otherwise be lowered, verified, optimized and compiled by LLVM on its own.

Before:

    tile.kernel @f_relu_0(%0: memref<64xf32>, %1: memref<64xf32>) attributes {grid = array<i64: 1>} {
      ...
    }
    tile.kernel @f_relu_1(%0: memref<64xf32>, %1: memref<64xf32>) attributes {grid = array<i64: 1>} {
      ...                                            // the same ops, attributes and types
    }
    func.func @f(...) {
      tile.launch @f_relu_0(%a, %b) : memref<64xf32>, memref<64xf32>
      tile.launch @f_relu_1(%b, %c) : memref<64xf32>, memref<64xf32>
      ...

After:

    tile.kernel @f_relu_0(%0: memref<64xf32>, %1: memref<64xf32>) attributes {grid = array<i64: 1>} {
      ...
    }
    func.func @f(...) {
      tile.launch @f_relu_0(%a, %b) : memref<64xf32>, memref<64xf32>
      tile.launch @f_relu_0(%b, %c) : memref<64xf32>, memref<64xf32>
      ...

Two kernels are the same when they print the same with their symbol name left out: every
op, operand, type, property and attribute (the grid; `tile.in_place`, `tile.error`,
`tile.aliased`, `gpu.*` on lowered kernels; the messages of `tile.check`, which quote the
source location) must match, so kernels differing in one constant or attribute stay apart.
The first kernel of each group
(in module order) is kept under its own name; the others are erased.

Works on the tile level (`tile.kernel`, where cpu-pipeline and gpu-pipeline run it, right
after token-dce: the copies are then never lowered) and on lowered kernels (`func.func`
carrying `tile.grid`). Kernels are only referenced by `tile.launch` ops, which are the
only ops rewritten. A kernel shared by several launches is still planned per launch by
plan-memory: if one of them writes in place, the shared kernel is marked `tile.aliased`
(the conservative choice for all its launches).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.printer import Printer

from strata.dialects import tile


def is_kernel(op: Operation) -> bool:
    """A tile.kernel, or a kernel lowered to a function (it keeps `tile.grid`)."""
    return isinstance(op, tile.KernelOp) or (isinstance(op, func.FuncOp) and "tile.grid" in op.attributes)


def anonymous_text(kernel: tile.KernelOp | func.FuncOp) -> str:
    """`kernel` printed with its symbol name blanked (so copies print the same)."""
    name = kernel.sym_name
    kernel.sym_name = StringAttr("")
    try:
        stream = io.StringIO()
        Printer(stream=stream).print_op(kernel)
        return stream.getvalue()
    finally:
        kernel.sym_name = name


def dedupe_kernels(module: ModuleOp) -> dict[str, str]:
    """Erase every kernel of `module` that repeats an earlier one and point its launches
    at the kept one; returns {erased name: kept name}."""
    # Kernels are grouped by a cheap outline first (their type and op names): only those
    # sharing one with another kernel are printed.
    outlines: dict[tuple, list[tile.KernelOp | func.FuncOp]] = {}
    for op in module.ops:
        if is_kernel(op):
            outlines.setdefault((op.function_type, tuple(o.name for o in op.walk())), []).append(op)
    renamed: dict[str, str] = {}
    for group in outlines.values():
        kept: dict[str, str] = {}
        for kernel in group if len(group) > 1 else ():
            name = kernel.sym_name.data
            first = kept.setdefault(anonymous_text(kernel), name)
            if first != name:
                renamed[name] = first
                module.body.block.erase_op(kernel)
    if renamed:
        for op in module.walk():
            if isinstance(op, tile.LaunchOp) and (target := renamed.get(op.kernel.string_value())) is not None:
                op.kernel = SymbolRefAttr(target)
    return renamed


@dataclass(frozen=True)
class DedupeKernelsPass(ModulePass):
    """Merge kernels identical but for their name into one, launches renamed (see module
    docstring)."""

    name = "dedupe-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        dedupe_kernels(op)
