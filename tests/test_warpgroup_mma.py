"""16-bit matmuls on sm_90's warpgroup mma (lowering/tile_to_gpu/warpgroup_loop.py).

Without a GPU: which matmuls take the wgmma k loop under gpu-pipeline{warpgroup_mma=true}
(64-deep k tiles of 64 or 128 rows, two threads per row), the kernel's attribute and block
size, the 1024-aligned swizzled stages, PTX that ptxas takes for sm_90a, and a clear error
for another architecture. With an sm_90 GPU (where strata.compile turns it on): results
against the reference interpreter at sizes that take the path, partial row, column and k
tiles, both b layouts, a read transposed (M-major), batches, f16 and a fused epilogue.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from programs import single_op
from targets import ptxas
from test_gpu import check_on_gpu, inputs_for, needs_gpu, needs_ptx_tools
from test_tensor_cores import matmul, matmul_bias_gelu

import strata
from strata.lowering.nvvm.translate import module_to_ptx
from strata.lowering.tile_to_gpu.kernel import WARPGROUP_MMA, gpu_kernels
from strata.lowering.tile_to_gpu.persistent_matmul import PERSISTENT
from strata.support.errors import StrataError
from strata.targets.cuda import GpuPipelinePass
from strata.targets.passes import run_pipeline

WGMMA = "ptx.wgmma.mma_async.sync.aligned.m64n"


def lowered(text: str, warpgroup: bool = True):
    module = strata.parse_module(text)
    run_pipeline(module, GpuPipelinePass(warpgroup_mma=warpgroup).steps())
    return module


WARPGROUP_CASES = {
    "square": matmul(2048, 256, 2048, "bf16"),
    "rows_64": matmul(1100, 200, 1736, "bf16"),  # 64 x 128 tiles: one warpgroup
    "x_wT": matmul(1536, 320, 1536, "bf16", props="transpose_b = true"),
    "f16": matmul(1536, 192, 1536, "f16"),
    "batched": matmul(1024, 128, 512, "bf16", batch=(3,)),
    "edges": matmul(1999, 296, 1032, "bf16"),  # partial row, column and k tiles
    "bias_gelu": matmul_bias_gelu(1536, 256, 1536, "bf16"),
    "wide_edges": matmul(3000, 2100, 4000, "bf16"),  # 128 x 256 tiles (long k, 2.9 waves), partial in m, n and k
    "wide_x_wT": matmul(4096, 2048, 4096, "f16", props="transpose_b = true"),
    "one_k_step": matmul(2048, 64, 4096, "bf16", props="transpose_b = true"),  # a loop of one trip keeps its pipeline
    "transposed_a": matmul(2048, 256, 2048, "bf16", props="transpose_a = true"),  # aᵀ read in place, M-major
    "transposed_a_edges": matmul(2000, 776, 1800, "f16", props="transpose_a = true"),  # partial m, n and k tiles
    "transposed_a_and_b": matmul(1536, 512, 1536, "bf16", props="transpose_a = true, transpose_b = true"),
    "unaligned_k": matmul(2048, 1001, 2048, "bf16"),  # a's rows re-aligned to 1008 elements
    # Persistent blocks (persistent_matmul.py) that run several tiles each: 33 x 8 tiles with
    # partial rows and columns and 3 k steps (the last partial), the next tile's first copies
    # issued during this one's last steps; exactly the two steps copied ahead; tiles of a
    # batch (the batch index is a program id) and of batched b.
    "many_tiles": matmul(4100, 136, 1000, "bf16"),
    "two_k_steps": matmul(3072, 128, 2048, "f16", props="transpose_b = true"),
    "batched_many_tiles": matmul(700, 192, 600, "bf16", batch=(6,)),
    "even_rows": matmul(2048, 256, 2050, "bf16", props="transpose_b = true"),  # rows not 16-byte aligned
    "odd_width": matmul(2000, 256, 1001, "bf16", props="transpose_b = true"),  # odd rows (as GPT-2's logits), partial tiles
    "batched_both": single_op("graph.matmul", [((5, 520, 320), "bf16"), ((5, 320, 776), "bf16")], ((5, 520, 776), "bf16")),
}


@pytest.mark.parametrize("name", WARPGROUP_CASES)
def test_16_bit_matmuls_take_the_warpgroup_loop(name):
    module = lowered(WARPGROUP_CASES[name])
    kernels = [k for k in gpu_kernels(module) if WARPGROUP_MMA in k.attributes]
    assert len(kernels) == 1
    text = str(module)
    assert WGMMA in text and "ptx.mma.sync" not in text
    assert "ptx.fence.proxy.async.shared::cta" in text and "ptx.wgmma.wait_group.sync.aligned.1.x" in text
    (kernel,) = kernels
    assert kernel.attributes["gpu.block_size"].value.data in (128, 256)  # two threads per output row
    assert kernel.attributes["gpu.dynamic_shared_bytes"].value.data > 96 * 1024  # four 64-deep stages


@pytest.mark.parametrize("name", ["square", "many_tiles", "two_k_steps", "batched_both", "transposed_a", "bias_gelu"])
def test_warpgroup_matmuls_are_persistent(name):
    """Each block loops over tiles (begin + ctaid.x, step nctaid.x) and the runtime
    launches as many blocks as are resident (gpu.persistent)."""
    (kernel,) = [k for k in gpu_kernels(lowered(WARPGROUP_CASES[name])) if WARPGROUP_MMA in k.attributes]
    assert PERSISTENT in kernel.attributes
    assert "llvm.nvvm.read.ptx.sreg.nctaid.x" in str(kernel)


@pytest.mark.parametrize("text", [matmul(256, 100, 2048, "bf16"), WARPGROUP_CASES["one_k_step"]])
def test_matmuls_without_the_cross_tile_copies_are_not_persistent(text):
    """k = 100 has no 16-byte chunks (the mma.sync path); one k step has nothing to copy
    ahead across tiles: a block per tile."""
    kernels = gpu_kernels(lowered(text))
    assert kernels and not any(PERSISTENT in k.attributes for k in kernels)


@pytest.mark.parametrize("name, stores", [
    ("square", "chunks"), ("bias_gelu", "chunks"), ("even_rows", "shifted"), ("odd_width", "shifted"), ("wide_edges", "pairs"),
])
def test_epilogues_store_rows_in_16_byte_chunks_where_they_fit(name, stores):
    """row_stores.py where rows start 16 bytes apart, shifted_rows.py where they do not
    (the global chunks a row covers, five staged words realigned per chunk); paired
    fragment stores where the staged tile has no room (beside four 48 KiB stages)."""
    (kernel,) = [k for k in gpu_kernels(lowered(WARPGROUP_CASES[name])) if WARPGROUP_MMA in k.attributes]
    text = str(kernel)
    assert ("ptx.st.global.v4.b32" in text) == (stores != "pairs")
    assert ("ptx.shf.r.clamp.b32" in text) == (stores == "shifted")
    assert ("ptx.st.global.b32" in text) == (stores == "pairs")


SHARED_UNALIGNED = """func.func @main(%d: tensor<1024x5001xbf16>, %w: tensor<5001x256xbf16>, %h: tensor<1024x256xbf16>) -> (tensor<1024x256xbf16>, tensor<5001x256xbf16>) {
  %0 = "graph.matmul"(%d, %w) : (tensor<1024x5001xbf16>, tensor<5001x256xbf16>) -> tensor<1024x256xbf16>
  %1 = "graph.matmul"(%d, %h) <{transpose_a = true}> : (tensor<1024x5001xbf16>, tensor<1024x256xbf16>) -> tensor<5001x256xbf16>
  func.return %0, %1 : tensor<1024x256xbf16>, tensor<5001x256xbf16>
}
"""
"""GPT-2's logits gradient: rows of 5001 (50257) elements read along k by d @ w and along m
by dᵀ @ h (the weight gradient)."""


def test_an_unaligned_operand_read_both_ways_is_copied_once():
    """d's rows are padded to 5008 elements once; dᵀ @ h reads that copy M-major (its
    padded rows are zeros that no stored result reads) instead of a transposing copy."""
    module = lowered(SHARED_UNALIGNED)
    kernels = [k.sym_name.data for k in gpu_kernels(module)]
    assert sum("_aligned" in name for name in kernels) == 1 and not any("transpose" in name for name in kernels)
    (weight_gradient,) = [k for k in gpu_kernels(module) if k.sym_name.data == "main_matmul_3"]
    assert WARPGROUP_MMA in weight_gradient.attributes and ".m_major" in str(weight_gradient)


@needs_gpu
def test_an_unaligned_operand_read_both_ways_matches_the_reference():
    check_on_gpu(SHARED_UNALIGNED, inputs_for(SHARED_UNALIGNED, "shared_unaligned", np.random.default_rng(19)))


TF32_CASES = {
    "tf32_square": matmul(2048, 512, 2048, "f32"),  # b along n: copied K-major first
    "tf32_x_wT": matmul(1536, 320, 1536, "f32", props="transpose_b = true"),  # read in place
    "tf32_transposed_a": matmul(2048, 256, 1024, "f32", props="transpose_a = true"),  # a copied too
    "tf32_edges": matmul(1999, 300, 1030, "f32"),  # partial tiles; rows of 1030: no 16-byte chunks
    "tf32_bias_gelu": matmul_bias_gelu(1536, 256, 1536, "f32"),
    "tf32_batched": matmul(512, 128, 768, "f32", batch=(3,)),
}
TF32_WGMMA = "ptx.wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"


def lowered_tf32(text: str):
    module = strata.parse_module(text)
    run_pipeline(module, GpuPipelinePass(warpgroup_mma=True, allow_tf32=True).steps())
    return module


@pytest.mark.parametrize("name", TF32_CASES)
def test_tf32_matmuls_take_the_warpgroup_loop(name):
    """With allow_tf32 on sm_90, large enough f32 matmuls get 128 x 128 x 32 tiles and the
    m64n128k8 TF32 product, both operands K-major (copied where read along m or n): the
    instruction reads the f32 bits as they are (no cvt.rna, no mma.sync)."""
    module = lowered_tf32(TF32_CASES[name])
    (kernel,) = [k for k in gpu_kernels(module) if WARPGROUP_MMA in k.attributes]
    text = str(kernel)
    assert TF32_WGMMA in text and "ptx.mma.sync" not in text and "cvt.rna" not in text
    assert PERSISTENT in kernel.attributes
    copies = [k.sym_name.data for k in gpu_kernels(module) if "_transpose_" in k.sym_name.data]
    expected = {"tf32_square": ["b"], "tf32_edges": ["b"], "tf32_bias_gelu": ["b"], "tf32_batched": ["b"],
                "tf32_transposed_a": ["a", "b"], "tf32_x_wT": []}[name]
    assert sorted(c.split("_transpose_")[1][0] for c in copies) == expected
    assert ("ptx.st.global.v4.b32" in text) == (name != "tf32_edges")


def test_tf32_needs_k_in_16_byte_chunks_and_enough_work():
    """k = 301 (no 16-byte chunks) and a 256^3 matmul (too little work for a copy of b)
    keep the mma.sync TF32 path and its 64 x 64 tiles."""
    for text in (matmul(1000, 301, 1000, "f32"), matmul(256, 256, 256, "f32")):
        lowered = str(lowered_tf32(text))
        assert "ptx.wgmma" not in lowered and "ptx.mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in lowered


@needs_ptx_tools
@pytest.mark.parametrize("name", ["tf32_square", "tf32_edges", "tf32_bias_gelu"])
def test_tf32_ptx_for_sm90a_is_accepted_by_ptxas(name):
    ptx = module_to_ptx(lowered_tf32(TF32_CASES[name]), "sm_90a")[1]
    assert "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32" in ptx
    ptxas(ptx, "sm_90a")


@needs_gpu
@pytest.mark.parametrize("name", TF32_CASES)
def test_tf32_warpgroup_matmuls_match_the_reference(name):
    """TF32 products read 10 of each operand's mantissa bits (the instruction ignores the
    rest): within 2e-3 of the largest result, like the mma.sync path's rounded operands."""
    text = TF32_CASES[name]
    inputs = inputs_for(text, name, np.random.default_rng(17))
    (want,) = strata.interpret(text, *inputs)
    (got,) = strata.compile(text, target="cuda", allow_tf32=True)(*inputs)
    assert got.shape == want.shape and np.max(np.abs(got - want)) <= 2e-3 * np.max(np.abs(want))


