"""Tensor cores for bf16/f16 matmuls on the GPU (lowering/tile_to_gpu/tensor_cores.py).

Without a GPU: which mma takes the tensor-core path (16-bit operands, tiles of whole
16 x 8 x 16 instruction steps), the fragment layout's warp grid, and PTX from libNVVM that
ptxas takes for sm_80 and sm_90. With a GPU: results against the reference interpreter at
odd sizes, partial k tiles, batches, transposed operands and fused epilogues.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from programs import single_op, ttype
from targets import ptxas
from test_gpu import check_on_gpu, inputs_for, lower, needs_gpu, needs_ptx_tools, ptx_of

import strata
from strata.lowering.tile_to_gpu.fragments import MmaFragments
from strata.targets.cuda import GpuPipelinePass
from strata.targets.passes import run_pipeline

BF16_MMA = "ptx.mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
F16_MMA = "ptx.mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"


def matmul(m: int, k: int, n: int, dtype: str, batch: tuple[int, ...] = (), props: str = "") -> str:
    a_shape = (*batch, k, m) if "transpose_a" in props else (*batch, m, k)
    b_shape = (k, n) if "transpose_b" not in props else (n, k)
    return single_op("graph.matmul", [(a_shape, dtype), (b_shape, dtype)], ((*batch, m, n), dtype), props)


def matmul_bias_gelu(m: int, k: int, n: int, dtype: str) -> str:
    a, w, bias, out = ttype((m, k), dtype), ttype((k, n), dtype), ttype((n,), dtype), ttype((m, n), dtype)
    return f"""func.func @main(%a: {a}, %w: {w}, %bias: {bias}) -> {out} {{
  %0 = "graph.matmul"(%a, %w) : ({a}, {w}) -> {out}
  %1 = "graph.add"(%0, %bias) : ({out}, {bias}) -> {out}
  %2 = "graph.gelu"(%1) : ({out}) -> {out}
  func.return %2 : {out}
}}
"""


def test_warp_grid_minimizes_fragment_loads():
    assert MmaFragments.of((64, 64), 128) == MmaFragments((64, 64), 2, 2)
    assert MmaFragments.of((1, 128, 128), 256) == MmaFragments((1, 128, 128), 2, 4)
    assert MmaFragments.of((16, 64), 128) == MmaFragments((16, 64), 1, 4)
    assert MmaFragments.of((16, 16), 128) is None  # four warps cannot share one 16 x 16 tile
    assert MmaFragments.of((256, 256), 128) is None  # 512 accumulator registers per thread


@pytest.mark.parametrize("dtype, instruction", [("bf16", BF16_MMA), ("f16", F16_MMA)])
def test_16_bit_matmul_lowers_to_mma_sync(dtype, instruction):
    lowered = str(lower(matmul(100, 48, 72, dtype)))
    assert instruction in lowered
    assert "math.fma" not in lowered


@pytest.mark.parametrize(
    "text",
    [matmul(64, 64, 64, "f32"), matmul(9, 40, 7, "bf16"), matmul(64, 8, 64, "bf16")],
    ids=["f32", "bf16-tile-smaller-than-the-warps", "bf16-k-below-16"],
)
def test_other_matmuls_keep_the_fma_path(text):
    lowered = str(lower(text))
    assert "ptx.mma" not in lowered and "math.fma" in lowered


@needs_ptx_tools
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_tensor_core_ptx_is_accepted_by_ptxas(dtype, arch):
    ptx = ptx_of(matmul_bias_gelu(100, 200, 72, dtype), arch)
    assert f"mma.sync.aligned.m16n8k16.row.col.f32.{dtype}.{dtype}.f32" in ptx
    ptxas(ptx, arch)


GPU_CASES = {
    "odd-17x33x40": matmul(17, 33, 40, "bf16"),
    "partial-k-100x200x72": matmul(100, 200, 72, "bf16"),
    "f16-100x48x72": matmul(100, 48, 72, "f16"),
    "square-256": matmul(256, 256, 256, "bf16"),
    "long-k-64x1000x96": matmul(64, 1000, 96, "f16"),
    "batched-3x40x48x24": matmul(40, 48, 24, "bf16", batch=(3,)),
    "transposed-a": matmul(65, 48, 80, "bf16", props="transpose_a = true"),
    "transposed-b": matmul(65, 48, 80, "f16", props="transpose_b = true"),
    "epilogue-bias-gelu": matmul_bias_gelu(96, 160, 130, "bf16"),
    "large-1024": matmul(1024, 1024, 1024, "bf16"),
    "lm-head-300x256x1003": matmul(300, 256, 1003, "bf16", props="transpose_b = true"),
}


@needs_gpu
@pytest.mark.parametrize("case", list(GPU_CASES))
def test_tensor_core_matmul_on_gpu(case):
    text = GPU_CASES[case]
    assert "ptx.mma" in str(lower(text))
    check_on_gpu(text, inputs_for(text, case, np.random.default_rng(11)))


@pytest.mark.parametrize(
    "case, pipelined",
    [("square-256", True), ("partial-k-100x200x72", True), ("batched-3x40x48x24", True), ("long-k-64x1000x96", True),
     ("transposed-b", True), ("lm-head-300x256x1003", True), ("odd-17x33x40", False), ("transposed-a", False), ("epilogue-bias-gelu", False)],
)  # fmt: skip
def test_aligned_operands_take_the_cp_async_pipeline(case, pipelined):
    """Rows of 16-byte chunks (a along k, b along n or, transposed, along k; lengths and
    strides multiples of 8 elements) run the cp.async loop; anything else stages element by
    element."""
    lowered = str(lower(GPU_CASES[case]))
    assert ("ptx.cp.async.cg.shared.global.16" in lowered) == pipelined
    assert ("ptx.ldmatrix" in lowered) == pipelined
    assert "ptx.mma.sync" in lowered


@needs_gpu
def test_misaligned_device_input_is_copied_not_read_in_place():
    """A torch view 2 bytes into its storage cannot feed 16-byte cp.async copies: the
    runtime copies it to the aligned input buffer first, and the results stay right."""
    torch = pytest.importorskip("torch")
    text = GPU_CASES["square-256"]
    inputs = inputs_for(text, "square-256", np.random.default_rng(12))
    (want,) = strata.interpret(text, *inputs)
    exe = strata.compile(text, target="cuda")
    storage = torch.zeros(256 * 256 + 1, dtype=torch.bfloat16, device="cuda")
    view = storage[1:].view(256, 256)
    view.copy_(torch.from_numpy(inputs[0].astype(np.float32)).to(torch.bfloat16))
    assert view.data_ptr() % 16 == 2
    (got,) = exe(view, inputs[1])
    np.testing.assert_array_equal(got.astype(np.float32), exe(*inputs)[0].astype(np.float32))
    assert np.max(np.abs(got.astype(np.float32) - want.astype(np.float32))) <= 0.02 * np.max(np.abs(want.astype(np.float32)))


TF32_CASES = {
    "tf32-pipelined-256": matmul(256, 256, 256, "f32"),
    "tf32-partial-k-100x200x72": matmul(100, 200, 72, "f32"),
    "tf32-odd-17x33x40": matmul(17, 33, 40, "f32"),
    "tf32-transposed-b": matmul(65, 48, 80, "f32", props="transpose_b = true"),
    "tf32-epilogue": matmul_bias_gelu(96, 160, 130, "f32"),
}


def lower_tf32(text: str):
    module = strata.parse_module(text)
    run_pipeline(module, GpuPipelinePass(allow_tf32=True).steps())
    return module


@pytest.mark.parametrize("case", list(TF32_CASES))
def test_tf32_only_when_allowed(case):
    text = TF32_CASES[case]
    assert "tf32" not in str(lower(text))
    lowered = str(lower_tf32(text))
    assert "ptx.mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in lowered and "ptx.cvt.rna.tf32.f32" in lowered
    assert ("ptx.cp.async" in lowered) == case.startswith(("tf32-pipelined", "tf32-partial", "tf32-transposed"))


@needs_ptx_tools
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_tf32_ptx_is_accepted_by_ptxas(arch):
    from strata.lowering.nvvm.translate import module_to_ptx

    for text in (TF32_CASES["tf32-pipelined-256"], TF32_CASES["tf32-odd-17x33x40"]):
        ptx = module_to_ptx(lower_tf32(text), arch)[1]
        assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in ptx and "cvt.rna.tf32.f32" in ptx
        ptxas(ptx, arch)


def test_allow_tf32_is_for_the_gpu_only():
    with pytest.raises(strata.InputError, match="allow_tf32 is for target 'cuda'"):
        strata.compile(TF32_CASES["tf32-odd-17x33x40"], target="cpu", allow_tf32=True)
    with pytest.raises(strata.InputError, match="allow_tf32 must be a bool"):
        strata.compile(TF32_CASES["tf32-odd-17x33x40"], target="cpu", allow_tf32="yes")


@needs_gpu
@pytest.mark.parametrize("case", list(TF32_CASES))
def test_tf32_matmul_on_gpu(case):
    """TF32 keeps 10 mantissa bits of each operand: errors of about 2^-11 relative per
    product, against the reference's f32 (bounded here by 2e-3 of the largest result)."""
    text = TF32_CASES[case]
    inputs = inputs_for(text, case, np.random.default_rng(13))
    (want,) = strata.interpret(text, *inputs)
    (got,) = strata.compile(text, target="cuda", allow_tf32=True)(*inputs)
    assert np.max(np.abs(got - want)) <= 2e-3 * np.max(np.abs(want))
    (exact,) = strata.compile(text, target="cuda")(*inputs)
    assert np.max(np.abs(exact - want)) <= 1e-5 * np.max(np.abs(want))  # off by default


