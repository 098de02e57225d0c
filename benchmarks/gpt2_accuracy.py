"""GPT-2 through strata.compile_torch vs PyTorch eager: the logits' acceptance sweep.

    python benchmarks/gpt2_accuracy.py                                   # everything, CPU
    python benchmarks/gpt2_accuracy.py --config tiny --batch 1 8 --seq 1 17 128 1024
    python benchmarks/gpt2_accuracy.py --config small --batch 1 --seq 1 128 1024 --target cuda

The acceptance criterion: for GPT-2 small's configuration and a tiny one (2 layers, 2
heads, 32 wide, vocabulary 97, 1024 positions), random weights, eval mode, use_cache=False,
the logits are within `--tolerance` (1e-4) of PyTorch's relative to the logits' scale:
max |strata - torch| / max |torch| over the whole [batch, seq, vocab] tensor, for sequence
lengths from 1 to 1024 and batch 1 and 8. Prints one row per case and exits 1 if any fails
(a case that raises counts as failed, with its error in the table).

Each case compiles anew (static shapes: one compile per input shape); GPT-2 small takes
about a minute per shape on 2 CPU cores (20-45 s on an H200 host). `--target cuda` compiles
for the GPU and passes the CPU input ids (compile_torch uploads them, the weights once).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

from common import print_header, print_table

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see benchmarks/gpt2.py: spinning OpenMP threads on shared cores

CONFIGS = ("tiny", "small")
DEFAULT_BATCHES = (1, 8)
DEFAULT_SEQS = (1, 17, 128, 1024)


def make_config(name: str):
    from transformers import GPT2Config

    if name == "small":
        return GPT2Config(use_cache=False)  # 12 layers, 12 heads, 768 wide, 50257 tokens, 1024 positions
    if name == "tiny":
        return GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=97, n_positions=1024, use_cache=False,
                          bos_token_id=0, eos_token_id=0)  # fmt: skip
    raise ValueError(f"unknown config {name!r}")


def make_model(name: str, seed: int = 0):
    import torch
    from transformers import GPT2LMHeadModel

    torch.manual_seed(seed)
    config = make_config(name)
    return GPT2LMHeadModel(config).eval(), config


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", nargs="+", choices=CONFIGS, default=list(CONFIGS))
    p.add_argument("--batch", nargs="+", type=int, default=list(DEFAULT_BATCHES))
    p.add_argument("--seq", nargs="+", type=int, default=list(DEFAULT_SEQS))
    p.add_argument("--target", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--tolerance", type=float, default=1e-4)
    p.add_argument("--threads", type=int, default=2, help="PyTorch's CPU threads")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args(argv)

    import torch

    import strata

    torch.set_num_threads(args.threads)
    print_header(f"GPT-2 logits vs PyTorch eager, target {args.target}")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; tolerance {args.tolerance:g} "
          f"(max |diff| / max |logits|)")  # fmt: skip
    rows, failed = [], 0
    for name in args.config:
        model, config = make_model(name, args.seed)
        for batch in args.batch:
            for seq in args.seq:
                if seq > config.n_positions:
                    print(f"skip {name} seq {seq}: more than n_positions {config.n_positions}")
                    continue
                generator = torch.Generator().manual_seed(args.seed + 1000 * batch + seq)
                ids = torch.randint(0, config.vocab_size, (batch, seq), generator=generator)
                row = {"config": name, "batch": batch, "seq": seq, "compile_s": None, "max_rel_diff": None}
                try:
                    with torch.no_grad():
                        want = model(ids).logits
                    start = time.perf_counter()
                    compiled = strata.compile_torch(model, (ids,), target=args.target)
                    row["compile_s"] = time.perf_counter() - start
                    got = compiled(ids).logits
                    if got.shape != want.shape:
                        raise AssertionError(f"shape {tuple(got.shape)} vs {tuple(want.shape)}")
                    diff = float((got.float().cpu() - want).abs().max() / want.abs().max())
                    row["max_rel_diff"] = diff
                    row["ok"] = bool(diff <= args.tolerance)  # NaN fails
                except Exception as error:  # noqa: BLE001 - a failing case is a row, not the end
                    traceback.print_exc()
                    row["ok"] = False
                    row["error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:80] if str(error) else ''}"
                failed += not row["ok"]
                rows.append(row)
                diff, compile_s = row["max_rel_diff"], row["compile_s"]
                shown = "n/a" if diff is None else f"{diff:.2e}"
                took = "" if compile_s is None else f" (compile {compile_s:.1f} s)"
                print(f"{name} batch {batch} seq {seq}: {shown} {'pass' if row['ok'] else 'FAIL'}{took}", flush=True)
    print()
    print_table(
        ["config", "batch", "seq", "compile s", "max rel diff", "result"],
        [[r["config"], r["batch"], r["seq"], "n/a" if r["compile_s"] is None else r["compile_s"],
          "n/a" if r["max_rel_diff"] is None else f"{r['max_rel_diff']:.2e}",
          "pass" if r["ok"] else f"FAIL {r.get('error', '')}".strip()] for r in rows],
    )  # fmt: skip
    print(f"{len(rows) - failed} of {len(rows)} passed")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"target": args.target, "tolerance": args.tolerance, "rows": rows}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
