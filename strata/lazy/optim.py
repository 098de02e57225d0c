"""Optimizers over lazy parameters: `SGD` and `Adam`, with PyTorch's interface.

    opt = strata.lazy.optim.Adam([w, b], lr=1e-2)
    opt.zero_grad(); loss.backward(); opt.step()

The update rules are `strata.training`'s (`strata.SGD`, `strata.Adam`, the ones
`strata.Trainer` compiles), applied per parameter as one lazy multi-result op that
writes the parameter and its state in place. The step count is itself a tensor
incremented in place, and the step size is computed from it by graph ops, so every
step records the same graph (one compile, then cache hits, also under
`strata.lazy.compile`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable

from strata import training
from strata.lazy.autograd import no_grad
from strata.lazy.creation import tensor, zeros_like
from strata.lazy.errors import LazyError, describe
from strata.lazy.node import record, record_multi
from strata.lazy.tensor import Tensor


class Optimizer(ABC):
    """Parameters, per-parameter state, and a step counter; subclasses give the rule and
    the step size."""

    def __init__(self, params: Iterable[Tensor], rule):
        self.params = list(params)
        for p in self.params:
            if not isinstance(p, Tensor) or not p.is_leaf or not p.requires_grad:
                raise LazyError(f"{type(self).__name__}: parameters must be leaf tensors with requires_grad=True, got {p!r}")
        self.rule = rule
        self.state: dict[int, list[Tensor]] = {}
        self.step_count = tensor(0.0, dtype="f64", device=self.params[0].device if self.params else "cpu", name="step")

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    @abstractmethod
    def hyper_parameters(self, step: Tensor) -> dict[str, Tensor]:
        """The rule's per-step inputs (the step size) as tensors computed from `step`."""

    @no_grad()
    def step(self) -> None:
        """Record one update of every parameter that has a gradient."""
        self.step_count.add_(1.0)
        hyper = self.hyper_parameters(self.step_count)
        names = tuple(hyper)
        for p in self.params:
            if p.grad is None:
                continue
            if p.grad.shape != p.shape:
                raise LazyError(f"{type(self).__name__}.step: the gradient of {describe(p)} has shape {p.grad.shape}")
            state = self.state.setdefault(id(p), [zeros_like(p) for _ in self.rule.state_names])
            values = [hyper[n].to(p.dtype) for n in names]
            inputs = [p.node, p.grad.node, *(s.node for s in state), *(v.node for v in values)]
            new_param, *new_state = record_multi("optimizer", inputs, {"rule": self.rule, "hyper_names": names}, what=type(self).__name__)
            p._assign(new_param, f"{type(self).__name__}.step")
            for s, value in zip(state, new_state):
                s._assign(value, f"{type(self).__name__}.step")


class SGD(Optimizer):
    """p -= lr * v, v = momentum * v + grad (plain SGD when momentum is 0)."""

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3, momentum: float = 0.0):
        super().__init__(params, training.SGD(lr=lr, momentum=momentum))

    def hyper_parameters(self, step: Tensor) -> dict[str, Tensor]:
        return {"lr": Tensor.wrap(record("full", [], {"value": self.rule.lr, "shape": (), "dtype": step.dtype}), step.device)}


class Adam(Optimizer):
    """Adam with the bias corrections folded into the step size (strata.Adam's rule:
    eps is added to sqrt(v) before the correction of v is applied)."""

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        super().__init__(params, training.Adam(lr=lr, beta1=betas[0], beta2=betas[1], eps=eps))

    def hyper_parameters(self, step: Tensor) -> dict[str, Tensor]:
        rule = self.rule
        correction = (1.0 - rule.beta2**step).sqrt() / (1.0 - rule.beta1**step)
        return {"lr": correction * rule.lr}
