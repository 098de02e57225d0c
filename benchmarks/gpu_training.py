"""GPT-2 training step on the GPU: Strata vs PyTorch eager doing the same step.

    python benchmarks/gpu_training.py                          # GPT-2 small, bf16, 8 x 1024
    python benchmarks/gpu_training.py --config tiny --batch 2 --seq 64 --dtype f32
    python benchmarks/gpu_training.py --profile               # and each kernel's time

Strata's step is the module DSL's std GPT2 with a cross-entropy loss (next-token labels),
differentiated by autodiff and fused with an SGD update (momentum 0, as PyTorch's default,
its zero velocity state passed in) into one `@train_step` program
(`strata.training.build_train_step`), compiled for CUDA; the timing is the compiled
program's device work (`executable.run`: inputs and params already on the device,
results left there), median of --repeat calls. PyTorch's step is `GPT2LMHeadModel` in the
same dtype on the same card: forward with labels, backward, `torch.optim.SGD.step()` and
`zero_grad(set_to_none=True)`, timed with torch.cuda.synchronize() around each step.
Both use the tanh GELU, no dropout, tied embeddings. Ratios t(torch) / t(strata): above 1,
Strata is faster. The first losses of both are printed (same weights) as a check.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from common import timeit

CONFIGS = {"small": dict(d_model=768, n_layers=12, num_heads=12), "tiny": dict(d_model=64, n_layers=2, num_heads=4)}

LOSS = """
from std.models import GPT2

model GPT2Loss(vocab: int, positions: int, d_model: int, n_layers: int, num_heads: int):
  params:
    lm: GPT2(vocab_size=vocab, n_positions=positions, d_model=d_model, n_layers=n_layers, num_heads=num_heads)
  forward:
    inputs:
      ids: [B, T, int32]
      labels: [N, int32]
    out: []
    graph:
      ids -> lm -> view([N, vocab]) -> logits
      (logits, labels) -> cross_entropy() -> out
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", choices=list(CONFIGS), default="small")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--dtype", choices=["bf16", "f32"], default="bf16")
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--profile", action="store_true", help="also time each of Strata's kernels (gpu_profile.py)")
    args = p.parse_args()

    import ml_dtypes
    import torch
    import transformers
    from numba import cuda

    import strata
    from strata.training import build_train_step

    config = CONFIGS[args.config]
    vocab, positions = 50257, 1024
    storage = ml_dtypes.bfloat16 if args.dtype == "bf16" else np.float32
    torch_dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, GPT-2 {args.config} "
          f"{args.batch}x{args.seq} {args.dtype}, SGD lr {args.lr}")

    hf_config = transformers.GPT2Config(vocab_size=vocab, n_positions=positions, n_embd=config["d_model"],
                                        n_layer=config["n_layers"], n_head=config["num_heads"], resid_pdrop=0.0,
                                        embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(hf_config).cuda().to(torch_dtype).train()
    program = strata.dsl.load(LOSS)
    module = program.instantiate("GPT2Loss", dtype=args.dtype, vocab=vocab, positions=positions, **config,
                                 B=args.batch, T=args.seq, N=args.batch * args.seq)
    params = program.import_hf("GPT2", {k: v.float() for k, v in model.state_dict().items()},
                               vocab_size=vocab, n_positions=positions, **config)

    start = time.perf_counter()
    optimizer_strata = strata.SGD(lr=args.lr, momentum=0.0)
    step_module, names, _ = build_train_step(module, optimizer_strata)
    exe = strata.compile(step_module, target="cuda", entry="train_step").run
    print(f"strata compile {time.perf_counter() - start:.1f} s, {len(exe.launches)} kernels")

    rng = np.random.default_rng(0)
    ids = rng.integers(0, vocab, (args.batch, args.seq)).astype(np.int32)
    labels = np.roll(ids, -1, 1).reshape(-1).astype(np.int32)
    weights = [params[name.removeprefix("lm.")].astype(storage) for name in names]
    state = [np.zeros_like(w) for w in weights for _ in optimizer_strata.state_names]
    hyper = [np.array(v, storage) for v in optimizer_strata.hyper_parameters(1).values()]
    exe.set_inputs(*weights, *state, *hyper, ids, labels)
    exe.launch()
    first = float(exe.get_results()[0])

    def torch_step() -> torch.Tensor:
        out = model(torch.from_numpy(ids).long().cuda(), labels=torch.from_numpy(ids).long().cuda())
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return out.loss

    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    torch_loss = float(torch_step())
    print(f"first loss: strata {first:.4f}, torch {torch_loss:.4f}")
    strata_ms = timeit(lambda: (exe.launch(), cuda.synchronize()), args.repeat, warmup=1) * 1e3
    torch_ms = timeit(lambda: (torch_step(), torch.cuda.synchronize()), args.repeat, warmup=1) * 1e3
    print(f"train step  strata {strata_ms:8.2f} ms  torch eager {torch_ms:8.2f} ms  ratio {torch_ms / strata_ms:5.2f}x")
    if args.profile:
        from gpu_profile import profile

        profile(exe)


if __name__ == "__main__":
    main()
