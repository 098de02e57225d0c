"""The `graph` dialect: tensor programs with value semantics (the op catalogue is
docs/graph-dialect.md)."""

from xdsl.ir import Dialect

from strata.dialects.graph_base import (
    BinaryElementwiseOp,
    ElementwiseOp,
    GraphOp,
    ReductionOp,
    ShapeError,
    UnaryElementwiseOp,
)
from strata.dialects.graph_elementwise import (
    AbsOp,
    AddOp,
    CastOp,
    CompareOp,
    DivOp,
    DropoutOp,
    ErfOp,
    ExpOp,
    GeluOp,
    LogOp,
    MaximumOp,
    MinimumOp,
    MulOp,
    NegOp,
    PowOp,
    ReluOp,
    RsqrtOp,
    ScaleOp,
    SelectOp,
    SigmoidOp,
    SiluOp,
    SqrtOp,
    SubOp,
    TanhOp,
)
from strata.dialects.graph_fused import FusedOp, YieldOp
from strata.dialects.graph_grad import GRADIENT_OPS, AttentionGradOp, AttentionLseOp, EmbeddingGradOp
from strata.dialects.graph_nn import (
    AttentionOp,
    ConstantOp,
    CrossEntropyOp,
    EmbeddingOp,
    LayerNormOp,
    LogSoftmaxOp,
    MatmulOp,
    ReduceMaxOp,
    ReduceMeanOp,
    ReduceSumOp,
    RmsNormOp,
    SoftmaxOp,
)
from strata.dialects.graph_shape import (
    BroadcastToOp,
    ConcatOp,
    ReshapeOp,
    SliceOp,
    TransposeOp,
)

GRAPH_OPS: tuple[type[GraphOp], ...] = (
    NegOp, AbsOp, ExpOp, LogOp, SqrtOp, RsqrtOp, TanhOp, SigmoidOp, ReluOp, SiluOp, ErfOp,
    GeluOp, AddOp, SubOp, MulOp, DivOp, MaximumOp, MinimumOp, PowOp, ScaleOp, CompareOp,
    SelectOp, CastOp, ConstantOp, ReduceSumOp, ReduceMeanOp, ReduceMaxOp, MatmulOp,
    SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp, AttentionOp, EmbeddingOp,
    CrossEntropyOp, DropoutOp, ReshapeOp, TransposeOp, BroadcastToOp, SliceOp, ConcatOp,
)  # fmt: skip

STRUCTURAL_OPS = (FusedOp, YieldOp)
"""Ops passes create (not in the catalogue): fused regions."""

Graph = Dialect("graph", [*GRAPH_OPS, *GRADIENT_OPS, *STRUCTURAL_OPS], [])

__all__ = [
    "GRAPH_OPS",
    "GRADIENT_OPS",
    "AttentionGradOp",
    "AttentionLseOp",
    "EmbeddingGradOp",
    "BinaryElementwiseOp",
    "ElementwiseOp",
    "FusedOp",
    "YieldOp",
    "Graph",
    "GraphOp",
    "ReductionOp",
    "ShapeError",
    "UnaryElementwiseOp",
    *(op.__name__ for op in GRAPH_OPS),
]
