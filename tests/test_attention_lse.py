"""graph.attention_lse (attention that also gives each query row's log-sum-exp) and the
attention gradient reading it: share-attention-lse pairs them on the GPU, whose flash
forward then stores L and whose backward computes D alone instead of a pass over the keys.
Without a GPU: the op on the reference and the CPU (fused kernel, three kernels plus the
expansion), the pairing, the kernels it leaves, the marked kernels' bodies on the CPU
against the reference, ptxas for mma.sync and wgmma. With a GPU: results against the
reference at odd sizes, both p modes."""

from __future__ import annotations

import numpy as np
import pytest

import strata
from strata.dialects import graph, tile
from strata.support.dtypes import NUMPY_DTYPES
from strata.targets.cuda import GpuPipelinePass
from strata.targets.passes import run_pipeline
from targets import compile_for_test, ptxas
from test_flash_attention_grad import flash_bodies_on_the_cpu
from test_gpu import needs_gpu, needs_ptx_tools


def ttype(shape, dtype: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{dtype}>"


def attention_lse(q, k, v, dtype: str, causal: bool) -> str:
    """@main(q, k, v) -> (out, lse) as one graph.attention_lse."""
    out, lse = (*q[:-1], v[-1]), q[:-1]
    types = ", ".join(ttype(s, dtype) for s in (q, k, v))
    results = f"{ttype(out, dtype)}, {ttype(lse, 'f32')}"
    return (
        f"func.func @main(%q: {ttype(q, dtype)}, %k: {ttype(k, dtype)}, %v: {ttype(v, dtype)}) -> ({results}) {{\n"
        f"  %o, %l = graph.attention_lse %q, %k, %v {{scale = {1 / np.sqrt(q[-1]):.17g} : f64, "
        f"causal = {str(causal).lower()}}} : ({types}) -> ({results})\n"
        f"  func.return %o, %l : {results}\n}}\n"
    )


def forward_and_backward(q, k, v, dtype: str, causal: bool) -> str:
    """@main(q, k, v, dout) -> (out, dq, dk, dv): an attention and its gradient, as a
    training step's program has them."""
    out = (*q[:-1], v[-1])
    scale = f"{{scale = {1 / np.sqrt(q[-1]):.17g} : f64, causal = {str(causal).lower()}}}"
    ins = ", ".join(ttype(s, dtype) for s in (q, k, v))
    grads = ", ".join(ttype(s, dtype) for s in (q, k, v))
    results = f"{ttype(out, dtype)}, {grads}"
    return (
        f"func.func @main(%q: {ttype(q, dtype)}, %k: {ttype(k, dtype)}, %v: {ttype(v, dtype)}, "
        f"%do: {ttype(out, dtype)}) -> ({results}) {{\n"
        f"  %o = graph.attention %q, %k, %v {scale} : ({ins}) -> {ttype(out, dtype)}\n"
        f"  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {scale} "
        f": ({ins}, {ttype(out, dtype)}, {ttype(out, dtype)}) -> ({grads})\n"
        f"  func.return %o, %dq, %dk, %dv : {results}\n}}\n"
    )


CASES = {
    "tiny-3x17x16-causal-bf16": ((3, 17, 16), (3, 17, 16), (3, 17, 16), "bf16", True),
    "cross-70x130-v32-f16": ((2, 70, 64), (2, 130, 64), (2, 130, 32), "f16", False),
    "heads-2x2x150x64-causal-bf16": ((2, 2, 150, 64), (2, 2, 150, 64), (2, 2, 150, 64), "bf16", True),
    "head-128-causal-queries-past-keys-bf16": ((1, 100, 128), (1, 40, 128), (1, 40, 128), "bf16", True),
}


def arguments(shapes, dtype: str, seed: int = 4) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s, dtype=np.float32).astype(NUMPY_DTYPES[dtype]) for s in shapes]


def case_arguments(case: str) -> list[np.ndarray]:
    q, k, v, dtype, _ = CASES[case]
    return arguments((q, k, v, (*q[:-1], v[-1])), dtype)


def log_sum_exp(q: np.ndarray, k: np.ndarray, causal: bool) -> np.ndarray:
    q, k = q.astype(np.float64), k.astype(np.float64)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        scores = np.where(np.arange(k.shape[-2])[None, :] > np.arange(q.shape[-2])[:, None], -np.inf, scores)
    largest = scores.max(-1, keepdims=True)
    return (largest + np.log(np.exp(scores - largest).sum(-1, keepdims=True)))[..., 0]


