"""CUDA graph replay (runtime/cuda.py): a program of several kernels is captured at its first
launch and replayed with one driver call; results equal one launch per kernel, and a changed
device pointer captures again. GPU only."""

from __future__ import annotations

import numpy as np
import pytest

import strata
from test_gpu import needs_gpu
from programs import ttype


def softmax_then_matmul(rows: int, width: int) -> str:
    x, w = ttype((rows, width), "f32"), ttype((width, width), "f32")
    return f"""func.func @main(%x: {x}, %w: {w}) -> {x} {{
  %0 = "graph.softmax"(%x) <{{axis = -1 : i64}}> : ({x}) -> {x}
  %1 = "graph.matmul"(%0, %w) : ({x}, {w}) -> {x}
  %2 = "graph.tanh"(%1) : ({x}) -> {x}
  func.return %2 : {x}
}}
"""


@needs_gpu
def test_graph_replay_matches_kernel_by_kernel_launches(monkeypatch):
    text = softmax_then_matmul(65, 96)
    rng = np.random.default_rng(2)
    x, w = (rng.standard_normal(s, dtype=np.float32) for s in ((65, 96), (96, 96)))
    graphs = strata.compile(text, target="cuda")
    monkeypatch.setenv("STRATA_CUDA_GRAPHS", "0")
    one_by_one = strata.compile(text, target="cuda")
    assert len(graphs.run.launches) > 1
    first = graphs(x, w)
    assert graphs.run.graph and one_by_one.run.graph is None
    np.testing.assert_array_equal(first[0], one_by_one(x, w)[0])
    np.testing.assert_array_equal(graphs(x * 2, w)[0], one_by_one(x * 2, w)[0])  # replayed on new inputs

    torch = pytest.importorskip("torch")
    captured = graphs.run.graph
    on_device = torch.from_numpy(x).cuda()
    np.testing.assert_array_equal(graphs(on_device, w)[0], first[0])  # the input pointer changed: captured again
    assert graphs.run.graph and graphs.run.graph is not captured
