"""GPT-2 forward (transformers, random weights): Strata vs PyTorch eager and torch.compile.

    python benchmarks/gpt2.py --target cpu --batch 1 8 --seq 128 --repeat 5      # 2 CPU threads
    python benchmarks/gpt2.py --target cuda --batch 1 8 --seq 1024               # H100 / H200
    python benchmarks/gpt2.py --config tiny --no-inductor --json out.json

The model is `GPT2LMHeadModel(GPT2Config(use_cache=False))` (GPT-2 small's shape, 124M
parameters; `--config tiny`: 2 layers, 32 wide), random weights, eval mode, f32. For each
(batch, seq), in one process:

- strata compile s: wall time of `strata.compile_torch` (export, import, lower, LLVM/PTX):
  "cold" is the first compile of that shape, "warm" a second `compile_torch` of the same
  model and shape in the same process, which reuses Strata's in-process kernel cache (the
  export, import and lowering run again). Strata's on-disk cache is off for this script
  (STRATA_CACHE=0, set before Strata loads), so "cold" is cold in every run.
- inductor compile s: `torch.compile(model, dynamic=False)`'s first call (trace, Inductor
  codegen, C++/Triton compile, one run), after `torch._dynamo.reset()`; "warm" is the first
  call of a second `torch.compile` after another reset, which hits Inductor's caches. The
  script points `TORCHINDUCTOR_CACHE_DIR` at a fresh temporary directory, so "cold" starts
  from empty caches; Inductor's "warm" includes its on-disk FX-graph and code caches.
- run ms: median of `--repeat` calls after `--warmup` calls; ratios t(baseline) / t(strata):
  above 1, Strata is faster.
- max rel diff: max |strata - eager| / max |eager| over the logits.

CPU: PyTorch gets `--threads` threads (torch.set_num_threads, default 2); Strata's runtime
splits large launches over `strata.get_num_threads()` threads (STRATA_NUM_THREADS, default
`os.cpu_count()`), printed in the header. Both run their threads as OpenMP teams, and
OMP_WAIT_POLICY (PASSIVE unless set) applies to both. Strata is called through
`compile_torch`'s result with CPU tensors (zero-copy views).

CUDA: eager and inductor run on `model.cuda()` with device input ids, timed with
torch.cuda.synchronize() around each call; PyTorch's TF32 is off (Strata computes f32).
compile_torch(target="cuda") uploads the weights once, but its call returns host tensors
(the [batch, seq, 50257] f32 logits, 206 MB a sequence of 1024, copied back each call),
so "strata ms" is the compiled program's `executable.run_on_device(ids, *params)` on
device ids (results left on the device, like PyTorch's; it synchronizes and checks the
kernels' status), and "strata call ms" is compile_torch's own call with CPU ids (input
upload and logits download included).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time
import traceback

import numpy as np

# Inductor's caches start empty (set before torch is imported): "cold" means cold.
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="strata-gpt2-inductor-"))
# PyTorch's OpenMP threads spin-wait by default: on shared, oversubscribed cores that made
# tiny GPT-2's eager forward 100x slower with 2 threads than with 1 (170 vs 1.4 ms at load
# 7 on 2 cores); passive waiting gives 1.5 ms. Read when torch loads; an explicit value wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("STRATA_CACHE", "0")

from common import print_header, print_table  # noqa: E402
from gpt2_accuracy import make_model  # noqa: E402


def median_time(fn, repeat: int, warmup: int, sync=lambda: None) -> float:
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def short(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:100] if text else ''}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--batch", nargs="+", type=int, default=[1, 8])
    p.add_argument("--seq", nargs="+", type=int, help="default 128 on cpu, 1024 on cuda")
    p.add_argument("--config", choices=("small", "tiny"), default="small")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--threads", type=int, default=2, help="PyTorch's CPU threads")
    p.add_argument("--no-inductor", action="store_true", help="skip torch.compile")
    p.add_argument("--no-warm", action="store_true", help="skip the warm (second) compiles")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dtype", choices=("f32", "bf16"), default="f32",
                   help="bf16: the model's weights (and so its activations) in bf16, for both")
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args(argv)
    seqs = args.seq or ([1024] if args.target == "cuda" else [128])

    import torch

    import strata

    torch.set_num_threads(args.threads)
    cuda = args.target == "cuda"
    if cuda and not torch.cuda.is_available():
        sys.exit("--target cuda: torch.cuda is not available")
    sync = torch.cuda.synchronize if cuda else (lambda: None)

    print_header(f"GPT-2 ({args.config}) forward, f32, target {args.target}")
    if cuda:
        device_name = torch.cuda.get_device_name()
        torch.backends.cuda.matmul.allow_tf32 = False  # f32 both sides (Strata has no TF32)
        torch.backends.cudnn.allow_tf32 = False
        print(f"device: {device_name}; PyTorch TF32 off")
    else:
        device_name = "cpu"
        print(f"threads: torch {torch.get_num_threads()}, strata {strata.get_num_threads()} "
              f"(OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']} for both)")
    print(f"torch {torch.__version__}; inductor cache {os.environ['TORCHINDUCTOR_CACHE_DIR']}")

    model, config = make_model(args.config, args.seed)
    if args.dtype == "bf16":
        model = model.to(torch.bfloat16)
    print(f"model: {sum(q.numel() for q in model.parameters()) / 1e6:.1f}M parameters, "
          f"{config.n_layer} layers, {config.n_embd} wide; repeat {args.repeat}, warm-up {args.warmup}")  # fmt: skip
    # The torch baselines run on their own copy (on the GPU for cuda); Strata's compiled
    # program keeps numpy views of the CPU model's parameters.
    torch_model = copy.deepcopy(model).cuda() if cuda else model

    rows, notes = [], []
    for batch in args.batch:
        for seq in seqs:
            print(f"\n== batch {batch}, seq {seq}", flush=True)
            generator = torch.Generator().manual_seed(args.seed + 1000 * batch + seq)
            ids = torch.randint(0, config.vocab_size, (batch, seq), generator=generator)
            ids_dev = ids.cuda() if cuda else ids
            row = {"batch": batch, "seq": seq, "device": device_name}

            def eager():
                with torch.no_grad():
                    return torch_model(ids_dev).logits

            want = eager().float().cpu()
            row["eager_ms"] = median_time(eager, args.repeat, args.warmup, sync) * 1e3
            print(f"eager: {row['eager_ms']:.2f} ms", flush=True)

            # Strata: cold compile, warm compile (in-process cache), run
            try:
                start = time.perf_counter()
                compiled = strata.compile_torch(model, (ids,), target=args.target)
                row["strata_compile_s"] = time.perf_counter() - start
                print(f"strata compile (cold): {row['strata_compile_s']:.1f} s", flush=True)
                if not args.no_warm:
                    start = time.perf_counter()
                    compiled = strata.compile_torch(model, (ids,), target=args.target)
                    row["strata_compile_warm_s"] = time.perf_counter() - start
                    print(f"strata compile (warm, same process): {row['strata_compile_warm_s']:.1f} s", flush=True)
                if cuda:
                    # compile_torch's parameters (numpy, or already device arrays), on the GPU once
                    params = [torch.from_numpy(a).cuda() if isinstance(a, np.ndarray) else a for a in compiled.params]
                    executable = compiled.executable

                    def run_strata():
                        return executable.run_on_device(ids_dev, *params)

                    got = torch.from_numpy(run_strata()[0].copy_to_host().astype(np.float32))
                    row["strata_call_ms"] = median_time(lambda: compiled(ids), max(1, args.repeat // 2), 1) * 1e3
                    print(f"strata compile_torch call (logits copied to the host): {row['strata_call_ms']:.2f} ms")
                else:

                    def run_strata():
                        return compiled(ids).logits

                    got = run_strata()
                row["max_rel_diff"] = float((got.float() - want).abs().max() / want.abs().max())
                row["strata_ms"] = median_time(run_strata, args.repeat, args.warmup, sync) * 1e3
                print(f"strata: {row['strata_ms']:.2f} ms, max rel diff {row['max_rel_diff']:.2e}", flush=True)
            except Exception as error:  # noqa: BLE001 - report and go on with the baselines
                traceback.print_exc()
                row["strata_error"] = short(error)
                notes.append(f"batch {batch} seq {seq}: strata failed: {row['strata_error']}")

            # torch.compile (inductor): cold and warm first calls, then run time
            if args.no_inductor:
                row["inductor_error"] = "skipped (--no-inductor)"
            else:
                try:
                    for key in ("inductor_compile_s", "inductor_compile_warm_s"):
                        if key.endswith("warm_s") and args.no_warm:
                            break
                        torch._dynamo.reset()
                        optimized = torch.compile(torch_model, dynamic=False)
                        start = time.perf_counter()
                        with torch.no_grad():
                            optimized(ids_dev)
                        sync()
                        row[key] = time.perf_counter() - start
                        print(f"inductor first call ({key}): {row[key]:.1f} s", flush=True)

                    def run_inductor():
                        with torch.no_grad():
                            return optimized(ids_dev).logits

                    row["inductor_ms"] = median_time(run_inductor, args.repeat, args.warmup, sync) * 1e3
                    row["inductor_max_rel_diff"] = float(
                        (run_inductor().float().cpu() - want).abs().max() / want.abs().max())  # fmt: skip
                    print(f"inductor: {row['inductor_ms']:.2f} ms", flush=True)
                except Exception as error:  # noqa: BLE001 - no C++ compiler, unsupported, ...
                    traceback.print_exc()
                    row["inductor_error"] = short(error)
                    notes.append(f"batch {batch} seq {seq}: torch.compile n/a: {row['inductor_error']}")
            rows.append(row)

    def cell(row, key, scale=1.0):
        return row[key] * scale if key in row else "n/a"

    def ratio(row, key):
        return row[key] / row["strata_ms"] if key in row and "strata_ms" in row else "n/a"

    print()
    print(f"## run time ({device_name}; ratio = t(baseline) / t(strata), above 1: Strata faster)")
    headers = ["batch", "seq", "strata ms", "eager ms", "eager/strata", "inductor ms", "inductor/strata",
               "max rel diff"]  # fmt: skip
    if cuda:
        headers.insert(3, "strata call ms")
    table = []
    for r in rows:
        line = [r["batch"], r["seq"], cell(r, "strata_ms"), cell(r, "eager_ms"), ratio(r, "eager_ms"),
                cell(r, "inductor_ms"), ratio(r, "inductor_ms"),
                f"{r['max_rel_diff']:.2e}" if "max_rel_diff" in r else "n/a"]  # fmt: skip
        if cuda:
            line.insert(3, cell(r, "strata_call_ms"))
        table.append(line)
    print_table(headers, table)
    print()
    print("## compile time, s (cold: first in the process; warm: again in the same process)")
    print_table(
        ["batch", "seq", "strata cold", "strata warm", "inductor cold", "inductor warm", "inductor cold / strata cold"],
        [[r["batch"], r["seq"], cell(r, "strata_compile_s"), cell(r, "strata_compile_warm_s"),
          cell(r, "inductor_compile_s"), cell(r, "inductor_compile_warm_s"),
          r["inductor_compile_s"] / r["strata_compile_s"]
          if "inductor_compile_s" in r and "strata_compile_s" in r else "n/a"] for r in rows],
    )  # fmt: skip
    notes.append("Strata's warm compile is its in-process kernel cache only: its on-disk cache is off here "
                 "(STRATA_CACHE=0), so every run compiles cold.")  # fmt: skip
    if not args.no_inductor:
        notes.append("inductor's cold compile starts from an empty TORCHINDUCTOR_CACHE_DIR; its warm one "
                     "(after torch._dynamo.reset()) reuses Inductor's in-memory and on-disk caches.")  # fmt: skip
    if cuda:
        notes.append("strata ms on cuda = executable.run_on_device on device ids, logits left on the GPU; "
                     "strata call ms = compile_torch's call with CPU ids, logits copied to the host.")  # fmt: skip
    print("\nnotes:")
    for note in dict.fromkeys(notes):
        print(f"- {note}")
    print(f"1-min load average at the end: {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"target": args.target, "config": args.config, "device": device_name,
                       "load_end": os.getloadavg()[0], "argv": sys.argv, "rows": rows}, f, indent=1)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
