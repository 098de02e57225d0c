"""The gradient of attention: graph.attention_grad (the VJP of graph.attention), spelled out
in matmuls and a softmax by expand-attention-grad (the CPU, f32 and large heads on the GPU)
or computed by the flash-attention backward kernels (bf16/f16, heads 16..128, on the GPU:
lowering/graph_to_tile/attention_grad.py, whose kernel bodies are what the GPU kernels of
lowering/tile_to_gpu/flash_attention_grad.py compute). Without a GPU: which path each
gradient takes, the plan (no S x S workspace), the marked kernels' bodies run on the CPU
against the reference, ptxas. With a GPU: results against the reference at odd sizes,
causal and not, cross attention, both p modes, within a stated bound."""

from __future__ import annotations

import numpy as np
import pytest

import strata
from strata.dialects import tile
from strata.support.dtypes import NUMPY_DTYPES
from strata.support.errors import StrataError
from strata.targets.cpu import CpuPipelinePass
from strata.targets.cuda import GpuPipelinePass
from strata.targets.passes import run_pipeline
from targets import compile_with_steps, ptxas
from test_flash_attention import lower_for_sm90
from test_gpu import lower, needs_gpu, needs_ptx_tools

CASES = {
    "heads-2x3x128x64-causal-bf16": ((2, 3, 128, 64), (2, 3, 128, 64), (2, 3, 128, 64), "bf16", True),
    "partial-150x32-f16": ((1, 150, 32), (1, 150, 32), (1, 150, 32), "f16", False),
    "tiny-3x17x16-causal-bf16": ((3, 17, 16), (3, 17, 16), (3, 17, 16), "bf16", True),
    "cross-70x130-v32-bf16": ((2, 70, 64), (2, 130, 64), (2, 130, 32), "bf16", False),
    "causal-queries-past-keys-f16": ((1, 100, 32), (1, 40, 32), (1, 40, 16), "f16", True),
    "causal-keys-past-queries-bf16": ((1, 40, 16), (1, 100, 16), (1, 100, 16), "bf16", True),
    # Heads past 64: 32-row streamed blocks, resident fragments read again at each block.
    "head-128-causal-bf16": ((2, 130, 128), (2, 130, 128), (2, 130, 128), "bf16", True),
    "head-96-v80-cross-f16": ((1, 70, 96), (1, 100, 96), (1, 100, 80), "f16", False),
    "head-112-v48-causal-queries-past-keys-bf16": ((1, 100, 112), (1, 40, 112), (1, 40, 48), "bf16", True),
    # Every head 64 (or below, 128): dq and dkv on the warpgroup mma on sm_90 (a key block
    # past every query streams no query block).
    "head-64-partial-150-f16": ((1, 150, 64), (1, 150, 64), (1, 150, 64), "f16", False),
    "head-64-causal-keys-past-queries-bf16": ((2, 40, 64), (2, 100, 64), (2, 100, 64), "bf16", True),
    "head-64-causal-queries-past-keys-f16": ((1, 200, 64), (1, 70, 64), (1, 70, 64), "f16", True),
    "head-128-cross-f16": ((1, 70, 128), (1, 150, 128), (1, 150, 128), "f16", False),
    "head-128-causal-keys-past-queries-bf16": ((1, 40, 128), (1, 100, 128), (1, 100, 128), "bf16", True),
    # Every head the same from 32 to 128, not whole strips of 64: on sm_90 the warpgroup
    # kernels in strips (the padding copied as zeros), every stage reused.
    "head-80-causal-bf16": ((2, 150, 80), (2, 150, 80), (2, 150, 80), "bf16", True),
    "head-96-long-f16": ((1, 2, 300, 96), (1, 2, 300, 96), (1, 2, 300, 96), "f16", False),
    "head-48-causal-keys-past-queries-f16": ((1, 70, 48), (1, 230, 48), (1, 230, 48), "f16", True),
    # One key: kᵀ is [..., head, 1], whose last axis is as long as L's and D's.
    "one-key-head-96-f16": ((2, 33, 96), (2, 1, 96), (2, 1, 96), "f16", False),
    "one-key-head-16-causal-bf16": ((1, 5, 16), (1, 1, 16), (1, 1, 16), "bf16", True),
}
DEEP_CASES = {
    # One head past 128 for q and v: on sm_90 stats, dq, dk and dv kernels (dkv split in two),
    # tiles of 256 columns.
    "head-256-causal-bf16": ((1, 2, 130, 256), (1, 2, 130, 256), (1, 2, 130, 256), "bf16", True),
    "head-144-cross-f16": ((1, 70, 144), (1, 150, 144), (1, 150, 144), "f16", False),
    "head-192-causal-keys-past-queries-bf16": ((2, 40, 192), (2, 100, 192), (2, 100, 192), "bf16", True),
    # q/k and v heads apart, one past 128 (multi-head latent attention's 192 and 128).
    "q192-v128-causal-bf16": ((1, 2, 100, 192), (1, 2, 100, 192), (1, 2, 100, 128), "bf16", True),
    "q64-v256-cross-f16": ((1, 70, 64), (1, 150, 64), (1, 150, 256), "f16", False),
}
SHAPES = CASES | DEEP_CASES
SMALL = ("tiny-3x17x16-causal-bf16", "cross-70x130-v32-bf16", "causal-queries-past-keys-f16",
         "causal-keys-past-queries-bf16", "head-96-v80-cross-f16")  # fmt: skip