def products(text: str) -> set[str]:
    return set(re.findall(r"ptx\.wgmma\.mma_async[\w.]*", text))


def test_long_k_in_whole_waves_takes_128_x_256():
    assert products(str(lowered(WARPGROUP_CASES["wide_edges"]))) == {"ptx.wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16.n_major"}
    assert products(str(lowered(WARPGROUP_CASES["wide_x_wT"]))) == {"ptx.wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16"}


def test_b_layout_picks_the_descriptor_transpose():
    assert products(str(lowered(WARPGROUP_CASES["square"]))) == {"ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16.n_major"}
    assert products(str(lowered(WARPGROUP_CASES["x_wT"]))) == {"ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"}


@pytest.mark.parametrize(
    "text",
    [matmul(2048, 256, 2048, "f32"), matmul(64, 64, 64, "bf16")],
    ids=["f32", "small_tiles"],
)
def test_other_matmuls_keep_their_path(text):
    module = lowered(text)
    assert not any(WARPGROUP_MMA in k.attributes for k in gpu_kernels(module))
    assert WGMMA not in str(module)


def test_unaligned_operands_are_copied_for_the_tensor_cores():
    """Rows that do not start every 16 bytes (k = 1001) are copied once into a workspace of
    16-byte aligned rows: the matmul then takes the warpgroup loop instead of element-wise
    staging."""
    module = lowered(WARPGROUP_CASES["unaligned_k"])
    names = [k.sym_name.data for k in gpu_kernels(module)]
    assert any("matmul_a_aligned" in n for n in names) and WGMMA in str(module)


