"""GPU kernel functions (lower-tile-to-gpu) → NVVM IR text → PTX through libNVVM.

CUDA 13's libNVVM reads textual IR for compute_90 and older with an LLVM 7 reader, which
knows only typed pointers (`float addrspace(1)*`, no opaque `ptr`; xDSL's LLVM conversion
emits opaque pointers only), so the IR is built with llvmlite in its typed-pointer mode:

- a `memref<N x T>` argument is a `T addrspace(1)*` (global memory; i1 as i8), `noalias`
  unless plan-memory runs the kernel in place (`tile.aliased`); `index` is i64;
- the module has the `nvptx64-nvidia-cuda` triple, Numba's NVVM data layout,
  `!nvvm.annotations` marking each kernel (`"kernel"`, and `"maxntidx"` = its block size)
  and `!nvvmir.version` equal to the IR version of the libNVVM that compiles it;
- private `llvm.nvvm.*` declarations (special registers, `barrier0`,
  `shfl.sync.bfly.{i32,f32}`) are the NVVM intrinsics of that name; a `func.call` to one
  calls the intrinsic;
- a `memref.alloca` in memory space 3 (shared memory) is an internal `addrspace(3)` global;
- a kernel with `gpu.tensor_maps` gets a 64-byte aligned `addrspace(1)` table of 128 bytes
  a map, `@<kernel>_tensor_maps` (zeros; the runtime writes the encoded maps), and
  `@ptx.tensor_maps.address` is its generic address.

The op translation is the CPU's (lowering/llvm/): `NvvmFunctionEmitter` subclasses its
`FunctionEmitter` and uses its `HANDLERS` table, overriding only what the LLVM 7 reader
or the NVPTX backend does not take:

| lowering/llvm emits | here |
| --- | --- |
| `fneg` (LLVM 8) | `fsub -0.0, x` |
| `llvm.maximum/minimum` (LLVM 8) | f32: `max.NaN.f32` / `min.NaN.f32`; f64: `llvm.maxnum/minnum` + NaN select (NaN-propagating) |
| `llvm.smax/smin/umax/umin`, `llvm.abs` (LLVM 12) | `icmp` + `select` |
| `llvm.exp/exp2/log/log2/pow/sin/cos/roundeven/fabs`, libm `tanh/erf/log1p` | libdevice `__nv_*` |
| `bfloat` loads, stores, constants, `fpext`/`fptrunc` | i16 in memory, f32 in registers (below) |

bf16 has no LLVM 7 type: a bf16 element is an i16 in memory and an f32 in registers (the
bits shifted into the high half on load), and every op whose result is bf16 rounds its f32
result to the nearest bf16 (even on ties, NaN kept; one `cvt.rn.bf16x2.f32`) — the
reference's "compute in f32, round each result once". A cast from f64 or a wide integer
to bf16 rounds twice, through f32 first (`cvt.rn.f32.f64`, then the bf16 rounding), as
the reference does: ml_dtypes' astype to bfloat16 goes through float32 too, and so does
the CPU. (f16 is a real type here:
a cast from f64 to f16 is one `fptrunc double to half`, `cvt.rn.f16.f64`, rounding once
like numpy's astype.) Constants round once, at compile time. The store takes the high half
of that f32.

Math functions
come from libdevice (`libdevice.10.bc`, added lazily after the module verifies, like
Numba). Compilation uses `-fma=0`: libNVVM contracts mul+add into FMA by default, which
would change rounding against the reference; explicit `math.fma` (the `fuse-fma` pass)
still becomes `fma.rn`.
"""

from __future__ import annotations

import glob
import hashlib
import inspect
import os
import re
from collections.abc import Sequence
from functools import partial
from math import prod

import ml_dtypes
from llvmlite import ir
from xdsl.dialects import arith, func, math, memref, scf
from xdsl.dialects.builtin import BFloat16Type, IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Operation

from strata.support.errors import StrataError
from strata.lowering.llvm.arith_math import constant, fastmath_flags
from strata.lowering.llvm.emitter import HANDLERS, FunctionEmitter
from strata.lowering.llvm.memref_scf_func import alloca, call, load, store
from strata.lowering.llvm.translate import add_function_attributes
from strata.lowering.llvm.types import DOUBLE, FLOAT, HALF, UnsupportedType, memory_type, scalar_type, static_shape
from strata.lowering.nvvm.ptx_checks import check_barriers
from strata.lowering.tile_to_gpu.kernel import INLINE_PTX_PREFIX, NVVM_PREFIX, SHARED_MEMORY_SPACE, WARPGROUP_MMA, gpu_kernels
from strata.lowering.tile_to_gpu.tensor_maps import MAP_ALIGNMENT, MAP_BYTES, TABLE_ADDRESS, TENSOR_MAPS, table_name
from strata.lowering.tile_to_gpu.warpgroup_loop import FRESH_WGMMA, wgmma_instruction
from strata.lowering.tile_to_loops.kernel import ATOMIC_ADDF

