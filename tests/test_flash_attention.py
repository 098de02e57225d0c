"""Flash attention on the GPU (lowering/tile_to_gpu/flash_attention.py): bf16/f16 attention
with head sizes 16..256 (multiples of 16) is one tensor-core kernel with an online softmax and no S x S
workspace; other attention keeps the three kernels. Without a GPU: which attention takes
which path, the plan, ptxas. With a GPU: results against the reference at odd sizes,
causal and not, cross attention, head sizes 16 to 256, within the ulps the CPU suite allows
the GPU (4: the score matmul's accumulation on tensor cores)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import strata
from programs import single_op
from strata.support.dtypes import NUMPY_DTYPES
from strata.targets.cuda import GpuPipelinePass
from strata.targets.passes import run_pipeline
from targets import ptxas
from test_cpu import low_precision_ulps
from test_gpu import lower, needs_gpu, needs_ptx_tools

CASES = {
    "heads-2x4x128x64-causal-bf16": ((2, 4, 128, 64), (2, 4, 128, 64), (2, 4, 128, 64), "bf16", True),
    "partial-150x128-f16": ((1, 150, 128), (1, 150, 128), (1, 150, 128), "f16", False),
    "tiny-3x17x32-causal-bf16": ((3, 17, 32), (3, 17, 32), (3, 17, 32), "bf16", True),
    "cross-70x130-v128-bf16": ((2, 70, 64), (2, 130, 64), (2, 130, 128), "bf16", False),
    "causal-queries-past-keys-f16": ((1, 100, 64), (1, 40, 64), (1, 40, 16), "f16", True),
    "head-16-33-f16": ((2, 33, 16), (2, 33, 16), (2, 33, 16), "f16", False),
    "long-1x2x1024x128-causal-bf16": ((1, 2, 1024, 128), (1, 2, 1024, 128), (1, 2, 1024, 128), "bf16", True),
    "head-80-v96-causal-bf16": ((2, 77, 80), (2, 77, 80), (2, 77, 96), "bf16", True),
    "head-48-f16": ((1, 50, 48), (1, 50, 48), (1, 50, 48), "f16", False),
    # Past head 128: q read again at each key block, blocks of 32 keys (16 at head 256).
    "head-144-causal-bf16": ((2, 70, 144), (2, 70, 144), (2, 70, 144), "bf16", True),
    "head-192-v160-cross-f16": ((1, 77, 192), (1, 90, 192), (1, 90, 160), "f16", False),
    "head-256-causal-bf16": ((1, 2, 100, 256), (1, 2, 100, 256), (1, 2, 100, 256), "bf16", True),
    # On sm_90 heads of 256 take the warpgroup kernel (q from shared memory, two stages):
    # six key blocks reuse each stage three times; q/k and v of 256 beside 64.
    "head-256-long-f16": ((1, 2, 333, 256), (1, 2, 333, 256), (1, 2, 333, 256), "f16", False),
    "head-256-v64-causal-bf16": ((2, 150, 256), (2, 150, 256), (2, 150, 64), "bf16", True),
    "head-64-v256-f16": ((1, 90, 64), (1, 130, 64), (1, 130, 256), "f16", False),
    # On sm_90 heads of 32 to 256 that are not whole strips of 64 take the warpgroup kernel
    # in strips (the padding copied as zeros): every stage reused, q/k 192 with v 128, v
    # 240 past 112.
    "head-96-long-causal-f16": ((1, 2, 300, 96), (1, 2, 300, 96), (1, 2, 300, 96), "f16", True),
    "head-192-v128-long-causal-bf16": ((1, 2, 333, 192), (1, 2, 333, 192), (1, 2, 333, 128), "bf16", True),
    "head-160-long-bf16": ((1, 290, 160), (1, 290, 160), (1, 290, 160), "bf16", False),
    "head-112-v240-cross-f16": ((2, 65, 112), (2, 200, 112), (2, 200, 240), "f16", False),
}


def attention(q, k, v, dtype, causal, scale=None) -> str:
    scale = 1 / np.sqrt(q[-1]) if scale is None else scale
    out = (*q[:-1], v[-1])
    props = f"scale = {scale:.17g} : f64, causal = {str(causal).lower()}"
    return single_op("graph.attention", [(q, dtype), (k, dtype), (v, dtype)], (out, dtype), props)


@pytest.mark.parametrize("case", list(CASES))
def test_16_bit_attention_is_one_flash_kernel_without_a_scores_buffer(case):
    text = attention(*CASES[case])
    tiles = strata.parse_module(text)
    run_pipeline(tiles, GpuPipelinePass.STEPS.split(",token-dce")[0])
    program = str(tiles)
    assert program.count("tile.launch") == 1 and program.count("tile.buffer") == 1  # the result only
    assert "tile.flash_attention" in program
    lowered = str(lower(text))
    kernels = [line for line in lowered.splitlines() if "gpu.kernel" in line]
    assert len(kernels) == 1 and "gpu.dynamic_shared_bytes" in kernels[0]
    assert "ptx.ldmatrix" in lowered and "ptx.mma.sync.aligned.m16n8k16" in lowered and "ptx.cvt.rn" in lowered


@pytest.mark.parametrize(
    "q, k, v, dtype",
    [((1, 64, 64), (1, 64, 64), (1, 64, 64), "f32"), ((1, 64, 272), (1, 64, 272), (1, 64, 64), "bf16"),
     ((1, 64, 8), (1, 64, 8), (1, 64, 8), "bf16"), ((1, 64, 40), (1, 64, 40), (1, 64, 40), "bf16")],
    ids=["f32", "head-272", "head-8", "head-40"],
)  # fmt: skip
def test_other_attention_keeps_three_kernels(q, k, v, dtype):
    text = str(lower(attention(q, k, v, dtype, False)))
    assert "ptx.cvt.rn" not in text
    assert sum("gpu.kernel" in line for line in text.splitlines()) == 3


@needs_ptx_tools
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_flash_ptx_is_accepted_by_ptxas(arch):
    from strata.lowering.nvvm.translate import module_to_ptx

    for case in ("heads-2x4x128x64-causal-bf16", "partial-150x128-f16", "head-80-v96-causal-bf16", "head-192-v160-cross-f16",
                 "head-256-causal-bf16"):
        ptx = module_to_ptx(lower(attention(*CASES[case])), arch)[1]
        assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx and "cvt.rn." in ptx
        ptxas(ptx, arch)


def lower_for_sm90(text: str, p16: bool = False):
    module = strata.parse_module(text)
    run_pipeline(module, GpuPipelinePass(warpgroup_mma=True, allow_16bit_attention_p=p16).steps())
    return module


WARPGROUP_HEADS = [case for case, (q, _, v, _, _) in CASES.items() if min(q[-1], v[-1]) >= 32]


def strips(head: int) -> int:
    """A head's shared columns in the warpgroup kernel: whole strips of 64."""
    return -(-head // 64) * 64


@pytest.mark.parametrize("case", list(CASES))
def test_warpgroup_flash_takes_heads_from_32_to_256(case):
    """On sm_90 (warpgroup_mma) heads of 32 to 256 run on wgmma, p v with p from registers
    (v's head in whole strips of 64: n is the padded head, the padding copied as zeros), q kᵀ
    with q from registers (read into them once: one ldmatrix.x4 per 16 of its head) up to
    strips of 128 and from shared memory past them; heads of 16 keep the mma.sync kernel."""
    q, _, v, _, _ = CASES[case]
    lowered = str(lower_for_sm90(attention(*CASES[case])))
    if case in WARPGROUP_HEADS:
        element = "bf16" if "bf16" in case else "f16"
        assert f"m64n{strips(v[-1])}k16.f32.{element}.{element}.n_major.a_registers" in lowered
        assert (f"f32.{element}.{element}.a_registers" in lowered) == (strips(q[-1]) <= 128)
        assert lowered.count("func.call @ptx.ldmatrix") == (q[-1] // 16 if strips(q[-1]) <= 128 else 0)
        rows = 128 if max(strips(q[-1]), strips(v[-1])) >= 128 else 64  # two warpgroups share a block's k and v
        grid = ", ".join(str(d) for d in (*q[:-2], -(-q[-2] // rows)))
        assert f"gpu.block_size = {2 * rows} : i64" in lowered and f"tile.grid = array<i64: {grid}>" in lowered
    else:
        assert "ptx.wgmma" not in lowered and "ptx.mma.sync.aligned.m16n8k16" in lowered


@needs_ptx_tools
@pytest.mark.parametrize("p16", [False, True], ids=["p-split", "p16"])
@pytest.mark.parametrize("case", WARPGROUP_HEADS)
def test_warpgroup_flash_ptx_is_accepted_by_ptxas(case, p16):
    from strata.lowering.nvvm.translate import module_to_ptx

    ptx = module_to_ptx(lower_for_sm90(attention(*CASES[case]), p16), "sm_90")[1]
    q, _, v, _, _ = CASES[case]
    keys = 128 if p16 and max(strips(q[-1]), strips(v[-1])) == 128 else 64  # wide key blocks: 128 queries, p16
    assert ".target sm_90a" in ptx and f"wgmma.mma_async.sync.aligned.m64n{keys}k16" in ptx
    # The stages pass through mbarriers: one block barrier (after their initialization), and
    # every wait loop has labels of its own (LLVM's ${:uid}).
    assert ptx.count("bar.sync") == 1 and "cp.async.mbarrier.arrive.noinc.shared.b64" in ptx
    labels = re.findall(r"(WAIT_\w+):", ptx)
    assert len(labels) > 1 and len(set(labels)) == len(labels)
    ptxas(ptx, "sm_90a")  # no performance warning: no wgmma serialized, no warpgroup.arrive injected


TENSOR_MAP_HEADS = ["head-80-v96-causal-bf16", "partial-150x128-f16", "long-1x2x1024x128-causal-bf16", "cross-70x130-v128-bf16",
                    "head-96-long-causal-f16"]


@needs_ptx_tools
@pytest.mark.parametrize("p16", [False, True], ids=["p-split", "p16"])
@pytest.mark.parametrize("case", TENSOR_MAP_HEADS)
def test_tensor_map_flash_ptx_is_accepted_by_ptxas(case, p16):
    """128-query blocks with tensor maps: a producer warpgroup whose first thread copies q, k
    and v a strip of 64 columns at a time (cp.async.bulk.tensor), the consumers never copy;
    the maps sit in the kernel's global table, which the runtime fills."""
    from strata.lowering.nvvm.translate import module_to_ptx

    module = strata.parse_module(attention(*CASES[case]))
    run_pipeline(module, GpuPipelinePass(warpgroup_mma=True, allow_16bit_attention_p=p16, tensor_maps=True).steps())
    lowered = str(module)
    q, k, v, _, _ = CASES[case]
    assert "gpu.block_size = 384 : i64" in lowered and lowered.count("box_rows") == 3
    ptx = module_to_ptx(module, "sm_90")[1]
    rank = len(q)
    assert re.search(r"\.global \.align 64 \.b8 \w+_tensor_maps\[384\];", ptx)
    assert ptx.count(f"cp.async.bulk.tensor.{rank}d") == ptx.count("cp.async.bulk.tensor") > 0
    assert "cp.async.cg" not in ptx and ptx.count("bar.sync") == 1
    assert "setmaxnreg.dec.sync.aligned.u32 24;" in ptx and "setmaxnreg.inc.sync.aligned.u32 240;" in ptx
    ptxas(ptx, "sm_90a")


def test_tensor_maps_take_128_query_blocks_of_mappable_views():
    """Heads in strips of 128 take tensor maps; 64-query blocks keep every thread's copies (a
    producer warpgroup would halve the blocks a multiprocessor holds), and so do heads past
    128 (a producer beside them left the products serialized for want of registers)."""
    def lowered(case: str) -> str:
        module = strata.parse_module(attention(*CASES[case]))
        run_pipeline(module, GpuPipelinePass(warpgroup_mma=True, tensor_maps=True).steps())
        return str(module)

    for case in ("heads-2x4x128x64-causal-bf16", "head-256-long-f16", "head-112-v240-cross-f16"):
        every_thread = lowered(case)
        assert "gpu.tensor_maps" not in every_thread and "ptx.cp.async.cg" in every_thread
    mapped = lowered("head-96-long-causal-f16")
    assert "gpu.tensor_maps" in mapped and "ptx.cp.async.cg" not in mapped


@needs_gpu
@pytest.mark.parametrize("p16", [False, True], ids=["p-split", "p16"])
@pytest.mark.parametrize("case", list(CASES))
def test_flash_attention_on_gpu(case, p16):
    """scale 1/sqrt(head), unit normal inputs: a well-conditioned softmax (with scale 1 and
    |scores| in the hundreds, a row's two largest scores can tie within the f32 rounding of
    any summation order, and the output then follows either row of v). Outputs near zero
    come from cancellation in sum(p v): there any summation order (the three kernels' too)
    is off by many ulps of a tiny result, so ulps are bounded where |out| >= 1/16, and the
    absolute error everywhere by an ulp of the largest output. With p rounded to 16 bits
    (`allow_16bit_attention_p`) each term p v of the output's sum is off by up to 2^-9 (bf16;
    2^-12 f16) of its size: the error is bounded by that of sum(p |v|) / l, the attention of
    |v|, on top of two ulps of the output and one of the largest."""
    q, k, v, dtype, causal = CASES[case]
    text = attention(q, k, v, dtype, causal)
    rng = np.random.default_rng(21)
    inputs = [rng.standard_normal(s, dtype=np.float32).astype(NUMPY_DTYPES[dtype]) for s in (q, k, v)]
    (want,) = strata.interpret(text, *inputs)
    (got,) = strata.compile(text, target="cuda", allow_16bit_attention_p=p16)(*inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    mantissa = 10 if want.dtype == np.float16 else 7
    exact = want.astype(np.float64)
    largest = np.abs(exact).max()
    ulp_of_largest = 2.0 ** (np.floor(np.log2(largest)) - mantissa)
    error = np.abs(got.astype(np.float64) - exact)
    if p16:
        (magnitude,) = strata.interpret(text, inputs[0], inputs[1], np.abs(inputs[2]))
        ulp = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(exact), 2.0**-100))) - mantissa)
        assert np.all(error <= 2 * ulp + ulp_of_largest + 2.0 ** -(mantissa + 2) * magnitude.astype(np.float64))
        return
    ulps = low_precision_ulps(got, want)
    away_from_zero = np.abs(exact) >= 1 / 16
    assert ulps[away_from_zero].max() <= 2
    assert error.max() <= ulp_of_largest


def test_16_bit_attention_p_is_for_the_gpu_only():
    from strata.support.errors import InputError

    with pytest.raises(InputError, match="allow_16bit_attention_p is for target 'cuda'"):
        strata.compile(attention(*CASES["tiny-3x17x32-causal-bf16"]), target="cpu", allow_16bit_attention_p=True)


def test_a_malformed_flash_mark_is_a_clear_error():
    from xdsl.dialects.builtin import DictionaryAttr

    from strata.dialects import tile
    from strata.support.errors import StrataError

    module = strata.parse_module(attention(*CASES["tiny-3x17x32-causal-bf16"]))
    run_pipeline(module, GpuPipelinePass.STEPS.split(",token-dce")[0])
    (kernel,) = [op for op in module.ops if isinstance(op, tile.KernelOp)]
    kernel.attributes["tile.flash_attention"] = DictionaryAttr({})
    with pytest.raises(StrataError, match=r"tile.flash_attention needs \{scale: f64, causal: bool\}"):
        run_pipeline(module, "lower-tile-to-gpu")
