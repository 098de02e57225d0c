"""GPU kernels and model forwards: Strata (target cuda) vs PyTorch eager, same card, same run.

    python benchmarks/gpu_kernels.py [--repeat 30] [--json out.json] [--only rows matmul lowp attention launch models]

- rows: softmax and layernorm over the last axis (f32), also as GB/s (read + write once),
  and bf16 softmax / log_softmax over long rows (GPT-2's [8192, 50257] logits);
- matmul: f32 square matmuls vs torch.matmul with TF32 off (CUDA cores, like Strata's), and
  both with TF32 on (`allow_tf32=True`: tensor cores);
- lowp: bf16 and f16 square matmuls (tensor cores, f32 accumulation) vs torch.matmul (cuBLAS);
- attention: bf16 attention forward (flash kernel) vs torch's scaled_dot_product_attention;
  its backward (graph.attention_grad: the flash backward kernels) vs SDPA's backward, alone
  (softmax statistics recomputed) and reading the forward's log-sum-exp ("lse", as a
  training program's backward does); and forward plus backward in one program ("step":
  share-attention-lse pairs them) vs SDPA's forward and backward;
- launch: host time per `launch()` of the 12-kernel transformer block, CUDA graph replay
  against one launch per kernel (STRATA_CUDA_GRAPHS=0), and its device time both ways;
- models: the bundled MLP and the transformer block at six small GPT-2-like sizes
  (batch x seq x d_model from 1x16x64 to 4x128x256; heads = d_model / 32, ff = 4 d_model).

Times are CUDA-event means over `repeat` runs on inputs already on the device (Strata:
`CudaExecutable.launch`, every kernel of the program; PyTorch: the eager ops), after a
result check against PyTorch. Ratio = t(torch) / t(strata): above 1, Strata is faster.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "benchmarks"))

SEED_001_BLOCKS = [(1, 16, 64), (4, 16, 64), (1, 64, 128), (4, 64, 128), (1, 128, 256), (4, 128, 256)]


def event_time(record, synchronize, elapsed, fn, repeat: int) -> float:
    for _ in range(3):
        fn()
    synchronize()
    start, end = record(), record()
    start.record()
    for _ in range(repeat):
        fn()
    end.record()
    end.synchronize()
    return elapsed(start, end) / 1e3 / repeat


def attention_grad_text(shape, scale: float, causal: bool, lse: bool = False) -> str:
    """@main(q, k, v, out, dout[, lse]) -> (dq, dk, dv): one bf16 graph.attention_grad."""
    t = f"tensor<{'x'.join(map(str, shape))}xbf16>"
    lse_type = f"tensor<{'x'.join(map(str, shape[:-1]))}xf32>"
    return (
        f"func.func @main(%q: {t}, %k: {t}, %v: {t}, %o: {t}, %do: {t}{f', %l: {lse_type}' if lse else ''}) "
        f"-> ({t}, {t}, {t}) {{\n"
        f"  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do{' lse %l' if lse else ''} {{scale = {scale:.17g} : f64, "
        f"causal = {str(causal).lower()}}} : ({t}, {t}, {t}, {t}, {t}{f', {lse_type}' if lse else ''}) -> ({t}, {t}, {t})\n"
        f"  func.return %dq, %dk, %dv : {t}, {t}, {t}\n}}\n"
    )


def attention_step_text(shape, scale: float, causal: bool) -> str:
    """@main(q, k, v, dout) -> (out, dq, dk, dv): a bf16 attention and its gradient."""
    t = f"tensor<{'x'.join(map(str, shape))}xbf16>"
    attributes = f"{{scale = {scale:.17g} : f64, causal = {str(causal).lower()}}}"
    return (
        f"func.func @main(%q: {t}, %k: {t}, %v: {t}, %do: {t}) -> ({t}, {t}, {t}, {t}) {{\n"
        f"  %o = graph.attention %q, %k, %v {attributes} : ({t}, {t}, {t}) -> {t}\n"
        f"  %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %o, %do {attributes} : ({t}, {t}, {t}, {t}, {t}) -> ({t}, {t}, {t})\n"
        f"  func.return %o, %dq, %dk, %dv : {t}, {t}, {t}, {t}\n}}\n"
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--json")
    p.add_argument("--only", nargs="+", default=["rows", "matmul", "lowp", "attention", "launch", "models"])
    p.add_argument("--lowp-sizes", nargs="+", type=int, default=[1024, 2048, 4096, 8192])
    args = p.parse_args(argv)

    import torch
    from numba import cuda

    import strata
    from cpu_models import input_shapes, torch_block, torch_mlp
    from strata import ops
    from transformer_block import build_transformer_block

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    name = torch.cuda.get_device_name()
    print(f"device: {name}; torch {torch.__version__} (TF32 off)")

    def strata_time(exe) -> float:
        return event_time(cuda.event, cuda.synchronize, cuda.event_elapsed_time, exe.launch, args.repeat)

    def torch_time(fn) -> float:
        return event_time(lambda: torch.cuda.Event(enable_timing=True), torch.cuda.synchronize,
                          lambda a, b: a.elapsed_time(b), fn, args.repeat)

    def compare(exe, inputs, torch_fn, rtol=1e-3, atol=1e-4) -> float:
        tensors = [torch.from_numpy(a).cuda() for a in inputs]
        got = exe(*inputs)[0]
        want = torch_fn(*tensors).float().cpu().numpy()
        error = float(np.max(np.abs(got - want)))
        if not np.allclose(got, want, rtol=rtol, atol=atol):
            raise SystemExit(f"result mismatch: max |Δ| = {error}")
        exe.set_inputs(*inputs)
        return error, tensors

    rows = []

    def report(group, label, strata_s, torch_s, extra=""):
        ratio = torch_s / strata_s
        rows.append({"group": group, "case": label, "strata_ms": strata_s * 1e3, "torch_ms": torch_s * 1e3,
                     "torch_over_strata": ratio, "extra": extra})
        print(f"{group:7} {label:44} strata {strata_s * 1e3:9.4f} ms  torch {torch_s * 1e3:9.4f} ms  "
              f"t(torch)/t(strata) {ratio:5.2f}  {extra}")

    rng = np.random.default_rng(0)
    if "rows" in args.only:
        F = torch.nn.functional
        for shape in [(4096, 1024), (512, 4096), (32768, 128)]:
            x = rng.standard_normal(shape, dtype=np.float32)
            g = strata.Graph("softmax")
            g.output(ops.softmax(g.input("x", shape)))
            exe = strata.compile(g.build(), target="cuda").run
            _, (tx,) = compare(exe, [x], lambda t: torch.softmax(t, -1))
            s, t = strata_time(exe), torch_time(lambda: torch.softmax(tx, -1))
            report("rows", f"softmax {shape[0]}x{shape[1]}", s, t, f"{8 * x.size / s / 1e9:.0f} GB/s")
            gamma = rng.standard_normal(shape[1:], dtype=np.float32)
            beta = rng.standard_normal(shape[1:], dtype=np.float32)
            g = strata.Graph("layernorm")
            g.output(ops.layernorm(g.input("x", shape), g.input("g", shape[1:]), g.input("b", shape[1:])))
            exe = strata.compile(g.build(), target="cuda").run
            _, (tx, tg, tb) = compare(exe, [x, gamma, beta], lambda a, b, c: F.layer_norm(a, shape[1:], b, c))
            s, t = strata_time(exe), torch_time(lambda: F.layer_norm(tx, shape[1:], tg, tb))
            report("rows", f"layernorm {shape[0]}x{shape[1]}", s, t, f"{8 * x.size / s / 1e9:.0f} GB/s")
        import ml_dtypes

        for shape, log in [((8192, 50257), False), ((8192, 50257), True), ((2048, 32768), False), ((16384, 2304), False)]:
            x = rng.standard_normal(shape, dtype=np.float32).astype(ml_dtypes.bfloat16)
            op, torch_op = (ops.log_softmax, torch.log_softmax) if log else (ops.softmax, torch.softmax)
            g = strata.Graph("softmax")
            g.output(op(g.input("x", shape, "bf16")))
            exe = strata.compile(g.build(), target="cuda").run
            tx = torch.from_numpy(x.astype(np.float32)).cuda().to(torch.bfloat16)
            error = float(np.max(np.abs(exe(x)[0].astype(np.float32) - torch_op(tx, -1).float().cpu().numpy())))
            if error > (0.07 if log else 1e-2):  # log_softmax: bf16's spacing at |y| of 8 to 16 is 0.0625
                raise SystemExit(f"bf16 {'log_' if log else ''}softmax mismatch: max |Δ| = {error}")
            exe.set_inputs(x)
            s, t = strata_time(exe), torch_time(lambda: torch_op(tx, -1))
            report("rows", f"bf16 {'log_' if log else ''}softmax {shape[0]}x{shape[1]}", s, t, f"{4 * x.size / s / 1e9:.0f} GB/s")
    if "matmul" in args.only:
        for n in (512, 1024, 2048, 4096):
            a = rng.standard_normal((n, n), dtype=np.float32)
            b = rng.standard_normal((n, n), dtype=np.float32)
            g = strata.Graph("matmul")
            g.output(g.input("a", (n, n)) @ g.input("b", (n, n)))
            exe = strata.compile(g.build(), target="cuda").run
            _, (ta, tb) = compare(exe, [a, b], torch.matmul, rtol=1e-3, atol=1e-2)
            s, t = strata_time(exe), torch_time(lambda: torch.matmul(ta, tb))
            report("matmul", f"f32 {n}^3", s, t, f"strata {2 * n**3 / s / 1e12:.1f} TFLOP/s, "
                   f"torch {2 * n**3 / t / 1e12:.1f} TFLOP/s")
            exe = strata.compile(g.build(), target="cuda", allow_tf32=True).run
            torch.backends.cuda.matmul.allow_tf32 = True
            _, (ta, tb) = compare(exe, [a, b], torch.matmul, rtol=2e-2, atol=5e-1)
            s, t = strata_time(exe), torch_time(lambda: torch.matmul(ta, tb))
            torch.backends.cuda.matmul.allow_tf32 = False
            report("matmul", f"tf32 {n}^3 (both TF32)", s, t, f"strata {2 * n**3 / s / 1e12:.1f} TFLOP/s, "
                   f"torch {2 * n**3 / t / 1e12:.1f} TFLOP/s")
    if "lowp" in args.only:
        import ml_dtypes

        for dtype, name, torch_dtype in ((ml_dtypes.bfloat16, "bf16", torch.bfloat16), (np.float16, "f16", torch.float16)):
            for n in args.lowp_sizes:
                a = rng.standard_normal((n, n), dtype=np.float32).astype(dtype)
                b = rng.standard_normal((n, n), dtype=np.float32).astype(dtype)
                g = strata.Graph("matmul")
                g.output(g.input("a", (n, n), name) @ g.input("b", (n, n), name))
                exe = strata.compile(g.build(), target="cuda").run
                ta, tb = (torch.from_numpy(x.astype(np.float32)).cuda().to(torch_dtype) for x in (a, b))
                got = exe(a, b)[0].astype(np.float32)
                want = torch.matmul(ta, tb).float().cpu().numpy()
                error = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
                if error > 2e-2:
                    raise SystemExit(f"result mismatch: max |Δ| / max |want| = {error}")
                exe.set_inputs(a, b)
                s, t = strata_time(exe), torch_time(lambda: torch.matmul(ta, tb))
                report("lowp", f"{name} {n}^3", s, t, f"strata {2 * n**3 / s / 1e12:.1f} TFLOP/s, "
                       f"torch {2 * n**3 / t / 1e12:.1f} TFLOP/s, max rel err {error:.1e}")
    if "attention" in args.only:
        import ml_dtypes

        F = torch.nn.functional
        for seq, head, causal in [(1024, 64, False), (1024, 64, True), (1024, 128, True), (4096, 64, True), (4096, 128, False),
                                  (4096, 128, True), (1024, 256, False), (4096, 256, True), (4096, 96, True), (4096, 192, True)]:
            batch, heads = 2, 8
            shape = (batch, heads, seq, head)
            q, k, v = (rng.standard_normal(shape, dtype=np.float32).astype(ml_dtypes.bfloat16) for _ in range(3))
            g = strata.Graph("attention")
            g.output(ops.attention(*(g.input(n, shape, "bf16") for n in "qkv"), scale=head**-0.5, causal=causal))
            tq, tk, tv = (torch.from_numpy(x.astype(np.float32)).cuda().to(torch.bfloat16) for x in (q, k, v))
            sdpa = lambda: F.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)  # noqa: E731
            want = sdpa().float().cpu().numpy()
            t = torch_time(sdpa)
            flops = 4 * batch * heads * seq * seq * head / (2 if causal else 1)
            for p16 in (False, True):
                exe = strata.compile(g.build(), target="cuda", allow_16bit_attention_p=p16).run
                error = float(np.max(np.abs(exe(q, k, v)[0].astype(np.float32) - want)))
                if error > 0.05:
                    raise SystemExit(f"attention mismatch: max |Δ| = {error}")
                exe.set_inputs(q, k, v)
                s = strata_time(exe)
                report("attn", f"bf16 {batch}x{heads}x{seq}x{head}{' causal' if causal else ''}{' p16' if p16 else ''}",
                       s, t, f"strata {flops / s / 1e12:.1f} TFLOP/s, SDPA {flops / t / 1e12:.1f} TFLOP/s")
        for seq, head, causal in [(1024, 64, False), (1024, 64, True), (4096, 64, True), (1024, 128, True), (4096, 128, True),
                                  (4096, 96, True), (1024, 256, False), (4096, 192, True), (4096, 256, True)]:
            batch, heads = 2, 8
            shape = (batch, heads, seq, head)
            q, k, v, dout = (rng.standard_normal(shape, dtype=np.float32).astype(ml_dtypes.bfloat16) for _ in range(4))
            tq, tk, tv = (torch.from_numpy(x.astype(np.float32)).cuda().to(torch.bfloat16).requires_grad_() for x in (q, k, v))
            tout = F.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
            tdout = torch.from_numpy(dout.astype(np.float32)).cuda().to(torch.bfloat16)
            backward = lambda: torch.autograd.grad(tout, (tq, tk, tv), tdout, retain_graph=True)  # noqa: E731
            want = [g.float().cpu().numpy() for g in backward()]
            t = torch_time(backward)
            out = tout.detach().float().cpu().numpy().astype(ml_dtypes.bfloat16)
            with torch.no_grad():  # each query row's log-sum-exp, as the forward leaves it
                scores = (tq.float() @ tk.float().transpose(-1, -2)) * head**-0.5
                if causal:
                    scores = scores.masked_fill(torch.ones(seq, seq, device="cuda", dtype=torch.bool).triu(1), float("-inf"))
                lse = torch.logsumexp(scores, -1).cpu().numpy()
                del scores
            flops = 10 * batch * heads * seq * seq * head / (2 if causal else 1)
            label = f"bf16 {batch}x{heads}x{seq}x{head}{' causal' if causal else ''}"
            for p16 in (False, True):
                for with_lse in (False, True):
                    exe = strata.compile(attention_grad_text(shape, head**-0.5, causal, with_lse), target="cuda",
                                         allow_16bit_attention_p=p16).run
                    inputs = (q, k, v, out, dout, lse) if with_lse else (q, k, v, out, dout)
                    got = exe(*inputs)
                    error = max(float(np.max(np.abs(g.astype(np.float32) - w)) / np.max(np.abs(w))) for g, w in zip(got, want))
                    if error > 0.05:
                        raise SystemExit(f"attention backward mismatch: max |Δ| / max |want| = {error}")
                    exe.set_inputs(*inputs)
                    s = strata_time(exe)
                    report("attnbwd", f"{label}{' p16' if p16 else ''}{' lse' if with_lse else ''}", s, t,
                           f"strata {flops / s / 1e12:.1f} TFLOP/s, SDPA bwd {flops / t / 1e12:.1f} TFLOP/s, rel err {error:.1e}")

            def sdpa_step():
                step_out = F.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
                return torch.autograd.grad(step_out, (tq, tk, tv), tdout)

            t_step = torch_time(sdpa_step)
            step_flops = 14 * batch * heads * seq * seq * head / (2 if causal else 1)
            for p16 in (False, True):
                exe = strata.compile(attention_step_text(shape, head**-0.5, causal), target="cuda",
                                     allow_16bit_attention_p=p16).run
                got = exe(q, k, v, dout)[1:]
                error = max(float(np.max(np.abs(g.astype(np.float32) - w)) / np.max(np.abs(w))) for g, w in zip(got, want))
                if error > 0.05:
                    raise SystemExit(f"attention step mismatch: max |Δ| / max |want| = {error}")
                exe.set_inputs(q, k, v, dout)
                s = strata_time(exe)
                report("attnstep", f"{label}{' p16' if p16 else ''}", s, t_step,
                       f"strata {step_flops / s / 1e12:.1f} TFLOP/s, SDPA fwd+bwd {step_flops / t_step / 1e12:.1f} TFLOP/s")
    if "launch" in args.only:
        import os
        import time

        block = build_transformer_block(batch=4, seq=128, d_model=256, heads=8, d_ff=1024).build()
        inputs = [rng.standard_normal(s, dtype=np.float32) * 0.1 for s in input_shapes(block)]
        for graphs in ("1", "0"):
            os.environ["STRATA_CUDA_GRAPHS"] = graphs
            exe = strata.compile(block, target="cuda").run
            exe.set_inputs(*inputs)
            exe.launch()
            cuda.synchronize()
            calls = 300
            start = time.perf_counter()
            for _ in range(calls):
                exe.launch()
            host = (time.perf_counter() - start) / calls
            cuda.synchronize()
            gpu = strata_time(exe)
            label = "CUDA graph replay" if graphs == "1" else "one launch per kernel"
            print(f"launch  block 4x128x256, {len(exe.launches)} kernels, {label:22} host {host * 1e6:6.1f} us/call  "
                  f"device {gpu * 1e3:7.4f} ms/call")
            rows.append({"group": "launch", "case": label, "host_us": host * 1e6, "strata_ms": gpu * 1e3})
        os.environ.pop("STRATA_CUDA_GRAPHS")
    if "models" in args.only:
        programs = [("mlp.mlir 32x512", (ROOT / "examples" / "mlp.mlir").read_text(), torch_mlp)]
        for batch, seq, d_model in SEED_001_BLOCKS:
            heads = d_model // 32
            block = build_transformer_block(batch=batch, seq=seq, d_model=d_model, heads=heads, d_ff=4 * d_model)
            programs.append((f"transformer block {batch}x{seq}x{d_model}, {heads} heads", block.build(),
                             lambda torch_, *a, heads=heads: torch_block(torch_, heads, *a)))
        for label, program, torch_fn in programs:
            inputs = [rng.standard_normal(s, dtype=np.float32) * (1.0 if i == 0 else 0.1)
                      for i, s in enumerate(input_shapes(program))]
            exe = strata.compile(program, target="cuda").run
            with torch.no_grad():
                _, tensors = compare(exe, inputs, lambda *t: torch_fn(torch, *t), rtol=2e-3, atol=2e-3)
                t = torch_time(lambda: torch_fn(torch, *tensors))
            s = strata_time(exe)
            report("models", label, s, t, f"{len(exe.launches)} kernels")
    if args.json:
        Path(args.json).write_text(json.dumps({"device": name, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