TRIPLE = "nvptx64-nvidia-cuda"
DATA_LAYOUT = (
    "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-"
    "f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
)
"""Numba's NVVM data layout (numba.cuda.cudadrv.nvvm); libNVVM wants one."""
GLOBAL = 1
I32 = ir.IntType(32)
ARCHES = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a")
"""Architectures whose libNVVM reader takes the typed-pointer IR built here (sm_90a: sm_90
with its architecture-specific instructions, the warpgroup mma among them)."""

LIBDEVICE_FUNCTIONS = {
    "llvm.exp": "exp", "llvm.exp2": "exp2", "llvm.log": "log", "llvm.log2": "log2",
    "llvm.pow": "pow", "llvm.sin": "sin", "llvm.cos": "cos", "llvm.roundeven": "rint",
    "llvm.fabs": "fabs",  # libNVVM: "Unsupported intrinsic: llvm.fabs.f32"
}  # fmt: skip
"""LLVM intrinsics the NVPTX backend cannot select (or LLVM 7 lacks) → libdevice names."""


def fail(message: str) -> StrataError:
    return StrataError(f"nvvm translation: {message}")


I16 = ir.IntType(16)
FLOAT_WIDTHS = {HALF: 16, FLOAT: 32, DOUBLE: 64}


def nvvm_memory_type(element_type) -> ir.Type:
    return I16 if isinstance(element_type, BFloat16Type) else memory_type(element_type)


def pointer_type(memref_type: MemRefType) -> ir.Type:
    static_shape(memref_type)
    return ir.PointerType(nvvm_memory_type(memref_type.element_type), addrspace=GLOBAL)


class NvvmFunctionEmitter(FunctionEmitter):
    """The LLVM translation's emitter with the NVVM overrides of NVVM_HANDLERS and libdevice math."""

    def __init__(self, llvm_function: ir.Function, functions: dict[str, ir.Function]):
        super().__init__(llvm_function, functions)
        self.shared_buffers = 0

    def scalar_type(self, type_) -> ir.Type:
        return FLOAT if isinstance(type_, BFloat16Type) else scalar_type(type_)

    def dynamic_shared(self) -> ir.GlobalVariable:
        """The kernel's dynamic shared memory: an extern addrspace(3) array of bytes, sized at launch."""
        name = f"{self.function.name}_dynamic_shared"
        if name not in self.module.globals:
            array = ir.GlobalVariable(self.module, ir.ArrayType(ir.IntType(8), 0), name, addrspace=SHARED_MEMORY_SPACE)
            array.linkage = "external"
            array.align = 16
        return self.module.globals[name]

    def memory_type(self, element_type) -> ir.Type:
        return nvvm_memory_type(element_type)

    def translate(self, op: Operation) -> None:
        """bf16 results (f32 registers) are rounded to bf16 after the op that makes them."""
        super().translate(op)
        if isinstance(op, ROUNDED_BY_PRODUCER):
            return
        for result in op.results:
            if isinstance(result.type, BFloat16Type):
                self.values[result] = self.round_to_bf16(self.values[result])

    def round_to_bf16(self, value: ir.Value) -> ir.Value:
        """The bf16 nearest to an f32 (ties to even; NaN stays NaN), as an f32: one
        `cvt.rn.bf16x2.f32` (sm_80 and later) of the value and 0.0 puts the rounded bf16 in
        the high half and zeros in the low one, which is that f32's bit pattern."""
        packed = self.builder.asm(ir.FunctionType(I32, [FLOAT, FLOAT]), "cvt.rn.bf16x2.f32 $0, $1, $2;", "=r,f,f",
                                  [value, ir.Constant(FLOAT, 0.0)], side_effect=False)
        return self.builder.bitcast(packed, FLOAT)

    def handler(self, op: Operation):
        return NVVM_HANDLERS.get(type(op)) or HANDLERS.get(type(op))

    def intrinsic(self, name: str, type_: ir.Type, arity: int) -> ir.Function:
        if name in LIBDEVICE_FUNCTIONS:
            return self.libdevice(LIBDEVICE_FUNCTIONS[name], type_, arity)
        return super().intrinsic(name, type_, arity)

    def libm(self, name: str, type_: ir.Type) -> ir.Function:
        return self.libdevice(name, type_, 1)

    def libdevice(self, name: str, type_: ir.Type, arity: int) -> ir.Function:
        if type_ not in (FLOAT, DOUBLE):
            raise UnsupportedType(f"no libdevice '{name}' for {type_}")
        return self.external(f"__nv_{name}" + ("f" if type_ == FLOAT else ""), type_, arity)


