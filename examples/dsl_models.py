"""The module DSL end to end: a model written as modules, checked against Hugging Face,
trained, and a hand-written backward verified.

    python examples/dsl_models.py              # CPU; needs torch + transformers for step 2
    python examples/dsl_models.py --target cuda

1. A small Llama-style model from the standard library, plus a loss module written here.
2. Its weights imported from a random `transformers` LlamaForCausalLM through the model's
   `hf_mapping:`, and the logits compared with transformers' own.
3. A few training steps with `strata.Trainer` on the DSL loss (one compiled program).
4. A module with an explicit `backward:` graph, checked against autodiff and finite
   differences (`strata-dsl --verify-backward` does the same from the shell).
"""

from __future__ import annotations

import argparse

import numpy as np

import strata

SOURCE = """
from std.models import Llama

model LlamaLoss(vocab: int, d_model: int, layers: int, heads: int, kv_heads: int, d_ff: int):
  \"\"\"Next-token cross-entropy of a Llama-style decoder.\"\"\"
  params:
    lm: Llama(vocab_size=vocab, d_model=d_model, n_layers=layers, num_heads=heads,
              num_kv_heads=kv_heads, d_ff=d_ff)
  forward:
    inputs:
      ids: [B, T, int32]
      labels: [N, int32]
    out: []
    graph:
      ids -> lm -> view([N, vocab]) -> logits
      (logits, labels) -> cross_entropy() -> out

module ScaledTanh(d: int):
  \"\"\"y = tanh(x * w), with its backward written out.\"\"\"
  params:
    w: [d]
  forward:
    in: [N, d]
    out: [N, d]
    graph:
      (in, w) -> mul() -> z
      z -> tanh() -> out
    save: [in, out]
  backward:
    d_out: [N, d]
    graph:
      (saved.out, saved.out) -> mul() -> squared
      (d_out, squared) -> mul() -> lost
      (d_out, lost) -> sub() -> d_z
      (d_z, w) -> mul() -> d_in
      (d_z, saved.in) -> mul() -> reduce_sum(dims=[0]) -> d_w
"""

CONFIG = dict(vocab=64, d_model=32, layers=2, heads=4, kv_heads=2, d_ff=48)


def compare_with_transformers(program, target: str) -> dict[str, np.ndarray] | None:
    """Import a random transformers Llama into the DSL model; print the logits' difference."""
    try:
        import torch
        from transformers import LlamaConfig, LlamaForCausalLM
    except ImportError:
        print("2. skipped: needs torch and transformers")
        return None
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=CONFIG["vocab"], hidden_size=CONFIG["d_model"], num_hidden_layers=CONFIG["layers"],
                         num_attention_heads=CONFIG["heads"], num_key_value_heads=CONFIG["kv_heads"],
                         intermediate_size=CONFIG["d_ff"])
    hf_model = LlamaForCausalLM(config).eval()
    arguments = program.hf_arguments("Llama", config)
    params = program.import_hf("Llama", hf_model.state_dict(), **arguments)
    module = program.instantiate("Llama", B=2, T=8, **arguments)
    ids = np.random.default_rng(0).integers(0, CONFIG["vocab"], (2, 8)).astype(np.int32)
    (logits,) = strata.compile(module, target=target)(ids, *params.values())
    expected = hf_model(torch.tensor(ids, dtype=torch.long)).logits.detach().numpy()
    print(f"2. logits vs transformers: max |diff| {np.abs(logits - expected).max():.2e} "
          f"({len(params)} params imported through hf_mapping)")
    return {f"lm.{name}": value for name, value in params.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()

    program = strata.dsl.load(SOURCE)
    loss = program.instantiate("LlamaLoss", **CONFIG, B=4, T=16, N=64)
    function = loss.body.block.first_op
    names = [a.data["graph.name"].data for a in function.arg_attrs.data]
    print(f"1. LlamaLoss: {len(names) - 2} params, {sum(1 for _ in function.walk())} ops of graph IR")

    imported = compare_with_transformers(program, args.target)
    rng = np.random.default_rng(1)
    init = {name: (imported[name] if imported else rng.standard_normal(t.get_shape()) * 0.02).astype(np.float32)
            for name, t in zip(names[2:], function.function_type.inputs.data[2:])}
    trainer = strata.Trainer(loss, strata.Adam(lr=1e-2), init, target=args.target)
    start = rng.integers(0, CONFIG["vocab"], (4, 1))
    ids = ((start + np.arange(16)) % CONFIG["vocab"]).astype(np.int32)  # counting sequences
    labels = np.roll(ids, -1, axis=1).reshape(-1)
    losses = [trainer.step(ids=ids, labels=labels) for _ in range(args.steps)]
    print(f"3. training: loss {losses[0]:.3f} -> {losses[-1]:.3f} in {args.steps} steps")

    report = program.verify_backward("ScaledTanh", d=5, N=3)
    print("4. " + str(report).replace("\n", "\n   "))


if __name__ == "__main__":
    main()