def test_stages_shrink_to_fit_the_shared_memory_limit():
    """mma_stages=8 of 128x128x32 bf16 stages would need 151 KiB: the loop takes the five
    that fit the 96 KiB a block may use everywhere (sm_86/sm_89 allow 99)."""
    from strata.lowering.tile_to_gpu.kernel import DYNAMIC_SHARED_LIMIT

    module = strata.parse_module(matmul(2048, 512, 2048, "bf16"))
    run_pipeline(module, GpuPipelinePass.STEPS.replace("lower-tile-to-gpu,", "lower-tile-to-gpu{mma_stages=8},"))
    text = str(module)
    shared = int(text.split("gpu.dynamic_shared_bytes = ")[1].split(" ")[0])
    stage = (128 * (32 + 8) + 32 * (128 + 8)) * 2
    assert shared == (DYNAMIC_SHARED_LIMIT // stage) * stage == 5 * stage
    assert "ptx.cp.async.wait_group.3" in text


def test_padded_k_operand_with_the_other_unpadded_on_the_cpu_loops(monkeypatch):
    """lower-graph-to-tile's tensor-core copy pads a's k (513 -> 520) with zeros while b keeps
    513 rows: every mma lowering multiplies over the shorter k, so b's rows past its end
    (stale values of an earlier tile, here inf) never reach the sum."""
    from strata.targets import cpu

    monkeypatch.setattr(cpu.CpuPipelinePass, "STEPS", cpu.CpuPipelinePass.STEPS.replace(
        "lower-graph-to-tile,", "lower-graph-to-tile{matmul_16bit_scale=2},"))
    g = strata.Graph("f")
    g.output(strata.ops.matmul(g.input("a", (512, 513), "bf16"), g.input("b", (513, 512), "bf16")))
    module = g.build()
    exe = strata.compile(module, target="cpu")
    assert "matmul_a_padding" in str(exe.module)
    rng = np.random.default_rng(1)
    for poisoned in (True, False):
        a = rng.standard_normal((512, 513)).astype(ml_dtypes.bfloat16)
        b = rng.standard_normal((513, 512)).astype(ml_dtypes.bfloat16)
        if poisoned:
            b[-60:] = np.inf
        (got,) = exe(a, b)
        if not poisoned:
            want = a.astype(np.float64) @ b.astype(np.float64)
            np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=2e-2, atol=0.5)
