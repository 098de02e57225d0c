"""What the translations of ATen ops share: `registrar`, which gives each `ops_*` module
its `@translates` decorator for its part of the table, and helpers that read an FX node's
traced value (element type, shape) and recognize small patterns of nodes."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.fx

from strata.frontends import builder as ops
from strata.frontends.builder import Tensor
from strata.frontends.torch.values import packet_name, strata_dtype


def registrar(table: dict[str, Callable]) -> Callable:
    """The decorator `@translates("name", ...)`: enters the function in `table` under each
    ATen op (overload packet) name."""

    def translates(*names: str):
        def register(function: Callable) -> Callable:
            for name in names:
                table[name] = function
            return function

        return register

    return translates


def val(node: torch.fx.Node):
    return node.meta["val"]


def out_dtype(cx, node: torch.fx.Node) -> str:
    """The element type of the node's (first) result."""
    v = val(node)
    return strata_dtype((v[0] if isinstance(v, (tuple, list)) else v).dtype, cx.where())


def out_shape(node: torch.fx.Node) -> tuple[int, ...]:
    return tuple(int(d) for d in val(node).shape)


def meta_of(arg: object) -> object:
    """An fx argument as something torch.result_type takes."""
    if isinstance(arg, torch.fx.Node):
        v = val(arg)
        return torch.empty(tuple(v.shape), dtype=v.dtype, device="meta")
    return arg


def common_dtype(cx, a: object, b: object) -> str:
    """The promoted element type of two fx arguments (PyTorch's rule)."""
    if not isinstance(a, torch.fx.Node) and not isinstance(b, torch.fx.Node):
        return cx.tensor(a).dtype
    return strata_dtype(torch.result_type(meta_of(a), meta_of(b)), cx.where())


def axis(dim: int, rank: int) -> int:
    return dim + rank if dim < 0 else dim


def is_float(dtype: str) -> bool:
    return dtype in ("f16", "bf16", "f32", "f64")


def reshaped(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    return x if x.shape == tuple(shape) else ops.reshape(x, shape)


def is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def call_of(n: object, *names: str) -> bool:
    return isinstance(n, torch.fx.Node) and n.op == "call_function" and packet_name(n.target) in names


def scalar_operand(n: object, name: str) -> tuple[torch.fx.Node, float] | None:
    """(tensor operand, number) when `n` is `name(tensor, number)` in either order."""
    if not call_of(n, name) or len(n.args) != 2 or n.kwargs.get("alpha", 1) != 1:
        return None
    a, b = n.args
    if isinstance(a, torch.fx.Node) and is_number(b):
        return a, b
    if isinstance(b, torch.fx.Node) and is_number(a):
        return b, a
    return None