def negf(emitter: NvvmFunctionEmitter, op: arith.NegfOp) -> ir.Value:
    (value,) = emitter.operands(op)
    return emitter.builder.fsub(ir.Constant(value.type, -0.0), value, flags=fastmath_flags(op))


def bf16_constant(emitter: NvvmFunctionEmitter, op: arith.ConstantOp) -> ir.Value:
    """A bf16 constant, rounded once, at compile time (an f32 register)."""
    if not isinstance(op.result.type, BFloat16Type):
        return constant(emitter, op)
    return ir.Constant(FLOAT, float(ml_dtypes.bfloat16(op.value.value.data)))


def bf16_load(emitter: NvvmFunctionEmitter, op: memref.LoadOp) -> ir.Value:
    if not isinstance(op.res.type, BFloat16Type):
        return load(emitter, op)
    b = emitter.builder
    bits = b.load(emitter.element_pointer(op.memref, op.indices), typ=I16)
    return b.bitcast(b.shl(b.zext(bits, I32), ir.Constant(I32, 16)), FLOAT)


def bf16_store(emitter: NvvmFunctionEmitter, op: memref.StoreOp) -> None:
    if not isinstance(op.value.type, BFloat16Type):
        return store(emitter, op)
    b = emitter.builder
    high = b.lshr(b.bitcast(emitter.values[op.value], I32), ir.Constant(I32, 16))
    b.store(b.trunc(high, I16), emitter.element_pointer(op.memref, op.indices))


def float_conversion(emitter: NvvmFunctionEmitter, op: arith.ExtFOp | arith.TruncFOp) -> ir.Value:
    """extf / truncf with bf16 (an f32 register) on either side: between registers of one
    width nothing moves; the bf16 rounding follows in translate."""
    (value,) = emitter.operands(op)
    target = emitter.scalar_type(op.result.type)
    if value.type == target:
        return value
    wider = FLOAT_WIDTHS[target] > FLOAT_WIDTHS[value.type]
    return (emitter.builder.fpext if wider else emitter.builder.fptrunc)(value, target)


def nan_propagating(name: str, emitter: NvvmFunctionEmitter, op: Operation) -> ir.Value:
    """maximumf/minimumf: of f32, one `max.NaN.f32` / `min.NaN.f32` (sm_80 and later: NaN
    if either operand is NaN); of f64, maxnum/minnum and a select of a + b (NaN) where an
    operand is NaN."""
    b = emitter.builder
    lhs, rhs = emitter.operands(op)
    if lhs.type == FLOAT:
        instruction = "max" if name == "llvm.maxnum" else "min"
        return b.asm(ir.FunctionType(FLOAT, [FLOAT, FLOAT]), f"{instruction}.NaN.f32 $0, $1, $2;", "=f,f,f",
                     [lhs, rhs], side_effect=False)
    number = b.call(emitter.intrinsic(name, lhs.type, 2), [lhs, rhs])
    unordered = b.fcmp_unordered("uno", lhs, rhs)
    return b.select(unordered, b.fadd(lhs, rhs), number)


def int_select(method: str, predicate: str, emitter: NvvmFunctionEmitter, op: Operation) -> ir.Value:
    lhs, rhs = emitter.operands(op)
    b = emitter.builder
    return b.select(getattr(b, method)(predicate, lhs, rhs), lhs, rhs)


def shared_alloca(emitter: NvvmFunctionEmitter, op: memref.AllocaOp) -> ir.Value:
    """A shared-memory buffer (memory space 3) is a module global in addrspace(3); any
    other alloca is per-thread local memory, as on the CPU."""
    space = op.memref.type.memory_space
    if not (isinstance(space, IntegerAttr) and space.value.data == SHARED_MEMORY_SPACE):
        return alloca(emitter, op)
    element = emitter.memory_type(op.memref.type.element_type)
    if "gpu.dynamic_offset" in op.attributes:
        # Dynamic shared memory: the kernel's one extern array, at the lowering's offset.
        offset = ir.Constant(I32, op.attributes["gpu.dynamic_offset"].value.data)
        base = emitter.dynamic_shared()
        at = emitter.allocas.gep(base, [ir.Constant(I32, 0), offset], inbounds=True)
        return emitter.allocas.bitcast(at, ir.PointerType(element, addrspace=SHARED_MEMORY_SPACE))
    array = ir.ArrayType(element, prod(static_shape(op.memref.type)))
    name = f"{emitter.function.name}.shared.{emitter.shared_buffers}"
    emitter.shared_buffers += 1
    buffer = ir.GlobalVariable(emitter.module, array, name, addrspace=SHARED_MEMORY_SPACE)
    buffer.linkage = "internal"
    buffer.initializer = ir.Constant(array, ir.Undefined)
    buffer.align = 16
    zero = ir.Constant(I32, 0)
    return emitter.allocas.gep(buffer, [zero, zero], inbounds=True)


