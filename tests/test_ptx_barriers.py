"""The PTX barrier-safety checker (lowering/nvvm/ptx_checks.py) on hand-written
kernels with and without the early-exit-before-barrier bug, and on every kernel the GPU
backend generates for boundary sizes (a 16-row tile with 17 rows, seq_len 17, one row, one
column): module_to_ptx runs the checker on all generated PTX, and it must find nothing."""

from __future__ import annotations

import pytest

from strata.lowering.nvvm.ptx_checks import check_barriers, count_barriers

from programs import single_op
from targets import gpu_ptx
from test_gpu import needs_ptx_tools


def kernel(body: str) -> str:
    return f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 a)
{{
\t.reg .pred \t%p<4>;
\t.reg .b32 \t%r<8>;
\t.reg .b64 \t%rd<4>;
{body}
}}
"""


EARLY_EXIT = kernel("""
\tmov.u32 \t%r1, %tid.x;
\tsetp.gt.u32 \t%p1, %r1, 16;
\t@%p1 bra \t$L__BB0_2;
\tst.shared.u32 \t[s], %r1;
$L__BB0_1:
\tbar.sync \t0;
\tld.shared.u32 \t%r2, [s];
$L__BB0_2:
\tret;
""")

PREDICATED_RETURN = kernel("""
\tmov.u32 \t%r1, %tid.x;
\tsetp.gt.u32 \t%p1, %r1, 16;
\t@%p1 ret;
\tbar.sync \t0;
\tret;
""")

LOOP_WITH_EXIT_INSIDE = kernel("""
\tmov.u32 \t%r1, %tid.x;
\tmov.u32 \t%r3, 0;
$L__BB0_1:
\tld.global.u32 \t%r2, [%rd1];
\tsetp.eq.u32 \t%p2, %r2, %r1;
\t@%p2 bra \t$L__BB0_3;
\tbar.sync \t0;
\tadd.s32 \t%r3, %r3, 1;
\tsetp.lt.u32 \t%p3, %r3, 8;
\t@%p3 bra \t$L__BB0_1;
$L__BB0_3:
\tret;
""")

BARRIER_IN_UNIFORM_LOOP = kernel("""
\tmov.u32 \t%r1, %tid.x;
\tmov.u32 \t%r3, 0;
$L__BB0_1:
\tsetp.ge.u32 \t%p1, %r1, 100;
\t@%p1 bra \t$L__BB0_2;
\tst.shared.u32 \t[s], %r1;
$L__BB0_2:
\tbar.sync \t0;
\tadd.s32 \t%r3, %r3, 1;
\tsetp.lt.u32 \t%p3, %r3, 8;
\t@%p3 bra \t$L__BB0_1;
\tret;
""")

EXIT_AFTER_LAST_BARRIER = kernel("""
\tmov.u32 \t%r1, %tid.x;
\tbar.sync \t0;
\tsetp.gt.u32 \t%p1, %r1, 16;
\t@%p1 bra \t$L__BB0_2;
\tst.global.u32 \t[%rd1], %r1;
$L__BB0_2:
\tret;
""")


VECTOR_LOAD_DECIDES = kernel("""
\tld.shared.v2.u32 \t{%r1, %r2}, [s];
\tsetp.gt.u32 \t%p1, %r2, 16;
\t@%p1 bra \t$L__BB0_2;
\tbar.sync \t0;
$L__BB0_2:
\tret;
""")

SHUFFLE_UNDER_BRANCH = kernel("""
\tmov.u32 \t%r1, %tid.x;
\tsetp.gt.u32 \t%p1, %r1, 16;
\t@%p1 bra \t$L__BB0_2;
\tshfl.sync.bfly.b32 \t%r2, %r1, 1, 31, -1;
$L__BB0_2:
\tret;
""")

PREDICATED_BARRIER = kernel("""
\tmov.u32 \t%r1, %tid.x;
\tsetp.gt.u32 \t%p1, %r1, 16;
\t@%p1 bar.sync \t0;
\tret;
""")


@pytest.mark.parametrize(
    "ptx, kind",
    [
        (EARLY_EXIT, "barrier in divergent code"),
        (VECTOR_LOAD_DECIDES, "barrier in divergent code"),
        (PREDICATED_BARRIER, "barrier in divergent code"),
        (SHUFFLE_UNDER_BRANCH, "whole-warp shuffle in divergent code"),
        (PREDICATED_RETURN, "early exit before a barrier"),
        (LOOP_WITH_EXIT_INSIDE, "barrier in divergent code"),
    ],
    ids=["branch-over-barrier", "vector-load-predicate", "predicated-barrier", "shuffle-under-branch", "predicated-ret",
         "exit-inside-loop"],
)
def test_unsafe_kernels_are_flagged(ptx, kind):
    violations = check_barriers(ptx)
    assert violations and any(v.kind == kind for v in violations), violations
    assert "kernel k" in str(violations[0])


@pytest.mark.parametrize("ptx", [BARRIER_IN_UNIFORM_LOOP, EXIT_AFTER_LAST_BARRIER], ids=["uniform-loop", "exit-after-barrier"])
def test_safe_kernels_pass(ptx):
    assert check_barriers(ptx) == []


SHUFFLE_UNDER_WARP_BOUNDARY = kernel("""
\tmov.u32 \t%r1, %tid.x;
\tcvt.s64.s32 \t%rd1, %r1;
\tcvt.u32.u64 \t%r3, %rd1;
\tsetp.gt.u32 \t%p1, %r3, 255;
\t@%p1 bra \t$L__BB0_2;
\tshfl.sync.bfly.b32 \t%r2, %r1, 1, 31, -1;
$L__BB0_2:
\tret;
""")


@pytest.mark.parametrize("bound, safe", [("255", True), ("127", True), ("31", True), ("16", False), ("256", False)])
def test_a_branch_at_a_warp_boundary_splits_whole_warps(bound, safe):
    """Producer and consumer warpgroups (t > 255): every lane of a warp takes one way, so a
    full-warp shuffle on one side is safe; a barrier there is not (other warps skip it)."""
    ptx = SHUFFLE_UNDER_WARP_BOUNDARY.replace("%r3, 255;", f"%r3, {bound};")
    assert (check_barriers(ptx) == []) == safe
    with_barrier = ptx.replace("shfl.sync.bfly.b32 \t%r2, %r1, 1, 31, -1;", "bar.sync \t0;")
    assert any(v.kind == "barrier in divergent code" for v in check_barriers(with_barrier))


def test_uniform_predicate_is_not_divergent():
    uniform = EARLY_EXIT.replace("mov.u32 \t%r1, %tid.x;", "mov.u32 \t%r1, %ctaid.x;")
    assert check_barriers(uniform) == []
    assert count_barriers(EARLY_EXIT) == 1


BOUNDARY_PROGRAMS = [
    ("matmul-17-rows", single_op("graph.matmul", [((17, 40), "f32"), ((40, 33), "f32")], ((17, 33), "f32"))),
    ("matmul-1-row", single_op("graph.matmul", [((1, 70), "f32"), ((70, 33), "f32")], ((1, 33), "f32"))),
    ("matmul-1-column", single_op("graph.matmul", [((33, 70), "f32"), ((70, 1), "f32")], ((33, 1), "f32"))),
    ("matmul-transposed-b", single_op("graph.matmul", [((17, 70), "f64"), ((33, 70), "f64")], ((17, 33), "f64"), "transpose_b = true")),
    ("attention-17", single_op("graph.attention", [((2, 17, 32), "f32")] * 3, ((2, 17, 32), "f32"), "causal = true, scale = 0.125 : f64")),
    ("softmax-1-row", single_op("graph.softmax", [((1, 5000), "f32")], ((1, 5000), "f32"), "axis = -1 : i64")),
    ("layernorm-1-column", single_op("graph.layernorm", [((17, 1), "f32"), ((1,), "f32"), ((1,), "f32")], ((17, 1), "f32"), "epsilon = 1.0e-05 : f64")),
    ("reduce-max-i64", single_op("graph.reduce_max", [((17, 300), "i64")], ((300,), "i64"), "axes = array<i64: 0>")),
    ("cross-entropy", single_op("graph.cross_entropy", [((17, 3000), "f32"), ((17,), "i64")], ((), "f32"))),
    ("embedding", single_op("graph.embedding", [((11, 17), "f32"), ((5,), "i64")], ((5, 17), "f32"))),
]  # fmt: skip


@needs_ptx_tools
@pytest.mark.parametrize("text", [t for _, t in BOUNDARY_PROGRAMS], ids=[i for i, _ in BOUNDARY_PROGRAMS])
def test_generated_kernels_are_barrier_safe(text):
    ptx = gpu_ptx(text)  # module_to_ptx raises on a violation; ptxas accepts it
    assert check_barriers(ptx) == []
