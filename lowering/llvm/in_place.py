"""Kernels the memory planner runs in place, versioned so that both versions vectorize.

A kernel marked `tile.aliased` may be launched with an input and its output in the same
memory, so its pointer arguments cannot be `noalias`. LLVM then vectorizes each loop
behind a run-time check that the arrays do not overlap, and an input that *is* the output
fails that check: the loop runs scalar (measured: a chain of three unfused elementwise
kernels in place, 8.7 ms against 3.5 ms out of place; a softmax over 512K elements
0.88 ms against 0.15 ms).

The kernel is therefore translated as `<name>.general` (internal, always inlined) and
`<name>` becomes a dispatcher: for each input the kernel may overwrite (`tile.in_place`),
if its pointer equals the output's, call the body with that argument *replaced by the
output pointer*; otherwise call it with the arguments as given:

    i32 @k(ptr %x, ptr %y, i64 %begin, i64 %end):
        %same = icmp eq ptr %x, %y
        br %same, in_place:  call @k.general(ptr %y, ptr %y, ...)   ; one base pointer:
                                                                    ; same-index accesses
              , general:   call @k.general(ptr %x, ptr %y, ...)    ; overlap checks pass
                                                                    ; for disjoint arrays

Inlined, the in-place copy addresses one pointer, so LLVM sees each element read before
it is written at the same index and vectorizes without a check. Kernels that write more
than one argument keep the single version.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import func

from strata.dialects.tile_program import written_arguments

GENERAL_SUFFIX = ".general"


def in_place_candidates(func_op: func.FuncOp) -> tuple[list[int], int] | None:
    """(the inputs that may share the output's memory, the output's position), or None
    when the kernel is not aliased or writes several arguments."""
    if "tile.aliased" not in func_op.attributes or "tile.in_place" not in func_op.attributes:
        return None
    written = written_arguments(func_op)
    if len(written) != 1:
        return None
    (output,) = written
    inputs = [i for i in func_op.attributes["tile.in_place"].get_values() if i != output]
    return (inputs, output) if inputs else None


def declare_general(module: ir.Module, kernel: ir.Function) -> ir.Function:
    """`<kernel>.general`: where the kernel's body is translated (internal, inlined)."""
    general = ir.Function(module, kernel.function_type, kernel.name + GENERAL_SUFFIX)
    general.linkage = "internal"
    general.attributes.add("alwaysinline")
    general.attributes.add("nounwind")
    return general


def emit_dispatch(kernel: ir.Function, general: ir.Function, inputs: list[int], output: int) -> None:
    """`kernel`'s body: the dispatcher described above."""
    b = ir.IRBuilder(kernel.append_basic_block("dispatch"))
    arguments = list(kernel.args)
    for position in inputs:
        same = b.icmp_unsigned("==", arguments[position], arguments[output])
        with b.if_then(same):
            shared = [arguments[output] if i == position else a for i, a in enumerate(arguments)]
            b.ret(b.call(general, shared))
    b.ret(b.call(general, arguments))