def bf16_bitcast(emitter: NvvmFunctionEmitter, op: arith.BitcastOp) -> ir.Value:
    """bitcast between bf16 (an f32 register, see above) and i16: the high half of the f32."""
    (value,) = emitter.operands(op)
    b = emitter.builder
    if isinstance(op.input.type, BFloat16Type):
        return b.trunc(b.lshr(b.bitcast(value, I32), ir.Constant(I32, 16)), I16)
    if isinstance(op.result.type, BFloat16Type):
        return b.bitcast(b.shl(b.zext(value, I32), ir.Constant(I32, 16)), FLOAT)
    return b.bitcast(value, emitter.scalar_type(op.result.type))


def mma_template(kind: str, depth: int = 16) -> str:
    return f"mma.sync.aligned.m16n8k{depth}.row.col.f32.{kind}.{kind}.f32 {{$0,$1,$2,$3}}, {{$4,$5,$6,$7}}, {{$8,$9}}, {{$10,$11,$12,$13}};"


def wgmma_template(n: int, kind: str, m_major: bool, n_major: bool, fresh: bool = False) -> str:
    """d (n / 2 f32 registers) += a @ b from shared-memory descriptors $d, $d+1 (a M-major
    when `m_major`, b N-major when `n_major`, else K-major: the transpose bits); the
    accumulators are tied operands, or (`fresh`) d = a @ b, results only (FRESH_WGMMA)."""
    d = n // 2
    registers = ",".join(f"${i}" for i in range(d))
    return (f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{kind}.{kind} {{{registers}}}, ${d}, ${d + 1}, "
            f"{int(not fresh)}, 1, 1, {int(m_major)}, {int(n_major)};")


def wgmma_registers_a_template(n: int, kind: str, n_major: bool, fresh: bool = False) -> str:
    """d += a @ b with a's fragment in four 32-bit registers $d .. $d+3 (mma.sync's a layout
    per warp) and b from the descriptor $d+4 (N-major when `n_major`); `fresh`: d = a @ b
    (scale-d 0), the accumulators not operands (FRESH_WGMMA)."""
    d = n // 2
    registers = ",".join(f"${i}" for i in range(d))
    return (f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{kind}.{kind} {{{registers}}}, "
            f"{{${d},${d + 1},${d + 2},${d + 3}}}, ${d + 4}, {int(not fresh)}, 1, 1, {int(n_major)};")


def wgmma_tf32_template(n: int, fresh: bool = False) -> str:
    """d (n / 2 f32 registers) += a @ b on f32 operands as TF32, both K-major from
    shared-memory descriptors $d, $d+1 (TF32 has no transpose bits); `fresh`: d = a @ b."""
    d = n // 2
    registers = ",".join(f"${i}" for i in range(d))
    return f"wgmma.mma_async.sync.aligned.m64n{n}k8.f32.tf32.tf32 {{{registers}}}, ${d}, ${d + 1}, {int(not fresh)}, 1, 1;"


