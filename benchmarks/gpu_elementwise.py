"""GPU elementwise benchmark: an 8-op fused chain as one Strata kernel vs copy bandwidth and PyTorch.

    python benchmarks/gpu_elementwise.py [--sizes 24 26] [--repeat 50] [--json out.json]

out = tanh(exp(-relu((a + b) * a - b)) + a) on f32 vectors of 2^k elements: fuse-elementwise
makes it one kernel reading a and b once and writing out once (12 bytes per element). Kernel
time is measured with CUDA events over `repeat` launches on inputs already on the device
(CudaExecutable.launch, no host copies). Reported in the same run:

- Strata GB/s = 12 * n / time;
- device-to-device copy bandwidth (read + write bytes / time) of a buffer of the same size,
  measured with torch `dst.copy_(src)` and Numba's device-to-device copy;
- PyTorch eager on the same expression (8 kernels), its time and effective GB/s (the same
  12 * n bytes, so the ratio is the speedup).
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np


def chain_text(n: int) -> str:
    t = f"tensor<{n}xf32>"
    return f"""func.func @chain(%a: {t}, %b: {t}) -> {t} {{
  %0 = "graph.add"(%a, %b) : ({t}, {t}) -> {t}
  %1 = "graph.mul"(%0, %a) : ({t}, {t}) -> {t}
  %2 = "graph.sub"(%1, %b) : ({t}, {t}) -> {t}
  %3 = "graph.relu"(%2) : ({t}) -> {t}
  %4 = "graph.neg"(%3) : ({t}) -> {t}
  %5 = "graph.exp"(%4) : ({t}) -> {t}
  %6 = "graph.add"(%5, %a) : ({t}, {t}) -> {t}
  %7 = "graph.tanh"(%6) : ({t}) -> {t}
  func.return %7 : {t}
}}
"""


def time_events(cuda, fn, repeat: int) -> float:
    """Mean seconds per call over `repeat` calls, timed with CUDA events (after 3 warm-ups)."""
    for _ in range(3):
        fn()
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    start.record()
    for _ in range(repeat):
        fn()
    end.record()
    end.synchronize()
    return cuda.event_elapsed_time(start, end) / 1e3 / repeat


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", type=int, nargs="+", default=[24, 26], help="log2 of the element counts")
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--json", help="write the results here")
    args = p.parse_args(argv)

    from numba import cuda

    import strata

    device = cuda.get_current_device()
    name = device.name.decode() if isinstance(device.name, bytes) else str(device.name)
    try:
        import torch
    except ImportError:
        torch = None
    print(f"device: {name}, compute capability {device.compute_capability}; torch: {torch.__version__ if torch else 'absent'}")
    rows = []
    for k in args.sizes:
        n = 1 << k
        rng = np.random.default_rng(k)
        a = rng.standard_normal(n, dtype=np.float32)
        b = rng.standard_normal(n, dtype=np.float32)
        text = chain_text(n)
        exe = strata.compile(text, target="cuda").run
        assert len(exe.launches) == 1, "the chain should be one fused kernel"
        got = exe(a, b)[0]
        want = np.tanh(np.exp(-np.maximum((a + b) * a - b, 0)) + a)
        max_error = float(np.max(np.abs(got - want)))
        exe.set_inputs(a, b)
        strata_s = time_events(cuda, exe.launch, args.repeat)
        nbytes = 12 * n
        row = {"n": n, "log2n": k, "max_abs_error_vs_numpy": max_error, "strata_ms": strata_s * 1e3,
               "strata_GBps": nbytes / strata_s / 1e9, "grid": exe.launches[0][2], "block": exe.launches[0][3]}

        src = cuda.to_device(a)
        dst = cuda.device_array_like(src)
        numba_copy = time_events(cuda, lambda src=src, dst=dst: dst.copy_to_device(src), args.repeat)
        row["numba_copy_GBps"] = 2 * 4 * n / numba_copy / 1e9
        if torch is not None:
            ta = torch.from_numpy(a).cuda()
            tb = torch.from_numpy(b).cuda()
            tdst = torch.empty_like(ta)

            def torch_time(fn):
                for _ in range(3):
                    fn()
                torch.cuda.synchronize()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(args.repeat):
                    fn()
                end.record()
                torch.cuda.synchronize()
                return start.elapsed_time(end) / 1e3 / args.repeat

            copy_s = torch_time(lambda: tdst.copy_(ta))
            row["torch_copy_GBps"] = 2 * 4 * n / copy_s / 1e9
            eager = lambda: torch.tanh(torch.exp(-torch.relu((ta + tb) * ta - tb)) + ta)  # noqa: E731
            torch_s = torch_time(eager)
            row["torch_eager_ms"] = torch_s * 1e3
            row["torch_eager_GBps"] = nbytes / torch_s / 1e9
            row["speedup_vs_torch_eager"] = torch_s / strata_s
            row["torch_max_abs_diff"] = float((eager().cpu().numpy() - got).__abs__().max())
            del ta, tb, tdst
        copy_bw = row.get("torch_copy_GBps", row["numba_copy_GBps"])
        row["strata_fraction_of_copy"] = row["strata_GBps"] / copy_bw
        rows.append(row)
        print(json.dumps(row))
        del exe, src, dst
    print()
    print("| n | Strata ms | Strata GB/s | copy GB/s (torch / numba) | % of copy | torch eager ms | speedup |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| 2^{r['log2n']} | {r['strata_ms']:.3f} | {r['strata_GBps']:.0f} | "
              f"{r.get('torch_copy_GBps', float('nan')):.0f} / {r['numba_copy_GBps']:.0f} | "
              f"{100 * r['strata_fraction_of_copy']:.0f}% | {r.get('torch_eager_ms', float('nan')):.3f} | "
              f"{r.get('speedup_vs_torch_eager', float('nan')):.2f}x |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": name, "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