@pytest.mark.parametrize(
    "q, k, v, dtype, causal",
    [((2, 7, 16), (2, 9, 16), (2, 9, 8), "f32", False), ((3, 33, 8), (3, 33, 8), (3, 33, 8), "f64", True),
     ((1, 17, 16), (1, 17, 16), (1, 17, 16), "bf16", True), ((1, 5, 256), (1, 6, 256), (1, 6, 256), "f32", True)],
    ids=["f32-cross", "f64-causal", "bf16-causal", "f32-head-256-three-kernels"],
)  # fmt: skip
def test_attention_lse_on_the_cpu_matches_the_reference(q, k, v, dtype, causal):
    """The fused kernel stores L beside out; past its tile budget (head 256 in f32) the
    three kernels run and L is the expansion's."""
    text = attention_lse(q, k, v, dtype, causal)
    args = arguments((q, k, v), dtype)
    want_out, want_lse = strata.interpret(text, *args)
    assert want_lse.dtype == np.float32
    np.testing.assert_allclose(want_lse, log_sum_exp(*args[:2], causal), rtol=1e-5, atol=1e-5)
    got_out, got_lse = compile_for_test(text)(*args)
    tolerance = 2e-2 if dtype == "bf16" else 1e-5
    np.testing.assert_allclose(got_lse, want_lse, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_out.astype(np.float64), want_out.astype(np.float64), rtol=tolerance, atol=tolerance)


def attention_grad_text(q, k, v, dtype: str, with_lse: bool) -> str:
    """@main(q, k, v, out, dout[, lse]) -> (dq, dk, dv) as one causal graph.attention_grad."""
    out = (*q[:-1], v[-1])
    lse_type = ttype(q[:-1], "f32")
    ins = ", ".join(ttype(s, dtype) for s in (q, k, v, out, out)) + (f", {lse_type}" if with_lse else "")
    grads = ", ".join(ttype(s, dtype) for s in (q, k, v))
    return (
        f"func.func @main(%q: {ttype(q, dtype)}, %k: {ttype(k, dtype)}, %v: {ttype(v, dtype)}, %o: {ttype(out, dtype)}, "
        f"%do: {ttype(out, dtype)}{f', %l: {lse_type}' if with_lse else ''}) -> ({grads}) {{\n"
        f"  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do{' lse %l' if with_lse else ''} "
        f"{{scale = {1 / np.sqrt(q[-1]):.17g} : f64, causal = true}} : ({ins}) -> ({grads})\n"
        f"  func.return %dq, %dk, %dv : {grads}\n}}\n"
    )


def test_attention_grad_reads_the_lse_it_is_given():
    """With lse, the probabilities are exp(s - lse): the forward's L gives the gradient
    without lse (the reference; the CPU's expansion); an L off by log 2 halves every
    probability, and with them dv."""
    q, k, v = (2, 9, 8), (2, 11, 8), (2, 11, 4)
    out = (*q[:-1], v[-1])
    text = attention_grad_text(q, k, v, "f64", with_lse=True)
    args = arguments((q, k, v, out, out), "f64")
    lse = log_sum_exp(args[0], args[1], True).astype(np.float32)
    without_lse = strata.interpret(attention_grad_text(q, k, v, "f64", with_lse=False), *args)
    for got in (strata.interpret(text, *args, lse), compile_for_test(text)(*args, lse)):
        for g, w in zip(got, without_lse):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    halved = strata.interpret(text, *args, lse + np.float32(np.log(2.0)))
    np.testing.assert_allclose(halved[2], without_lse[2] / 2, rtol=1e-5, atol=1e-6)


def gpu_tile_program(text: str):
    module = strata.parse_module(text)
    run_pipeline(module, GpuPipelinePass.STEPS.split(",token-dce")[0])
    return module


@pytest.mark.parametrize("case", list(CASES))
def test_the_gpu_pipeline_pairs_the_forward_and_its_gradient(case):
    """The forward's flash kernel takes a fifth buffer (L), the backward's first kernel
    computes D alone: no pass over the keys for the softmax's statistics."""
    module = gpu_tile_program(forward_and_backward(*CASES[case]))
    kernels = [op for op in module.ops if isinstance(op, tile.KernelOp)]
    forward = [kernel for kernel in kernels if "tile.flash_attention" in kernel.attributes]
    parts = [kernel.attributes["tile.flash_attention_grad"].data["part"].data for kernel in kernels
             if "tile.flash_attention_grad" in kernel.attributes]  # fmt: skip
    assert len(forward) == 1 and len(forward[0].body.block.args) == 5
    assert parts == ["dots", "dq", "dkv"]


