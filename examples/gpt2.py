"""GPT-2 from Hugging Face transformers, compiled by Strata, generating tokens greedily.

    python examples/gpt2.py                 # a tiny GPT-2 (2 layers, 32 wide), random weights
    python examples/gpt2.py --small         # GPT-2 small's shape (124M parameters), random weights
    python examples/gpt2.py --tokens 8 --prompt 5

Weights are random (nothing is downloaded), so the text is noise; what matters is that
Strata's logits match PyTorch's and that greedy decoding picks the same tokens.

The model is compiled once, for one sequence length (prompt + new tokens): the prompt is
padded at the end, and since GPT-2's attention is causal the logits at position t depend
only on tokens 0..t, so step t reads them there. (Shapes are static in Strata: calling
the compiled model with another length would compile it again.)
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from transformers import GPT2Config, GPT2LMHeadModel

import strata


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="GPT-2 small's configuration (slow to compile)")
    parser.add_argument("--prompt", type=int, default=5, help="prompt length (random token ids)")
    parser.add_argument("--tokens", type=int, default=8, help="tokens to generate")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    if args.small:
        config = GPT2Config(use_cache=False)
    else:
        config = GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=97, n_positions=64, use_cache=False,
                            bos_token_id=0, eos_token_id=0)  # fmt: skip
    model = GPT2LMHeadModel(config).eval()
    length = args.prompt + args.tokens
    prompt = torch.randint(0, config.vocab_size, (1, args.prompt))
    ids = torch.zeros(1, length, dtype=torch.int64)
    ids[:, : args.prompt] = prompt

    start = time.perf_counter()
    compiled = strata.compile_torch(model, (ids,))
    print(f"import + compile: {time.perf_counter() - start:.2f} s "
          f"({sum(p.numel() for p in model.parameters()) / 1e6:.2f}M parameters, sequence {length})")  # fmt: skip

    with torch.no_grad():  # warm-up: PyTorch's first call is slow
        model(prompt)
    compiled(ids)
    strata_tokens, torch_tokens = prompt[0].tolist(), prompt[0].tolist()
    strata_time = torch_time = 0.0
    worst = 0.0
    for step in range(args.tokens):
        position = args.prompt + step - 1
        start = time.perf_counter()
        logits = compiled(ids).logits[0, position]
        strata_time += time.perf_counter() - start
        strata_tokens.append(int(logits.argmax()))
        ids[0, position + 1] = strata_tokens[-1]

        with torch.no_grad():
            start = time.perf_counter()
            expected = model(torch.tensor([torch_tokens])).logits[0, -1]
            torch_time += time.perf_counter() - start
        torch_tokens.append(int(expected.argmax()))
        worst = max(worst, float((logits - expected).abs().max() / expected.abs().max()))

    print(f"prompt:    {prompt[0].tolist()}")
    print(f"strata:    {strata_tokens[args.prompt:]}")
    print(f"torch:     {torch_tokens[args.prompt:]}")
    print(f"largest logit difference (relative to max |logit|): {worst:.2e}")
    print(f"run time per token: strata {strata_time / args.tokens * 1e3:.2f} ms, "
          f"torch {torch_time / args.tokens * 1e3:.2f} ms")  # fmt: skip
    same = strata_tokens == torch_tokens
    print("same tokens" if same else "TOKENS DIFFER")
    raise SystemExit(0 if same and worst < 1e-4 else 1)


if __name__ == "__main__":
    np.set_printoptions(precision=4)
    main()