def attention_grad(q, k, v, dtype, causal, scale=None) -> str:
    """@main(q, k, v, out, dout) -> (dq, dk, dv) as one graph.attention_grad."""
    scale = 1 / np.sqrt(q[-1]) if scale is None else scale
    out = (*q[:-1], v[-1])

    def t(shape):
        return f"tensor<{'x'.join(map(str, shape))}x{dtype}>"

    ins, outs = ", ".join(t(s) for s in (q, k, v, out, out)), ", ".join(t(s) for s in (q, k, v))
    return (
        f"func.func @main(%q: {t(q)}, %k: {t(k)}, %v: {t(v)}, %o: {t(out)}, %do: {t(out)}) -> ({outs}) {{\n"
        f"  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {{scale = {scale:.17g} : f64, "
        f"causal = {str(causal).lower()}}} : ({ins}) -> ({outs})\n"
        f"  func.return %dq, %dk, %dv : {outs}\n}}\n"
    )


def inputs(case, seed=5):
    q, k, v, dtype, _ = SHAPES[case]
    out = (*q[:-1], v[-1])
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s, dtype=np.float32).astype(NUMPY_DTYPES[dtype]) for s in (q, k, v, out, out)]


def tile_program(text: str, warpgroup_mma: bool = False):
    """The program as the GPU pipeline (for sm_90: warpgroup_mma) leaves it at the tile level."""
    module = strata.parse_module(text)
    run_pipeline(module, GpuPipelinePass(warpgroup_mma=warpgroup_mma).steps().split(",token-dce")[0])
    return module


def attention_loss(shape: tuple[int, ...], dtype: str, causal: bool) -> str:
    """@f(q, k, v) = sum(attention(q, k, v)): a scalar loss over one attention."""
    t = f"tensor<{'x'.join(map(str, shape))}x{dtype}>"
    axes = ", ".join(map(str, range(len(shape))))
    return (
        f"func.func @f(%q: {t}, %k: {t}, %v: {t}) -> tensor<{dtype}> attributes {{graph.differentiate}} {{\n"
        f"  %o = graph.attention %q, %k, %v {{scale = {1 / np.sqrt(shape[-1]):.17g} : f64, causal = {str(causal).lower()}}} "
        f": ({t}, {t}, {t}) -> {t}\n"
        f"  %s = graph.reduce_sum %o {{axes = array<i64: {axes}>}} : ({t}) -> tensor<{dtype}>\n"
        f"  func.return %s : tensor<{dtype}>\n}}\n"
    )


def test_attention_vjp_is_one_attention_grad():
    module = strata.parse_module(attention_loss((2, 8, 16), "bf16", True))
    run_pipeline(module, "autodiff")
    grads = [op for op in module.walk() if op.name == "graph.attention_grad"]
    assert len(grads) == 1 and not any(op.name == "graph.softmax" for op in module.walk())


