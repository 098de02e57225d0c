"""The floating-point conversions LLVM leaves to runtime library calls on CPUs without
instructions for them, defined here for the JIT.

Without AVX-512 BF16 / FP16, LLVM's x86 code generator lowers `fptrunc float/double to
bfloat` to calls of `__truncsfbf2` / `__truncdfbf2`, and `fptrunc double to half` to
`__truncdfhf2` (compiler-rt's names; F16C covers float <-> half). MCJIT resolves calls in
the process, where older libgcc versions (GCC 12's has the half ones only) lack them: an
unresolved call jumps to address 0, and every bf16 program crashed on such a CPU (an AVX2
host). `install()` compiles these definitions once and registers each name the process
does not already define.

Each rounds as the reference interpreter's casts do (numpy's astype for half, ml_dtypes'
for bfloat), to nearest, ties to even. float -> bfloat adds 0x7fff plus the kept part's
lowest bit and drops the low 16 bits (NaNs stay quiet NaNs). double -> bfloat goes
through float, as ml_dtypes does (and Strata's own casts). double -> half rounds once, as
numpy does: rounding to float first could land on a tie of the half type that the double
was not on; rounding to float *to odd* (an inexact result gets its lowest bit set, after
stepping back toward zero if it was rounded away) keeps every bit the second rounding
looks at.
"""

from __future__ import annotations

import llvmlite.binding as llvm

BUILTINS_IR = r"""
define bfloat @__truncsfbf2(float %x) {
  %bits = bitcast float %x to i32
  %upper = lshr i32 %bits, 16
  %lowest_kept = and i32 %upper, 1
  %bias = add i32 %lowest_kept, 32767
  %rounded = add i32 %bits, %bias
  %nearest = lshr i32 %rounded, 16
  %quiet_nan = or i32 %upper, 64
  %nan = fcmp uno float %x, 0.0
  %chosen = select i1 %nan, i32 %quiet_nan, i32 %nearest
  %half_word = trunc i32 %chosen to i16
  %result = bitcast i16 %half_word to bfloat
  ret bfloat %result
}

define float @strata_round_to_odd_float(double %x) {
  %nearest = fptrunc double %x to float
  %back = fpext float %nearest to double
  %exact = fcmp ueq double %back, %x
  br i1 %exact, label %done, label %inexact
inexact:
  %bits = bitcast float %nearest to i32
  %back_magnitude = call double @llvm.fabs.f64(double %back)
  %magnitude = call double @llvm.fabs.f64(double %x)
  %away = fcmp ogt double %back_magnitude, %magnitude
  %toward_zero = sub i32 %bits, 1
  %truncated = select i1 %away, i32 %toward_zero, i32 %bits
  %odd = or i32 %truncated, 1
  %odd_float = bitcast i32 %odd to float
  br label %done
done:
  %result = phi float [ %nearest, %0 ], [ %odd_float, %inexact ]
  ret float %result
}

define bfloat @__truncdfbf2(double %x) {
  %nearest = fptrunc double %x to float
  %result = call bfloat @__truncsfbf2(float %nearest)
  ret bfloat %result
}

define half @__truncdfhf2(double %x) {
  %odd = call float @strata_round_to_odd_float(double %x)
  %result = fptrunc float %odd to half
  ret half %result
}

declare double @llvm.fabs.f64(double)
"""

NAMES = ("__truncsfbf2", "__truncdfbf2", "__truncdfhf2")
_engines: list[llvm.ExecutionEngine] = []
"""The engine holding the compiled definitions: alive as long as the process."""


def install(target_machine: llvm.TargetMachine) -> None:
    """Compile the definitions and register those of NAMES the process lacks (once, from
    jit.initialize_llvm)."""
    missing = [name for name in NAMES if not llvm.address_of_symbol(name)]
    if not missing:
        return
    module = llvm.parse_assembly(BUILTINS_IR)
    module.verify()
    engine = llvm.create_mcjit_compiler(module, target_machine)
    engine.finalize_object()
    _engines.append(engine)
    for name in missing:
        llvm.add_symbol(name, engine.get_function_address(name))