INLINE_PTX = {
    "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32": mma_template("bf16"),
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32": mma_template("f16"),
    "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32": mma_template("tf32", 8),
    "cvt.rna.tf32.f32": "cvt.rna.tf32.f32 $0, $1;",
    "ex2.approx.ftz.f32": "ex2.approx.ftz.f32 $0, $1;",
    "cvt.rn.bf16x2.f32": "cvt.rn.bf16x2.f32 $0, $1, $2;",
    "cvt.rn.f16x2.f32": "cvt.rn.f16x2.f32 $0, $1, $2;",
    "unpack.f16x2.f32": "{ .reg .b16 low, high; mov.b32 {low, high}, $2; cvt.f32.f16 $0, low; cvt.f32.f16 $1, high; }",
    "ldmatrix.sync.aligned.m8n8.x4.shared.b16": "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0,$1,$2,$3}, [$4];",
    "ldmatrix.sync.aligned.m8n8.x2.shared.b16": "ldmatrix.sync.aligned.m8n8.x2.shared.b16 {$0,$1}, [$2];",
    "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16": "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0,$1,$2,$3}, [$4];",
    "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16": "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {$0,$1}, [$2];",
    "cp.async.cg.shared.global.16": "cp.async.cg.shared.global [$0], [$1], 16, $2;",
    "st.global.b32": "st.global.b32 [$0], $1;",
    "st.global.v4.b32": "st.global.v4.b32 [$0], {$1, $2, $3, $4};",
    "shf.r.clamp.b32": "shf.r.clamp.b32 $0, $1, $2, $3;",
    "ld.shared.v4.b32": "ld.shared.v4.b32 {$0, $1, $2, $3}, [$4];",
    "cp.async.commit_group": "cp.async.commit_group;",
    **{f"cp.async.wait_group.{n}": f"cp.async.wait_group {n};" for n in range(8)},
    "fence.proxy.async.shared::cta": "fence.proxy.async.shared::cta;",
    "mbarrier.init.shared.b64": "mbarrier.init.shared.b64 [$0], $1;",
    "mbarrier.arrive.shared.b64": "{ .reg .b64 state; mbarrier.arrive.shared.b64 state, [$0]; }",
    "mbarrier.arrive.expect_tx.shared.b64": "{ .reg .b64 state; mbarrier.arrive.expect_tx.shared.b64 state, [$0], $1; }",
    # A tensor-map copy (tensor_maps.py): shared target, map address, coordinates, mbarrier.
    **{f"cp.async.bulk.tensor.{n}d": (f"cp.async.bulk.tensor.{n}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
                                      f"[$0], [$1, {{{', '.join(f'${i}' for i in range(2, n + 2))}}}], [${n + 2}];")
       for n in range(1, 6)},
    "fence.mbarrier_init.release.cluster": "fence.mbarrier_init.release.cluster;",
    **{f"setmaxnreg.{way}.sync.aligned.u32.{n}": f"setmaxnreg.{way}.sync.aligned.u32 {n};"
       for way in ("inc", "dec") for n in range(24, 257, 8)},
    "fence.proxy.tensormap::generic.acquire.gpu": "fence.proxy.tensormap::generic.acquire.gpu [$0], 128;",
    "cp.async.mbarrier.arrive.noinc.shared.b64": "cp.async.mbarrier.arrive.noinc.shared.b64 [$0];",
    # A loop inside the asm (labels made unique per instance by LLVM's ${:uid}): try_wait
    # returns false when its time slice ends before the phase completes.
    "mbarrier.wait.parity": ("{ .reg .pred done; WAIT_${:uid}: mbarrier.try_wait.parity.shared.b64 done, [$0], $1; "
                             "@!done bra WAIT_${:uid}; }"),
    "wgmma.fence.sync.aligned": "wgmma.fence.sync.aligned;",
    "wgmma.commit_group.sync.aligned": "wgmma.commit_group.sync.aligned;",
    **{f"wgmma.wait_group.sync.aligned.{n}": f"wgmma.wait_group.sync.aligned {n};" for n in range(2)},
    **{wgmma_instruction(n, kind, m_major, n_major) + FRESH_WGMMA * fresh: wgmma_template(n, kind, m_major, n_major, fresh)
       for n in range(8, 257, 8) for kind in ("bf16", "f16") for m_major in (False, True) for n_major in (False, True)
       for fresh in (False, True)},
    **{wgmma_instruction(n, kind, False, n_major) + ".a_registers" + FRESH_WGMMA * fresh:
       wgmma_registers_a_template(n, kind, n_major, fresh)
       for n in range(8, 257, 8) for kind in ("bf16", "f16") for n_major in (False, True) for fresh in (False, True)},
    **{wgmma_instruction(n, "tf32", False, False) + FRESH_WGMMA * fresh: wgmma_tf32_template(n, fresh)
       for n in range(8, 257, 8) for fresh in (False, True)},
}  # fmt: skip
"""The PTX a call of @ptx.<name> stands for: $n are its results, then its operands (an
address is an i32 in shared memory, an index (i64) in global memory)."""
PURE_PTX = ("mma.", "cvt.", "unpack.", "ex2.", "shf.")
"""Instructions without memory effects; every other one is a volatile asm that clobbers memory."""
TIED_PTX = ("wgmma.mma_async.", "wgmma.wait_group.")
"""Instructions whose last operands are their results' values before (tied registers): the
accumulators of an asynchronous warpgroup mma stay in the same registers until a wait."""
REGISTER_CONSTRAINTS = {FLOAT: "f", I32: "r", ir.IntType(64): "l"}