def test_a_read_transposed_is_m_major_without_a_copy():
    """aᵀ @ b (a weight gradient's xᵀ @ dy) with aligned rows of a: the warpgroup mma reads
    a in place in its M-major mode (the transpose-a bit); mma.sync (sm_80) still gets a
    transposed copy."""
    for name in ("transposed_a", "transposed_a_edges", "transposed_a_and_b"):
        module = lowered(WARPGROUP_CASES[name])
        assert len(gpu_kernels(module)) == 1
        assert all(".m_major" in product for product in products(str(module)))
    without = lowered(WARPGROUP_CASES["transposed_a"], warpgroup=False)
    assert any("matmul_a_aligned" in k.sym_name.data for k in gpu_kernels(without))


def test_without_the_option_nothing_changes():
    module = lowered(WARPGROUP_CASES["square"], warpgroup=False)
    assert WGMMA not in str(module) and "ptx.mma.sync" in str(module)


@needs_ptx_tools
@pytest.mark.parametrize("name", WARPGROUP_CASES)
def test_ptx_for_sm90a_is_accepted_by_ptxas(name):
    ptx = module_to_ptx(lowered(WARPGROUP_CASES[name]), "sm_90")[1]
    assert ".target sm_90a" in ptx and "wgmma.mma_async.sync.aligned.m64n" in ptx
    assert "wgmma.fence.sync.aligned" in ptx and "fence.proxy.async.shared::cta" in ptx
    ptxas(ptx, "sm_90a")


