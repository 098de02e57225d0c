"""JIT-compile LLVM IR for the host CPU with llvmlite's MCJIT.

    jit = JitModule(translate_module(loops_module))
    kernel = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64)(
        jit.function_address("kernel"))

A function pointer stays valid only while its JitModule is alive.
"""

from __future__ import annotations

import ctypes.util
from functools import cache

import llvmlite.binding as llvm
from llvmlite import ir

from strata.support.errors import StrataError
from strata.support.timing import timed


@cache
def initialize_llvm() -> None:
    """Once per process: the native target, its assembly printer, and libm, whose
    symbols (tanhf, erff, log1pf, and what intrinsics lower to) the JIT resolves."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    libm = ctypes.util.find_library("m")
    if libm is None:
        raise StrataError("jit: libm not found; math.tanh/erf/log1p cannot be linked")
    llvm.load_library_permanently(libm)


def host_target_machine(opt_level: int) -> llvm.TargetMachine:
    """A target machine for this CPU and every feature it has (AVX-512 included)."""
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=llvm.get_host_cpu_features().flatten(),
        opt=opt_level,
        jit=True,
    )


def parse(llvm_ir: str) -> llvm.ModuleRef:
    try:
        module = llvm.parse_assembly(llvm_ir)
        module.verify()
    except RuntimeError as e:
        raise StrataError(f"jit: invalid LLVM IR: {e}") from None
    return module


def optimize(module: llvm.ModuleRef, target_machine: llvm.TargetMachine, opt_level: int) -> None:
    """The default per-module pipeline (new pass manager), as clang -O<level> runs it."""
    tuning = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    tuning.loop_vectorization = True
    tuning.slp_vectorization = True
    tuning.loop_interleaving = True
    tuning.loop_unrolling = True
    pass_builder = llvm.create_pass_builder(target_machine, tuning)
    pass_builder.getModulePassManager().run(module, pass_builder)


class JitModule:
    """An LLVM module optimized for the host and compiled in memory."""

    def __init__(self, llvm_module: ir.Module | str, opt_level: int = 3):
        initialize_llvm()
        self._target_machine = host_target_machine(opt_level)
        with timed("llvm parse"):
            module = parse(str(llvm_module))
        # The optimizer needs the real data layout (vector widths, alignments).
        module.triple = self._target_machine.triple
        module.data_layout = str(self._target_machine.target_data)
        with timed(f"llvm optimize (O{opt_level})"):
            optimize(module, self._target_machine, opt_level)
        # Codegen rewrites the IR it compiles, so keep the optimized text first.
        self._optimized_ir = str(module)
        with timed("jit (MCJIT finalize)"):
            self._engine = llvm.create_mcjit_compiler(module, self._target_machine)
            self._engine.finalize_object()

    def function_address(self, name: str) -> int:
        address = self._engine.get_function_address(name)
        if address == 0:
            raise StrataError(f"jit: no function named '{name}' in the compiled module")
        return address

    def llvm_ir(self) -> str:
        """The IR after optimization, as compiled."""
        return self._optimized_ir

    def assembly(self) -> str:
        """Host assembly of the optimized IR (compiled again, on a copy)."""
        return self._target_machine.emit_assembly(parse(self._optimized_ir))