def inline_ptx(emitter: NvvmFunctionEmitter, op: func.CallOp) -> ir.Value | list[ir.Value] | None:
    """A call of @ptx.<name> is the instruction INLINE_PTX[name] as inline assembly."""
    callee = op.callee.string_value()
    if not callee.startswith(INLINE_PTX_PREFIX):
        return call(emitter, op)
    name = re.sub(r"\.x\d+$", "", callee.removeprefix(INLINE_PTX_PREFIX))  # `.x64`: the tied register count
    if name == TABLE_ADDRESS:
        return tensor_map_table(emitter)
    if name not in INLINE_PTX:
        raise fail(f"unknown inline PTX instruction '{name}'")
    b = emitter.builder
    arguments = emitter.operands(op)
    unsupported = [str(a.type) for a in arguments if a.type not in REGISTER_CONSTRAINTS]
    if unsupported:
        raise fail(f"inline PTX '{name}': no register class for operands of type {', '.join(unsupported)}")
    constraints = [REGISTER_CONSTRAINTS[a.type] for a in arguments]
    outputs = [emitter.scalar_type(r.type) for r in op.results]
    if name.startswith(TIED_PTX) and not name.endswith(FRESH_WGMMA):
        constraints[len(constraints) - len(outputs):] = [str(n) for n in range(len(outputs))]
    constraints = [f"={REGISTER_CONSTRAINTS[t]}" for t in outputs] + constraints
    pure = name.startswith(PURE_PTX)
    if not pure:
        constraints.append("~{memory}")
    result_type = ir.LiteralStructType(outputs) if len(outputs) > 1 else (outputs[0] if outputs else ir.VoidType())
    signature = ir.FunctionType(result_type, [a.type for a in arguments])
    result = b.asm(signature, INLINE_PTX[name], ",".join(constraints), arguments, side_effect=not pure)
    if len(outputs) > 1:
        return [b.extract_value(result, n) for n in range(len(outputs))]
    return result if outputs else None


ATOMIC_ADD_PTX = {FLOAT: ("f32", "f"), DOUBLE: ("f64", "d")}
"""The float types memref.atomic_rmw adds: PTX type and register constraint."""


GLOBAL_MEMORY_SPACE = 1


def declare_tensor_map_table(module: ir.Module, op: func.FuncOp) -> None:
    """The global table of a kernel's tensor maps (tensor_maps.py): 64-byte aligned, named
    after the kernel, zeros until the runtime writes the encoded maps into it."""
    if TENSOR_MAPS not in op.attributes:
        return
    array = ir.ArrayType(ir.IntType(8), MAP_BYTES * len(op.attributes[TENSOR_MAPS].data))
    table = ir.GlobalVariable(module, array, table_name(op.sym_name.data), addrspace=GLOBAL_MEMORY_SPACE)
    table.initializer = ir.Constant(array, None)
    table.align = MAP_ALIGNMENT


def tensor_map_table(emitter: NvvmFunctionEmitter) -> ir.Value:
    """The generic address (i64) of the kernel's tensor-map table."""
    name = table_name(emitter.function.name)
    if name not in emitter.module.globals:
        raise fail(f"@{emitter.function.name}: copies through tensor maps, but the kernel has no {TENSOR_MAPS}")
    b, zero = emitter.builder, ir.Constant(I32, 0)
    first = b.gep(emitter.module.globals[name], [zero, zero], inbounds=True)
    return b.ptrtoint(b.addrspacecast(first, ir.PointerType(ir.IntType(8))), ir.IntType(64))


def atomic_add(emitter: NvvmFunctionEmitter, op: memref.AtomicRMWOp) -> ir.Value:
    """A float atomic add into global memory as `atom.global.add` (libNVVM's IR predates
    atomicrmw fadd); its result is the element's value before."""
    value = emitter.values[op.value]
    if op.kind.value.data != ATOMIC_ADDF or value.type not in ATOMIC_ADD_PTX:
        raise fail(f"'memref.atomic_rmw' of kind {op.kind.value.data} on {value.type}: the GPU adds f32 and f64 (addf) only")
    kind, register = ATOMIC_ADD_PTX[value.type]
    b = emitter.builder
    address = b.ptrtoint(emitter.element_pointer(op.memref, op.indices), ir.IntType(64))
    signature = ir.FunctionType(value.type, [address.type, value.type])
    return b.asm(signature, f"atom.global.add.{kind} $0, [$1], $2;", f"={register},l,{register},~{{memory}}",
                 [address, value], side_effect=True)


