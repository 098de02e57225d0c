"""The 16-bit float conversions the JIT defines for CPUs without instructions for them
(lowering/llvm/float_builtins.py), against the reference's casts (ml_dtypes' astype for
bfloat16, numpy's for float16): ties to even, f64 to f16 rounded once, NaN, infinities,
subnormals and overflow. The definitions are compiled here and called directly, so the
test runs on any CPU."""

from __future__ import annotations

import ctypes

import llvmlite.binding as llvm
import ml_dtypes
import numpy as np
import pytest

from strata.lowering.llvm import float_builtins
from strata.lowering.llvm.jit import host_target_machine, initialize_llvm

PROBES = r"""
define i16 @probe_truncsfbf2(float %x) {
  %r = call bfloat @__truncsfbf2(float %x)
  %bits = bitcast bfloat %r to i16
  ret i16 %bits
}
define i16 @probe_truncdfbf2(double %x) {
  %r = call bfloat @__truncdfbf2(double %x)
  %bits = bitcast bfloat %r to i16
  ret i16 %bits
}
define i16 @probe_truncdfhf2(double %x) {
  %r = call half @__truncdfhf2(double %x)
  %bits = bitcast half %r to i16
  ret i16 %bits
}
"""


@pytest.fixture(scope="module")
def probes():
    initialize_llvm()
    # The definitions renamed, so that the probes call these and not what the process has.
    renamed = float_builtins.BUILTINS_IR + PROBES
    for name in float_builtins.NAMES:
        renamed = renamed.replace(f"@{name}(", f"@test_{name}(")
    module = llvm.parse_assembly(renamed)
    module.verify()
    engine = llvm.create_mcjit_compiler(module, host_target_machine(2))
    engine.finalize_object()
    functions = {
        name: ctypes.CFUNCTYPE(ctypes.c_uint16, argument)(engine.get_function_address(f"probe_{name}"))
        for name, argument in (("truncsfbf2", ctypes.c_float), ("truncdfbf2", ctypes.c_double),
                               ("truncdfhf2", ctypes.c_double))
    }  # fmt: skip
    yield functions
    del engine


def special_values(dtype) -> np.ndarray:
    info = np.finfo(dtype)
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, info.max, -info.max, info.tiny, info.smallest_subnormal,
                     1.0, -1.0, 1e-45, 3.4e38, 1e300, -1e300, 1e-320], dtype=np.float64)  # fmt: skip


def ties_of(target, count: int, rng) -> np.ndarray:
    """Values halfway between neighbouring `target` numbers, and a hair either side."""
    bits = rng.integers(0, 0x7B00, count).astype(np.uint16)  # finite neighbours in both types
    low = bits.view(target).astype(np.float64)
    high = (bits + 1).view(target).astype(np.float64)
    middle = (low + high) / 2
    return np.concatenate([middle, np.nextafter(middle, np.inf), np.nextafter(middle, -np.inf), -middle])


def check(probe, values: np.ndarray, argument_dtype, want_dtype) -> None:
    values = values.astype(argument_dtype)
    got = np.array([probe(float(v)) for v in values], dtype=np.uint16)
    want = values.astype(want_dtype).view(np.uint16)
    nan = np.isnan(values)
    assert np.all(np.isnan(got[nan].view(want_dtype)))
    mismatch = np.nonzero((got != want) & ~nan)[0]
    assert mismatch.size == 0, f"{values[mismatch[:5]]}: got {got[mismatch[:5]]}, want {want[mismatch[:5]]}"


def test_float_to_bfloat16_rounds_to_nearest_even(probes):
    rng = np.random.default_rng(0)
    values = np.concatenate([special_values(np.float32), ties_of(ml_dtypes.bfloat16, 3000, rng),
                             rng.standard_normal(3000) * 10.0 ** rng.integers(-40, 38, 3000)])  # fmt: skip
    with np.errstate(over="ignore"):
        check(probes["truncsfbf2"], values, np.float32, ml_dtypes.bfloat16)


@pytest.mark.parametrize("name, target", [("truncdfbf2", ml_dtypes.bfloat16), ("truncdfhf2", np.float16)])
def test_double_to_16_bits_rounds_like_astype(probes, name, target):
    """Ties of the 16-bit type nudged by less than a float ulp: to f16 numpy rounds once
    (through f32 would land on the tie and round it to even, the wrong way for half of
    them); to bf16 ml_dtypes goes through f32, and so does the builtin."""
    rng = np.random.default_rng(1)
    ties = ties_of(target, 3000, rng)
    nudged = ties * (1 + rng.choice([-1.0, 1.0], ties.size) * 2.0**-40)
    values = np.concatenate([special_values(np.float64), ties, nudged, rng.standard_normal(3000) * 1e3])
    with np.errstate(over="ignore"):
        check(probes[name], values, np.float64, target)