@pytest.mark.parametrize("case", list(CASES))
def test_16_bit_attention_grad_is_three_flash_kernels_without_a_scores_buffer(case):
    q, k, *_ = CASES[case]
    program = tile_program(attention_grad(*CASES[case]))
    kernels = [op for op in program.ops if isinstance(op, tile.KernelOp)]
    parts = [kernel.attributes["tile.flash_attention_grad"].data["part"].data for kernel in kernels]
    assert parts == ["stats", "dq", "dkv"]
    buffers = [op for op in program.walk() if isinstance(op, tile.BufferOp)]
    workspaces = [b for b in buffers if "tile.workspace" in b.attributes]
    padded = -(-q[-2] // 64) * 64
    assert len(workspaces) == 2 and all(b.result.type.get_shape() == (np.prod(q[:-2]) * padded,) for b in workspaces)
    operands = {int(np.prod(shape)) for shape in CASES[case][:3]} | {int(np.prod((*q[:-1], CASES[case][2][-1])))}
    sizes = [b.result.type.get_shape()[0] for b in buffers if b not in workspaces]
    assert not any(size >= q[-2] * k[-2] * np.prod(q[:-2]) and size not in operands for size in sizes)


@pytest.mark.parametrize("case", list(DEEP_CASES))
def test_deep_attention_grad_on_sm90_is_four_flash_kernels_without_a_scores_buffer(case):
    """sm_90's pipeline takes heads past 128 (up to 256): stats, dq, and dkv as a dk and a
    dv kernel over the same key blocks (dv reads neither v nor D); L and D are the only
    workspaces, no S x S buffer; the other GPUs' pipeline expands it."""
    q, k, *_ = DEEP_CASES[case]
    program = tile_program(attention_grad(*DEEP_CASES[case]), warpgroup_mma=True)
    kernels = [op for op in program.ops if isinstance(op, tile.KernelOp)]
    parts = [kernel.attributes["tile.flash_attention_grad"].data["part"].data for kernel in kernels]
    assert parts == ["stats", "dq", "dk", "dv"]
    query_blocks, key_blocks = (*q[:-2], -(-q[-2] // 64)), (*q[:-2], -(-k[-2] // 64))
    assert [kernel.grid_shape() for kernel in kernels] == [query_blocks, query_blocks, key_blocks, key_blocks]
    assert [len(kernel.body.block.args) for kernel in kernels] == [6, 7, 7, 5]
    buffers = [op for op in program.walk() if isinstance(op, tile.BufferOp)]
    workspaces = [b for b in buffers if "tile.workspace" in b.attributes]
    operands = {int(np.prod(shape)) for shape in DEEP_CASES[case][:3]}
    sizes = [b.result.type.get_shape()[0] for b in buffers if b not in workspaces]
    scores = q[-2] * k[-2] * np.prod(q[:-2])
    assert len(workspaces) == 2 and not any(size >= scores and size not in operands for size in sizes)
    assert "tile.flash_attention_grad" not in str(tile_program(attention_grad(*DEEP_CASES[case])))


@pytest.mark.parametrize(
    "q, k, v, dtype",
    [((1, 64, 64), (1, 64, 64), (1, 64, 64), "f32"), ((1, 64, 144), (1, 64, 144), (1, 64, 144), "bf16"),
     ((1, 64, 8), (1, 64, 8), (1, 64, 8), "bf16"), ((1, 64, 64), (1, 64, 64), (1, 64, 136), "bf16")],
    ids=["f32", "head-144", "head-8", "v-head-136"],
)  # fmt: skip
def test_other_attention_grad_is_expanded(q, k, v, dtype):
    program = str(tile_program(attention_grad(q, k, v, dtype, True)))
    assert "tile.flash_attention_grad" not in program and "graph.attention_grad" not in program
    assert "softmax" in program


def flash_bodies_on_the_cpu(text: str, pair: bool = False, deepest: int = 128):
    """The program as the GPU pipeline marks it, run by the CPU: the marked kernels' bodies
    (`pair`: with the forward's L shared with the gradient, share-attention-lse; `deepest`:
    flash_grad_head, 256 as on sm_90)."""
    head = f"flash_grad_head={deepest}"
    kept = f"expand-attention-grad{{keep_flash=true {head}}}" + (f",share-attention-lse{{{head}}}" if pair else "")
    steps = CpuPipelinePass.STEPS.replace(
        "lower-graph-to-tile", f"lower-graph-to-tile{{flash_attention=true fused_attention=false {head}}}"
    ).replace("expand-attention-grad", kept)
    return compile_with_steps(text, steps)


def error_bound(case, args, want, low_terms: float) -> list[np.ndarray]:
    """Per gradient: an ulp of each result and of the largest, plus `low_terms` times the
    sum of the magnitudes of the terms each result sums (|ds| |k|, |ds|ᵀ |q|, |p|ᵀ |dout|):
    the error of rounding every p and ds to 16 bits (p16), or of f32 sums (otherwise)."""
    q, k, v, out, dout = (a.astype(np.float64) for a in args)
    *_, dtype, causal = SHAPES[case]
    scale = 1 / np.sqrt(q.shape[-1])
    scores = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        scores = np.where(np.arange(k.shape[-2])[None, :] > np.arange(q.shape[-2])[:, None], -np.inf, scores)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    ds = p * (dout @ np.swapaxes(v, -1, -2) - (dout * out).sum(-1, keepdims=True))
    magnitudes = [scale * np.abs(ds) @ np.abs(k), scale * np.swapaxes(np.abs(ds), -1, -2) @ np.abs(q),
                  np.swapaxes(p, -1, -2) @ np.abs(dout)]  # fmt: skip
    mantissa = 10 if dtype == "f16" else 7
    bounds = []
    for result, magnitude in zip(want, magnitudes):
        exact = np.abs(result.astype(np.float64))
        ulp = 2.0 ** (np.floor(np.log2(np.maximum(exact, 2.0**-100))) - mantissa)
        ulp_of_largest = 2.0 ** (np.floor(np.log2(exact.max())) - mantissa)
        bounds.append(ulp + ulp_of_largest + low_terms * magnitude)
    return bounds


def assert_within(case, args, want, got, low_terms: float) -> None:
    for name, w, g, bound in zip(("dq", "dk", "dv"), want, got, error_bound(case, args, want, low_terms)):
        assert g.shape == w.shape and g.dtype == w.dtype, name
        error = np.abs(g.astype(np.float64) - w.astype(np.float64))
        assert np.all(error <= bound), f"{name}: error {error.max():.3g} past the bound by {(error - bound).max():.3g}"


@pytest.mark.parametrize("case", SMALL)
def test_flash_grad_kernel_bodies_match_the_reference_on_the_cpu(case):
    text = attention_grad(*CASES[case])
    args = inputs(case)
    want = strata.interpret(text, *args)
    assert_within(case, args, want, flash_bodies_on_the_cpu(text)(*args), 2.0**-13)


@pytest.mark.parametrize("case", list(DEEP_CASES))
def test_deep_flash_grad_kernel_bodies_match_the_reference_on_the_cpu(case):
    text = attention_grad(*DEEP_CASES[case])
    args = inputs(case)
    want = strata.interpret(text, *args)
    assert_within(case, args, want, flash_bodies_on_the_cpu(text, deepest=256)(*args), 2.0**-13)


def test_deep_flash_grad_kernels_without_the_warpgroup_mma_are_a_clear_error():
    """Heads past 128 are sm_90's: lowered for mma.sync, the error names the kernel and the
    heads those kernels take, and a dk or dv part the warpgroup kernels."""
    module = tile_program(attention_grad(*DEEP_CASES["head-144-cross-f16"]), warpgroup_mma=True)
    with pytest.raises(StrataError, match=r"_stats_0: tile.flash_attention_grad takes .* heads of 16 to 128"):
        run_pipeline(module, "lower-tile-to-gpu")
    from strata.lowering.tile_to_gpu.flash_attention_grad import FlashAttentionGradLowering

    module = tile_program(attention_grad(*DEEP_CASES["head-144-cross-f16"]), warpgroup_mma=True)
    dk = next(op for op in module.ops if isinstance(op, tile.KernelOp) and op.sym_name.data.endswith("_dk_2"))
    with pytest.raises(StrataError, match=r"_dk_2: .* \(got dk; dk and dv are the warpgroup mma kernels\)"):
        FlashAttentionGradLowering(dk).lower()


def test_a_malformed_flash_grad_mark_is_a_clear_error():
    from xdsl.dialects.builtin import DictionaryAttr, StringAttr

    module = tile_program(attention_grad(*CASES["tiny-3x17x16-causal-bf16"]))
    kernel = next(op for op in module.ops if isinstance(op, tile.KernelOp))
    kernel.attributes["tile.flash_attention_grad"] = DictionaryAttr({"part": StringAttr("sideways")})
    with pytest.raises(StrataError, match=r"tile.flash_attention_grad needs \{part: stats\|dots\|dq\|dkv"):
        run_pipeline(module, "lower-tile-to-gpu")


@needs_ptx_tools
@pytest.mark.parametrize(
    "case, arch",
    [(case, "sm_80") for case in ("heads-2x3x128x64-causal-bf16", "partial-150x32-f16", "head-96-v80-cross-f16")]
    + [("head-128-causal-bf16", arch) for arch in ("sm_80", "sm_90")],
)
def test_flash_grad_ptx_is_accepted_by_ptxas(case, arch):
    """The kernels are the same mma.sync code on both architectures; sm_90 takes the
    register-heaviest (head 128), which is where ptxas would first refuse or spill."""
    from strata.lowering.nvvm.translate import module_to_ptx

    ptx = module_to_ptx(lower(attention_grad(*CASES[case])), arch)[1]
    assert ptx.count(".entry") == 3 and "mma.sync.aligned.m16n8k16" in ptx and "ldmatrix" in ptx
    ptxas(ptx, arch)


WARPGROUP_CASES = [case for case, (q, k, v, *_) in CASES.items() if q[-1] == k[-1] == v[-1] and 32 <= q[-1] <= 128]


@pytest.mark.parametrize("case", list(CASES))
def test_warpgroup_grad_takes_equal_heads_of_32_to_128(case):
    """On sm_90 (warpgroup_mma) the stats, dq and dkv kernels where every head is the same,
    32 to 128, run on wgmma: their score products with the resident operands' fragments
    from registers (heads in one strip of 64: one ldmatrix.x4 per 16 of each head) or from
    shared memory (two strips), the sums of dq and dkv with p or ds from registers and the
    streamed operand N-major on whole strips (the padding copied as zeros); other heads keep
    mma.sync."""
    functions = [op for op in lower_for_sm90(attention_grad(*CASES[case])).ops if op.name == "func.func"]
    kernels = {str(f.sym_name.data).split("_")[-2]: str(f) for f in functions if "gpu.kernel" in f.attributes}
    assert sorted(kernels) == ["dkv", "dq", "stats"]
    head = CASES[case][0][-1]
    held = head <= 64  # one strip
    for part, residents in (("stats", 1), ("dq", 2), ("dkv", 2)):
        if case in WARPGROUP_CASES:
            scores = ".a_registers.fresh" if held else f"m64n64k16.f32.{CASES[case][3]}.{CASES[case][3]}.fresh"
            assert scores in kernels[part] and (part == "stats") != (".n_major.a_registers" in kernels[part])
            assert part == "stats" or f"m64n{64 if held else 128}k16" in kernels[part].split(".n_major.a_registers")[0][-40:]
            assert kernels[part].count("func.call @ptx.ldmatrix") == (residents * head // 16 if held else 0)
            assert "ptx.mma.sync" not in kernels[part] and "gpu.block_size = 128 : i64" in kernels[part]
        else:
            assert "ptx.wgmma" not in kernels[part] and "ptx.mma.sync.aligned.m16n8k16" in kernels[part]


@pytest.mark.parametrize("case", ["head-144-cross-f16", "q192-v128-causal-bf16", "q64-v256-cross-f16"])
def test_warpgroup_grad_of_deep_heads(case):
    """Past 128 every score product reads both operands from shared memory (descriptors) over
    its operands' own head (chains of head / 16); dq's, dk's and dv's sums are 64 x 256
    products of p or ds from registers; dv runs one score product a block (s, not dp), the
    others two."""
    functions = [op for op in lower_for_sm90(attention_grad(*DEEP_CASES[case])).ops if op.name == "func.func"]
    kernels = {str(f.sym_name.data).split("_")[-2]: str(f) for f in functions if "gpu.kernel" in f.attributes}
    assert sorted(kernels) == ["dk", "dq", "dv", "stats"]
    (*_, depth), _, (*_, width), element, _ = DEEP_CASES[case]
    score = f"m64n64k16.f32.{element}.{element}"
    chains = {part: kernel.count(f"{score}.fresh") for part, kernel in kernels.items()}
    for part, kernel in kernels.items():  # q kᵀ chains, and as many dout vᵀ ones in dq and dk
        steps = chains[part] * depth // 16 if part in ("stats", "dv") else chains[part] // 2 * (depth + width) // 16
        assert chains[part] and kernel.count(score) == steps and "ptx.mma.sync" not in kernel
        sums = [line for line in kernel.splitlines() if ".n_major.a_registers" in line]
        assert (part == "stats") != bool(sums) and all("m64n256k16" in line for line in sums)
    assert chains["dk"] == 2 * chains["dv"] and chains["dq"] == 2 * chains["stats"]


@needs_ptx_tools
@pytest.mark.parametrize(
    "case, p16",
    [(case, False) for case in WARPGROUP_CASES]
    + [("head-256-causal-bf16", False), ("q192-v128-causal-bf16", True)]
    + [(case, True) for case in ("heads-2x3x128x64-causal-bf16", "head-128-causal-bf16")],
)
def test_warpgroup_grad_ptx_is_accepted_by_ptxas(case, p16):
    """The stages pass through mbarriers (one block barrier, after their initialization);
    ptxas also fails on its notices of wgmma serialized or of waits it injects."""
    from strata.lowering.nvvm.translate import module_to_ptx

    ptx = module_to_ptx(lower_for_sm90(attention_grad(*SHAPES[case]), p16), "sm_90")[1]
    kernels = ptx.split(".entry")[1:]
    assert ".target sm_90a" in ptx and len(kernels) == (4 if SHAPES[case][0][-1] > 128 else 3)
    for kernel in kernels:
        assert "wgmma.mma_async.sync.aligned.m64n64k16" in kernel and kernel.count("bar.sync") == 1
    ptxas(ptx, "sm_90a")


@needs_gpu
@pytest.mark.parametrize("p16", [False, True], ids=["p-split", "p16"])
@pytest.mark.parametrize("case", list(SHAPES))
def test_flash_attention_grad_on_gpu(case, p16):
    """Unit normal inputs, scale 1/sqrt(head). Rounding p and ds to 16 bits (p16) makes
    each term of a gradient's sum off by up to 2^-(mantissa+1) of its size; split p (two
    fragments, 16 bits and more) and f32 sums stay within 2^-13 of the terms' magnitudes."""
    text = attention_grad(*SHAPES[case])
    args = inputs(case)
    want = strata.interpret(text, *args)
    got = strata.compile(text, target="cuda", allow_16bit_attention_p=p16)(*args)
    mantissa = 10 if SHAPES[case][3] == "f16" else 7
    assert_within(case, args, want, got, 2.0 ** -(mantissa + 1) if p16 else 2.0**-13)


@needs_gpu
def test_gradient_of_a_bf16_attention_block_on_gpu_matches_the_reference():
    """End to end: strata.grad of a loss over bf16 attention takes the flash kernels on the GPU."""
    text = attention_loss((2, 2, 96, 32), "bf16", True)
    rng = np.random.default_rng(3)
    args = [rng.standard_normal((2, 2, 96, 32), dtype=np.float32).astype(NUMPY_DTYPES["bf16"]) for _ in range(3)]
    want = strata.grad(text, argnums=(0, 1, 2), target="reference")(*args)
    got = strata.grad(text, argnums=(0, 1, 2), target="cuda")(*args)
    for w, g in zip(want, got):
        w, g = np.asarray(w, np.float64), np.asarray(g, np.float64)
        assert np.abs(g - w).max() <= 2.0**-5 * np.abs(w).max()