def pointer_as_index(emitter: NvvmFunctionEmitter, op: memref.ExtractAlignedPointerAsIndexOp) -> ir.Value:
    """A buffer's address: in its own state space (a shared buffer's fits 32 bits)."""
    return emitter.builder.ptrtoint(emitter.values[op.source], ir.IntType(64))


def absi(emitter: NvvmFunctionEmitter, op: math.AbsIOp) -> ir.Value:
    (value,) = emitter.operands(op)
    b = emitter.builder
    zero = ir.Constant(value.type, 0)
    return b.select(b.icmp_signed("<", value, zero), b.sub(zero, value), value)


NVVM_HANDLERS = {
    arith.NegfOp: negf,
    arith.MaximumfOp: partial(nan_propagating, "llvm.maxnum"),
    arith.MinimumfOp: partial(nan_propagating, "llvm.minnum"),
    arith.MaxSIOp: partial(int_select, "icmp_signed", ">"),
    arith.MinSIOp: partial(int_select, "icmp_signed", "<"),
    arith.MaxUIOp: partial(int_select, "icmp_unsigned", ">"),
    arith.MinUIOp: partial(int_select, "icmp_unsigned", "<"),
    math.AbsIOp: absi,
    memref.AllocaOp: shared_alloca,
    arith.ConstantOp: bf16_constant,
    memref.LoadOp: bf16_load,
    memref.StoreOp: bf16_store,
    memref.AtomicRMWOp: atomic_add,
    arith.ExtFOp: float_conversion,
    arith.TruncFOp: float_conversion,
    arith.BitcastOp: bf16_bitcast,
    func.CallOp: inline_ptx,
    memref.ExtractAlignedPointerAsIndexOp: pointer_as_index,
}
ROUNDED_BY_PRODUCER = (
    arith.ConstantOp, memref.LoadOp, scf.ForOp, scf.IfOp, arith.SelectOp, math.AbsFOp, arith.NegfOp, arith.BitcastOp,
)
"""Ops whose bf16 results are bf16 already (constants, loaded, carried, selected, sign changes)."""


def declare_kernel(module: ir.Module, op: func.FuncOp) -> ir.Function:
    name = op.sym_name.data
    if op.function_type.outputs.data:
        raise fail(f"@{name}: a GPU kernel returns nothing")
    arguments = []
    for t in op.function_type.inputs.data:
        try:
            arguments.append(pointer_type(t) if isinstance(t, MemRefType) else scalar_type(t))
        except UnsupportedType as e:
            raise fail(f"@{name}: {e}") from None
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), arguments), name)
    add_function_attributes(function, op)
    return function


def nvvm_ir_version() -> tuple[int, ...]:
    from numba.cuda.cudadrv import nvvm

    return tuple(nvvm.NVVM().get_ir_version())


def translate_kernels(module: ModuleOp, ir_version: Sequence[int] | None = None) -> ir.Module:
    """The GPU kernels of `module` (gpu.kernel functions) as one NVVM IR module."""
    kernels = gpu_kernels(module)
    if not kernels:
        raise fail("the module has no GPU kernels (run lower-tile-to-gpu first)")
    llvm_module = ir.Module(name="strata")
    llvm_module.triple = TRIPLE
    llvm_module.data_layout = DATA_LAYOUT
    functions: dict[str, ir.Function] = {}
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data.startswith(NVVM_PREFIX):
            signature = op.function_type
            result = scalar_type(signature.outputs.data[0]) if signature.outputs.data else ir.VoidType()
            arguments = [scalar_type(t) for t in signature.inputs.data]
            intrinsic = ir.Function(llvm_module, ir.FunctionType(result, arguments), op.sym_name.data)
            functions[op.sym_name.data] = intrinsic
    annotations = llvm_module.add_named_metadata("nvvm.annotations")
    for op in kernels:
        function = declare_kernel(llvm_module, op)
        functions[op.sym_name.data] = function
        threads = op.attributes["gpu.block_size"].value.data
        annotations.add(llvm_module.add_metadata([function, "kernel", ir.Constant(I32, 1)]))
        annotations.add(llvm_module.add_metadata([function, "maxntidx", ir.Constant(I32, threads)]))
    for op in kernels:
        declare_tensor_map_table(llvm_module, op)
        NvvmFunctionEmitter(functions[op.sym_name.data], functions).translate_body(op)
    version = tuple(ir_version) if ir_version is not None else nvvm_ir_version()
    llvm_module.add_named_metadata("nvvmir.version", [ir.Constant(I32, v) for v in version])
    return llvm_module


