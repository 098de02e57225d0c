"""What the PyTorch importer's parts share: element types, known tensors (`Const`), op
names, and where in the model's source a node comes from."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.fx

from strata.frontends.builder import Tensor
from strata.support.errors import UnsupportedOpError

DTYPES: dict[torch.dtype, str] = {
    torch.float32: "f32",
    torch.float64: "f64",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.bool: "i1",
}
"""PyTorch element types a graph tensor can have, and their Strata names."""

NEVER_FOLDED = {"rand", "randn", "rand_like", "randn_like", "randint", "randint_like", "bernoulli",
                "normal", "uniform", "exponential", "multinomial", "randperm", "native_dropout"}  # fmt: skip
"""Random ops: their result is not a function of their operands, so never a constant."""

FOLD_LIMIT = 1 << 26
"""Elements of a folded result beyond which folding is not attempted (the node is translated)."""


@dataclass
class Const:
    """A tensor known at import time. `arg` is the function argument holding it, for
    lifted constants and non-persistent buffers (used when an op consumes it directly)."""

    value: torch.Tensor
    arg: Tensor | None = None
    materialized: dict[str, Tensor] = field(default_factory=dict)


def strata_dtype(dtype: torch.dtype, where: str) -> str:
    try:
        return DTYPES[dtype]
    except KeyError:
        supported = ", ".join(str(d).removeprefix("torch.") for d in DTYPES)
        raise UnsupportedOpError(f"{where}: element type {dtype} is not supported (supported: {supported})") from None


def to_numpy(value: torch.Tensor) -> np.ndarray:
    """A CPU numpy array of `value` (bf16 through f32: numpy has no bfloat16)."""
    value = value.detach()
    if value.device.type != "cpu":
        value = value.cpu()
    if value.dtype == torch.bfloat16:
        import ml_dtypes

        return value.float().numpy().astype(ml_dtypes.bfloat16)
    return value.numpy()


def op_name(target: object) -> str:
    """`aten.addmm.default` for an OpOverload, else the callable's name."""
    if isinstance(target, torch._ops.OpOverload):
        return f"{target.namespace}.{target._schema.name.split('::')[-1]}.{target._overloadname}"
    return getattr(target, "__name__", repr(target))


def packet_name(target: object) -> str:
    """`addmm` for aten.addmm.default (the key of the translation table)."""
    if isinstance(target, torch._ops.OpOverload):
        return target._schema.name.split("::")[-1]
    return getattr(target, "__name__", repr(target))


_TORCH_DIR = os.path.dirname(torch.__file__)


def location(node: torch.fx.Node) -> str:
    """Where the model's source made `node`: the last frame of its stack trace outside
    PyTorch (`file:line in function: code`), and the innermost module (`name (Class)`)."""
    parts = []
    trace = node.meta.get("stack_trace") or ""
    frames = []
    lines = trace.strip().splitlines()
    for i, line in enumerate(lines):
        line = line.strip()
        if line.startswith('File "'):
            code = lines[i + 1].strip() if i + 1 < len(lines) and not lines[i + 1].strip().startswith("File ") else ""
            frames.append((line, code))
    if frames:
        outside = [f for f in frames if _TORCH_DIR not in f[0]]
        line, code = (outside or frames)[-1]
        # File "path", line N, in fn
        try:
            path = line.split('"')[1]
            rest = line.split('"', 2)[2].strip(", ")
            number = rest.split(",")[0].removeprefix("line ").strip()
            function = rest.split(" in ", 1)[1] if " in " in rest else "?"
            parts.append(f"{path}:{number} in {function}" + (f": {code}" if code else ""))
        except IndexError:
            parts.append(line)
    stack = node.meta.get("nn_module_stack") or {}
    if stack:
        path, kind = list(stack.values())[-1]
        kind = kind.__name__ if isinstance(kind, type) else str(kind).rsplit(".", 1)[-1]
        parts.append(f"module {path or '<root>'} ({kind})")
    return "; ".join(parts) or f"node {node.name}"
