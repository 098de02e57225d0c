"""Tile shapes for tensor-core matmuls: bf16 matmuls under pipeline variants
(lower-graph-to-tile's matmul_16bit_scale and matmul_k, lower-tile-to-gpu's mma_block_size
and mma_stages) against torch.matmul (cuBLAS), same card, same run. The GPU pipeline's
defaults come from here.

    python benchmarks/gpu_matmul_tiles.py [--sizes 2048 4096 8192x3072x768] [--variants 2:128:32:4 2:256:64:4:w]

A size is n (n^3) or MxKxN. A variant is scale:threads:k:stages, or scale:threads:k:stages:w
for the warpgroup mma (wgmma, sm_90 only), :w256 with 128 x 256 tiles (where they pay:
graph_to_tile/matmul.py); a last :once runs one tile per block instead of persistent blocks. Times are CUDA-event means (see gpu_kernels.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def pipeline(variant: str) -> str:
    """The GPU pipeline of a variant scale:threads:k:stages, with `:w` the warpgroup mma
    (sm_90; its block size is two threads per tile row, `threads` is then unused),
    `:wN` that with n tiles of N (matmul_16bit_n), and a last `:once` one tile per block
    (no persistent blocks)."""
    scale, threads, k, stages, *warpgroup = variant.split(":")
    persistent = "false" if warpgroup and warpgroup[-1] == "once" else "true"
    wgmma = "true" if warpgroup and warpgroup[0].startswith("w") else "false"
    columns = int(warpgroup[0][1:] or 0) if wgmma == "true" else 0
    return (
        "fuse-patterns,canonicalize,cse,fuse-elementwise,"
        f"lower-graph-to-tile{{tile_elements=2048 matmul_m=64 matmul_n=64 matmul_k={k} matmul_16bit_k={k} dot_k=32 "
        f"matmul_bytes=49152 matmul_min_tiles=132 pretranspose_rows=256 matmul_16bit_scale={scale} matmul_16bit_n={columns} "
        "fused_attention=false},token-dce,dedupe-kernels,"
        f"lower-tile-to-gpu{{mma_block_size={threads} mma_stages={stages} warpgroup_mma={wgmma} persistent_matmuls={persistent}}},"
        "plan-memory,verify-memory-plan"
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", nargs="+", default=["2048", "4096", "8192"])
    p.add_argument("--variants", nargs="+", default=["2:128:32:4", "2:256:64:4:w", "2:256:64:3:w256", "2:256:64:4:w256"])
    p.add_argument("--repeat", type=int, default=20)
    args = p.parse_args(argv)

    import ml_dtypes
    import torch
    from numba import cuda

    import strata
    from gpu_kernels import event_time
    from strata.targets.cuda import GpuPipelinePass

    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}")
    rng = np.random.default_rng(0)
    default_steps = GpuPipelinePass.STEPS
    for size in args.sizes:
        m, kdim, n = (int(d) for d in size.split("x")) if "x" in size else (int(size),) * 3
        flops = 2 * m * kdim * n
        a = rng.standard_normal((m, kdim), dtype=np.float32).astype(ml_dtypes.bfloat16)
        b = rng.standard_normal((kdim, n), dtype=np.float32).astype(ml_dtypes.bfloat16)
        ta, tb = (torch.from_numpy(x.astype(np.float32)).cuda().to(torch.bfloat16) for x in (a, b))
        want = torch.matmul(ta, tb).float().cpu().numpy()
        t = event_time(lambda: torch.cuda.Event(enable_timing=True), torch.cuda.synchronize,
                       lambda x, y: x.elapsed_time(y), lambda: torch.matmul(ta, tb), args.repeat) / 1e0
        print(f"bf16 {m}x{kdim}x{n} torch {t * 1e3:8.4f} ms {flops / t / 1e12:6.1f} TFLOP/s")
        for variant in args.variants:
            GpuPipelinePass.STEPS = pipeline(variant)
            try:
                g = strata.Graph("matmul")
                g.output(g.input("a", (m, kdim), "bf16") @ g.input("b", (kdim, n), "bf16"))
                exe = strata.compile(g.build(), target="cuda").run
                got = exe(a, b)[0].astype(np.float32)
                error = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
                exe.set_inputs(a, b)
                s = event_time(cuda.event, cuda.synchronize, cuda.event_elapsed_time, exe.launch, args.repeat)
                print(f"  {variant:10} strata {s * 1e3:8.4f} ms {flops / s / 1e12:6.1f} TFLOP/s  "
                      f"{t / s:5.2f} of cuBLAS  max rel err {error:.1e}")
            finally:
                GpuPipelinePass.STEPS = default_steps
    return 0


if __name__ == "__main__":
    sys.exit(main())