# libNVVM -----------------------------------------------------------------------------------


def compute_arch(arch: str) -> str:
    if arch not in ARCHES:
        raise StrataError(f"unsupported GPU architecture '{arch}' (expected one of {', '.join(ARCHES)})")
    return "compute_" + arch.removeprefix("sm_")


def find_libdevice() -> str:
    """libdevice.10.bc: $STRATA_LIBDEVICE, $CUDA_HOME / $CUDA_PATH, /usr/local/cuda*, the
    nvidia wheels in site-packages, then Numba's own lookup."""
    if os.environ.get("STRATA_LIBDEVICE"):
        return os.environ["STRATA_LIBDEVICE"]
    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")]
    roots += ["/usr/local/cuda", *sorted(glob.glob("/usr/local/cuda-*"), reverse=True)]
    candidates = [os.path.join(r, "nvvm", "libdevice", "libdevice.10.bc") for r in roots if r]
    import site
    import sys

    for base in [*site.getsitepackages(), *sys.path]:
        candidates += sorted(glob.glob(os.path.join(base, "nvidia", "*", "nvvm", "libdevice", "libdevice.10.bc")))
        candidates += sorted(glob.glob(os.path.join(base, "nvidia", "nvvm", "libdevice", "libdevice.10.bc")))
    for path in candidates:
        if os.path.isfile(path):
            return path
    try:
        from numba.cuda.cudadrv.libs import get_libdevice

        path = get_libdevice()
        if path and os.path.isfile(path):
            return path
    except Exception:
        pass
    raise StrataError("libdevice.10.bc not found: set CUDA_HOME (or STRATA_LIBDEVICE), or pip install 'cuda-toolkit[nvvm]'")


_PTX_CACHE: dict[str, str] = {}


def compile_ptx(nvvm_ir: str, arch: str = "sm_90") -> str:
    """NVVM IR text → PTX with libNVVM through Numba's binding (no libnvrtc needed)."""
    options = {"arch": compute_arch(arch), "opt": 3, "fma": 0}
    key = hashlib.sha256((nvvm_ir + repr(sorted(options.items()))).encode()).hexdigest()
    if key in _PTX_CACHE:
        return _PTX_CACHE[key]
    try:
        from numba.cuda.cudadrv import nvvm
    except ImportError as e:  # pragma: no cover - numba is a dependency
        raise StrataError(f"the GPU backend needs Numba's CUDA support: {e}") from None
    with open(find_libdevice(), "rb") as f:
        libdevice = f.read()
    try:
        parameters = inspect.signature(nvvm.CompilationUnit.__init__).parameters
        if len(parameters) > 1:  # numba-cuda: options at construction, verify() separately
            unit = nvvm.CompilationUnit(options)
            unit.add_module(nvvm_ir.encode())
            unit.verify()
            unit.lazy_add_module(libdevice)
            ptx = unit.compile()
        else:  # numba's bundled CUDA target: compile(**options) verifies, then compiles
            unit = nvvm.CompilationUnit()
            unit.add_module(nvvm_ir.encode())
            unit.lazy_add_module(libdevice)
            ptx = unit.compile(**options)
    except StrataError:
        raise
    except Exception as e:
        raise StrataError(f"libNVVM rejected the kernels for {arch}: {e}") from None
    text = bytes(ptx).decode().rstrip("\x00")
    _PTX_CACHE[key] = text
    return text


def module_to_ptx(module: ModuleOp, arch: str = "sm_90") -> tuple[str, str]:
    """(NVVM IR text, PTX) for the GPU kernels of a lowered module, ("", "") when it has
    none (a program that launches nothing); the PTX has passed the barrier-safety check
    (nvvm/ptx_checks.py), else a StrataError lists the violations."""
    compute_arch(arch)
    kernels = gpu_kernels(module)
    if not kernels:
        return "", ""
    warpgroup = [k.sym_name.data for k in kernels if WARPGROUP_MMA in k.attributes]
    if warpgroup and arch not in ("sm_90", "sm_90a"):
        raise StrataError(f"kernel @{warpgroup[0]} uses the warpgroup mma (wgmma): it needs sm_90, not {arch} "
                          "(lower it without lower-tile-to-gpu{warpgroup_mma=true})")
    arch = "sm_90a" if warpgroup else arch
    nvvm_ir = str(translate_kernels(module))
    ptx = compile_ptx(nvvm_ir, arch)
    violations = check_barriers(ptx)
    if violations:
        raise StrataError("unsafe barriers in the generated PTX:\n  " + "\n  ".join(map(str, violations)))
    return nvvm_ir, ptx