@needs_ptx_tools
def test_strata_translate_emits_wgmma_for_sm90a_only():
    from strata.targets.cuda import CUDA

    text = WARPGROUP_CASES["square"]
    assert "wgmma" in CUDA.emit(strata.parse_module(text), "ptx", "sm_90a")
    assert "wgmma" not in CUDA.emit(strata.parse_module(text), "ptx", "sm_90")


def test_warpgroup_kernels_for_another_arch_are_a_clear_error():
    with pytest.raises(StrataError, match="warpgroup mma .* needs sm_90, not sm_80"):
        module_to_ptx(lowered(WARPGROUP_CASES["square"]), "sm_80")


@needs_gpu
@pytest.mark.parametrize("name", WARPGROUP_CASES)
def test_warpgroup_matmuls_match_the_reference(name):
    text = WARPGROUP_CASES[name]
    inputs = inputs_for(text, name, np.random.default_rng(11))
    if name == "bias_gelu":
        # A sum of 256 products rounded to bf16 may differ by an ulp from the reference's
        # (f32 tensor-core sums), and the add's rounding by another: at |x| ~ 20 that is
        # 0.25, over the tolerance. Small values keep two ulps under its absolute part (1e-2).
        inputs = [(x * 0.25).astype(x.dtype) for x in inputs]
    check_on_gpu(text, inputs)