def test_f32_attention_is_not_paired():
    module = strata.parse_module(forward_and_backward((1, 64, 16), (1, 64, 16), (1, 64, 16), "f32", True))
    run_pipeline(module, "expand-attention-grad{keep_flash=true widen_16bit=false},share-attention-lse")
    assert not any(isinstance(op, graph.AttentionLseOp) for op in module.walk())


@pytest.mark.parametrize("case", ["tiny-3x17x16-causal-bf16", "cross-70x130-v32-f16"])
def test_paired_flash_bodies_match_the_reference_on_the_cpu(case):
    """The marked kernels' bodies (the forward's L in rows padded to whole blocks, D
    alone, dq and dkv reading L) on the CPU, against the reference of the unpaired program."""
    text = forward_and_backward(*CASES[case])
    args = case_arguments(case)
    want = strata.interpret(text, *args)
    got = flash_bodies_on_the_cpu(text, pair=True)(*args)
    for w, g in zip(want, got):
        w, g = w.astype(np.float64), g.astype(np.float64)
        assert np.abs(g - w).max() <= 2.0**-6 * max(1.0, np.abs(w).max())


@needs_ptx_tools
@pytest.mark.parametrize("warpgroup", [False, True], ids=["mma-sync-sm_80", "wgmma-sm_90a"])
def test_paired_ptx_is_accepted_by_ptxas(warpgroup):
    from strata.lowering.nvvm.translate import module_to_ptx

    module = strata.parse_module(forward_and_backward(*CASES["heads-2x2x150x64-causal-bf16"]))
    run_pipeline(module, GpuPipelinePass(warpgroup_mma=warpgroup).steps())
    arch = "sm_90a" if warpgroup else "sm_80"
    ptx = module_to_ptx(module, arch)[1]
    entries = {entry.split("(")[0].strip(): entry for entry in ptx.split(".entry")[1:]}
    assert [name.split("_")[-2] for name in entries] == ["attention", "dots", "dq", "dkv"]
    forward = next(iter(entries.values()))
    assert forward.count("st.global.f32") == 2  # L of a lane's two rows, beside out's 16-bit stores
    ptxas(ptx, arch)


@needs_gpu
@pytest.mark.parametrize("p16", [False, True], ids=["p-split", "p16"])
@pytest.mark.parametrize("case", list(CASES))
def test_paired_attention_on_gpu_matches_the_reference(case, p16):
    text = forward_and_backward(*CASES[case])
    args = case_arguments(case)
    want = strata.interpret(text, *args)
    got = strata.compile(text, target="cuda", allow_16bit_attention_p=p16)(*args)
    for w, g in zip(want, got):
        w, g = w.astype(np.float64), g.astype(np.float64)
        assert np.abs(g - w).max() <= 2.0**-5 * max(1.0, np.abs(w).max())


@needs_gpu
@pytest.mark.parametrize("case", ["tiny-3x17x16-causal-bf16", "head-128-causal-queries-past-keys-bf16"])
def test_flash_forward_lse_on_gpu_matches_the_reference(case):
    q, k, v, dtype, causal = CASES[case]
    text = attention_lse(q, k, v, dtype, causal)
    args = arguments((q, k, v), dtype)
    want_out, want_lse = strata.interpret(text, *args)
    got_out, got_lse = strata.compile(text, target="cuda")(*args)
    np.testing.assert_allclose(got_lse, want_lse, rtol=1e-4, atol=1e-4)
    assert np.abs(got_out.astype(np.float64) - want_out.astype(np.float64)).max() <= 2.0**-6


def test_flash_forward_lse_bodies_match_the_reference_on_the_cpu():
    """The flash mark's body with L, returned from rows padded to whole blocks."""
    q, k, v, dtype, causal = CASES["heads-2x2x150x64-causal-bf16"]
    text = attention_lse(q, k, v, dtype, causal)
    args = arguments((q, k, v), dtype)
    want_out, want_lse = strata.interpret(text, *args)
    got_out, got_lse = flash_bodies_on_the_cpu(text)(*args)
    np.testing.assert_allclose(got_lse, want_lse, rtol=1e-5, atol=1e-5)
    assert np.abs(got_out.astype(np.float64) - want_out.astype(np.float64)).max() <= 2.0**-6
