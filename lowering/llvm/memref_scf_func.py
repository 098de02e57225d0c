"""memref, scf and func ops -> LLVM: element loads and stores through one GEP, stack
buffers, loops and conditionals as basic blocks with phis, calls and returns; registered
in `HANDLERS`."""

from __future__ import annotations

from math import prod

from llvmlite import ir
from xdsl.dialects import func, memref, scf

from strata.lowering.llvm.emitter import HANDLERS, FunctionEmitter
from strata.lowering.llvm.types import I1, I8, I64, default_memory, fail, static_shape
from strata.lowering.tile_to_loops.kernel import ATOMIC_ADDF

ALLOCA_ALIGNMENT = 64
"""A cache line and a full AVX-512 vector."""


# memref --------------------------------------------------------------------------


def load(emitter: FunctionEmitter, op: memref.LoadOp) -> ir.Value:
    pointer = emitter.element_pointer(op.memref, op.indices)
    value = emitter.builder.load(pointer, typ=emitter.memory_type(op.memref.type.element_type))
    result_type = emitter.scalar_type(op.res.type)
    if result_type == I1:
        # Any nonzero byte is true, like numpy's bool and the reference (a bool array viewed
        # from other bytes may hold 2, 4, ...); stores write 0 / 1.
        return emitter.builder.icmp_unsigned("!=", value, ir.Constant(I8, 0))
    return emitter.builder.bitcast(value, result_type) if value.type != result_type else value


def store(emitter: FunctionEmitter, op: memref.StoreOp) -> None:
    pointer = emitter.element_pointer(op.memref, op.indices)
    value = emitter.values[op.value]
    stored = emitter.memory_type(op.memref.type.element_type)
    if value.type == I1:
        value = emitter.builder.zext(value, I8)
    elif value.type != stored:
        value = emitter.builder.bitcast(value, stored)
    emitter.builder.store(value, pointer)


ATOMIC_KINDS = {ATOMIC_ADDF: "fadd"}
"""memref.atomic_rmw kinds (MLIR's AtomicRMWKind) as LLVM atomicrmw operations."""


def atomic_rmw(emitter: FunctionEmitter, op: memref.AtomicRMWOp) -> ir.Value:
    """A monotonic (relaxed) atomicrmw; its result is the element's value before."""
    kind = op.kind.value.data
    if kind not in ATOMIC_KINDS:
        raise fail(f"'memref.atomic_rmw' of kind {kind}: only {sorted(ATOMIC_KINDS)} (addf) is supported")
    pointer = emitter.element_pointer(op.memref, op.indices)
    return emitter.builder.atomic_rmw(ATOMIC_KINDS[kind], pointer, emitter.values[op.value], "monotonic")


def alloca(emitter: FunctionEmitter, op: memref.AllocaOp) -> ir.Value:
    shape = static_shape(op.memref.type)  # also rejects dynamic sizes
    default_memory(op.memref.type)
    element = emitter.memory_type(op.memref.type.element_type)
    buffer = emitter.allocas.alloca(element, size=ir.Constant(I64, prod(shape)))
    requested = op.alignment.value.data if op.alignment is not None else 0
    buffer.align = max(ALLOCA_ALIGNMENT, requested)
    return buffer


# scf -------------------------------------------------------------------------------


def for_(emitter: FunctionEmitter, op: scf.ForOp) -> list[ir.Value]:
    """preheader -> header (phis, iv < ub) -> body ... latch -> header | exit.
    The canonical shape LLVM's loop passes and vectorizer look for."""
    b = emitter.builder
    lower, upper, step = (emitter.values[v] for v in (op.lb, op.ub, op.step))
    initial = [emitter.values[v] for v in op.iter_args]
    preheader = b.block
    header = b.append_basic_block("for.header")
    body = b.append_basic_block("for.body")
    exit_ = b.append_basic_block("for.exit")
    b.branch(header)

    b.position_at_end(header)
    iv = b.phi(lower.type, "iv")
    carried = [b.phi(value.type) for value in initial]
    for phi, value in zip([iv, *carried], [lower, *initial]):
        phi.add_incoming(value, preheader)
    b.cbranch(b.icmp_signed("<", iv, upper), body, exit_)

    b.position_at_end(body)
    emitter.bind(op.body.block.args, [iv, *carried])
    yielded = emitter.translate_region(op.body)
    next_iv = b.add(iv, step)
    latch = b.block
    b.branch(header)
    for phi, value in zip([iv, *carried], [next_iv, *yielded]):
        phi.add_incoming(value, latch)

    b.position_at_end(exit_)
    return carried


def if_(emitter: FunctionEmitter, op: scf.IfOp) -> list[ir.Value]:
    b = emitter.builder
    then_block = b.append_basic_block("if.then")
    else_block = b.append_basic_block("if.else") if op.false_region.blocks else None
    merge = b.append_basic_block("if.end")
    b.cbranch(emitter.values[op.cond], then_block, else_block or merge)

    incoming: list[tuple[list[ir.Value], ir.Block]] = []
    for region, block in ((op.true_region, then_block), (op.false_region, else_block)):
        if block is None:
            continue
        b.position_at_end(block)
        values = emitter.translate_region(region)
        incoming.append((values, b.block))
        b.branch(merge)

    b.position_at_end(merge)
    results = []
    for i, result in enumerate(op.results):
        phi = b.phi(emitter.scalar_type(result.type))
        for values, block in incoming:
            phi.add_incoming(values[i], block)
        results.append(phi)
    return results


# func --------------------------------------------------------------------------------


def return_(emitter: FunctionEmitter, op: func.ReturnOp) -> None:
    values = emitter.operands(op)
    if values:
        emitter.builder.ret(*values)
    else:
        emitter.builder.ret_void()


def call(emitter: FunctionEmitter, op: func.CallOp) -> ir.Value | None:
    callee = op.callee.string_value()
    if callee not in emitter.functions:
        raise fail(f"'func.call' to @{callee}, which is not a function of this module")
    result = emitter.builder.call(emitter.functions[callee], emitter.operands(op))
    return result if op.results else None


HANDLERS.update({
    memref.LoadOp: load,
    memref.StoreOp: store,
    memref.AtomicRMWOp: atomic_rmw,
    memref.AllocaOp: alloca,
    scf.ForOp: for_,
    scf.IfOp: if_,
    func.ReturnOp: return_,
    func.CallOp: call,
})
