"""The GPU backend (docs/gpu-backend.md).

Without a GPU (here and in CI): every elementwise op (f32, f64, f16; i32/i64 where the op
allows), casts, compare/select, constants and reshapes, copy kernels and fused chains at odd
sizes are lowered with lower-tile-to-gpu, translated to NVVM IR, compiled to PTX by libNVVM
and the PTX is validated with `ptxas -arch=sm_90` (and sm_80 for some); cooperative kernels
(matmul, softmax, reductions) use shared memory, shuffles and barriers. The other ops' PTX
is covered by the op suites run with STRATA_TEST_TARGET=ptx (tests/targets.py).

With a GPU (`numba.cuda.is_available()`): strata.compile(target="cuda") against the
reference interpreter with strata-run --check's tolerances, boundary sizes, device-array
inputs.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import strata
from strata.check import compare
from strata.support.errors import StrataError
from strata.targets.cuda import GpuPipelinePass
from strata.targets.passes import run_pipeline

from programs import random_array, single_op, ttype
from targets import PTXAS, ptxas



def _libnvvm_available() -> bool:
    try:
        from strata.lowering.nvvm.translate import find_libdevice, nvvm_ir_version

        nvvm_ir_version()
        find_libdevice()
        return True
    except Exception:
        return False


def _cuda_available() -> bool:
    from strata.runtime.cuda import cuda_available

    return cuda_available()


needs_ptx_tools = pytest.mark.skipif(
    not (os.path.exists(PTXAS) and _libnvvm_available()), reason="ptxas or libNVVM/libdevice not found"
)
needs_gpu = pytest.mark.skipif(not _cuda_available(), reason="no CUDA GPU (numba.cuda.is_available() is False)")


def chain(n: int, dtype: str = "f32") -> str:
    """An 8-op fused chain with a broadcast operand, two results (multi-output fusion)."""
    t, s = ttype((n,), dtype), ttype((1,), dtype)
    return f"""func.func @main(%a: {t}, %b: {t}, %c: {s}) -> ({t}, {t}) {{
  %0 = "graph.add"(%a, %b) : ({t}, {t}) -> {t}
  %1 = "graph.mul"(%0, %c) : ({t}, {s}) -> {t}
  %2 = "graph.sub"(%1, %b) : ({t}, {t}) -> {t}
  %3 = "graph.relu"(%2) : ({t}) -> {t}
  %4 = "graph.neg"(%3) : ({t}) -> {t}
  %5 = "graph.exp"(%4) : ({t}) -> {t}
  %6 = "graph.add"(%5, %a) : ({t}, {t}) -> {t}
  %7 = "graph.tanh"(%6) : ({t}) -> {t}
  func.return %7, %2 : {t}, {t}
}}
"""


def lower(text: str):
    module = strata.parse_module(text)
    run_pipeline(module, GpuPipelinePass.STEPS)
    return module


def ptx_of(text: str, arch: str = "sm_90") -> str:
    from strata.lowering.nvvm.translate import module_to_ptx

    return module_to_ptx(lower(text), arch)[1]


def check_ptx(text: str, arch: str = "sm_90") -> str:
    ptx = ptx_of(text, arch)
    assert f".target {arch}" in ptx
    assert ".entry main" in ptx
    assert "%tid.x" in ptx  # %ctaid.x folds away on a one-block grid
    assert "st.global" in ptx
    assert "bar.sync" not in ptx and ".shared" not in ptx  # elementwise: no barriers, no shared memory
    ptxas(ptx, arch)
    return ptx


# The op catalogue of this slice ----------------------------------------------------------

UNARY_FLOAT = ["exp", "tanh", "sigmoid", "silu", "erf", "neg", "abs", "relu", "log", "sqrt", "rsqrt", "gelu"]
UNARY_INT = ["neg", "abs", "relu"]
BINARY = ["add", "sub", "mul", "maximum", "minimum"]
FLOAT_BINARY = ["div", "pow"]
FLOATS = ["f32", "f64", "f16", "bf16"]
INTS = ["i32", "i64"]
CASTS = [("f32", "bf16"), ("bf16", "f32"), ("bf16", "f64"), ("f64", "bf16"), ("i32", "bf16"), ("bf16", "f16"), ("f32", "i32"), ("f32", "i64"), ("f64", "i32"), ("i32", "f32"), ("i64", "f64"), ("f32", "f64"), ("f64", "f32"), ("f32", "i1"), ("i1", "f32"), ("i64", "i32"), ("i32", "i64"), ("f16", "f32"), ("f32", "f16")]

CASES: list[tuple[str, str]] = []
"""(id, module text) for every elementwise op of this slice."""
for _dtype in FLOATS:
    for _name in UNARY_FLOAT:
        CASES.append((f"{_name}-{_dtype}", single_op(f"graph.{_name}", [((17, 33), _dtype)], ((17, 33), _dtype))))
    for _name in BINARY + FLOAT_BINARY:
        CASES.append((f"{_name}-{_dtype}", single_op(f"graph.{_name}", [((17, 33), _dtype), ((33,), _dtype)], ((17, 33), _dtype))))
    CASES.append((f"scale-{_dtype}", single_op("graph.scale", [((7,), _dtype)], ((7,), _dtype), "value = -2.5 : f64")))
for _dtype in INTS:
    for _name in UNARY_INT:
        CASES.append((f"{_name}-{_dtype}", single_op(f"graph.{_name}", [((17, 5), _dtype)], ((17, 5), _dtype))))
    for _name in BINARY:
        CASES.append((f"{_name}-{_dtype}", single_op(f"graph.{_name}", [((7, 1, 5), _dtype), ((4, 1), _dtype)], ((7, 4, 5), _dtype))))
for _approximate in ("none", "tanh"):
    CASES.append((f"gelu-{_approximate}", single_op("graph.gelu", [((9, 13), "f32")], ((9, 13), "f32"), f'approximate = "{_approximate}"')))
for _predicate in ("lt", "le", "gt", "ge", "eq", "ne"):
    for _dtype in ("f32", "i64", "f16"):
        CASES.append((f"compare-{_predicate}-{_dtype}", single_op("graph.compare", [((7, 5), _dtype), ((7, 5), _dtype)], ((7, 5), "i1"), f'predicate = "{_predicate}"')))
CASES.append(("select", single_op("graph.select", [((7, 1), "i1"), ((7, 5), "f32"), ((5,), "f32")], ((7, 5), "f32"))))
for _source, _target in CASTS:
    CASES.append((f"cast-{_source}-{_target}", single_op("graph.cast", [((9, 7), _source)], ((9, 7), _target))))
CONSTANT_AND_RESHAPE = """func.func @main(%x: tensor<2x6xf32>) -> tensor<3x4xf32> {
  %c = "graph.constant"() <{value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>}> : () -> tensor<4xf32>
  %r = "graph.reshape"(%x) : (tensor<2x6xf32>) -> tensor<3x4xf32>
  %0 = "graph.add"(%r, %c) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}"""
CASES.append(("constant-reshape", CONSTANT_AND_RESHAPE))
for _n in (1, 7, 1000):
    CASES.append((f"chain-{_n}", chain(_n)))
    CASES.append((f"chain-{_n}-f16", chain(_n, "f16")))
CASES.append(("chain-2d-odd", chain(7).replace("tensor<7xf32>", "tensor<7x1000xf32>").replace("tensor<1xf32>", "tensor<1000xf32>")))
COPIES = [
    ("transpose", single_op("graph.transpose", [((7, 33), "f32")], ((33, 7), "f32"), "permutation = array<i64: 1, 0>")),
    ("broadcast_to", single_op("graph.broadcast_to", [((7, 1), "f64")], ((3, 7, 33), "f64"))),
    ("slice", single_op("graph.slice", [((17, 33), "f32")], ((6, 7), "f32"), "starts = array<i64: 1, 2>, limits = array<i64: 17, 33>, steps = array<i64: 3, 5>")),
    ("concat", single_op("graph.concat", [((2, 5), "f32"), ((7, 5), "f32"), ((1, 5), "f32")], ((10, 5), "f32"), "axis = 0 : i64")),
]
"""Copy kernels through strided views: views, loads and stores only, so they lower too."""

IDS = [case_id for case_id, _ in CASES + COPIES]
TEXTS = [text for _, text in CASES + COPIES]


@needs_ptx_tools
@pytest.mark.parametrize("text", TEXTS, ids=IDS)
def test_ptx_is_accepted_by_ptxas(text):
    check_ptx(text)


@needs_ptx_tools
@pytest.mark.parametrize("case", ["exp-f32", "pow-f64", "maximum-f16", "cast-f32-i32", "chain-1000"])
def test_ptx_for_sm80(case):
    check_ptx(dict(CASES)[case], "sm_80")


@needs_ptx_tools
def test_math_goes_through_libdevice_and_exact_ops_stay_ieee():
    ptx = ptx_of(chain(1000))
    assert "ex2.approx" in ptx  # libdevice's __nv_expf, inlined
    assert "div.full" not in ptx and "sqrt.approx" not in ptx
    # -fma=0: the program's own mul + add are not contracted (fuse-fma is opt-in).
    mul_add = ptx_of(single_op("graph.mul", [((64,), "f32"), ((64,), "f32")], ((64,), "f32")))
    assert "mul.rn.f32" in mul_add and "fma" not in mul_add
    assert "sqrt.rn.f32" in ptx_of(dict(CASES)["sqrt-f32"])
    assert "div.rn.f32" in ptx_of(dict(CASES)["div-f32"])


@needs_ptx_tools
def test_nvvm_ir_is_typed_and_annotated():
    from strata.lowering.nvvm.translate import translate_kernels

    text = str(translate_kernels(lower(chain(7))))
    assert 'target triple = "nvptx64-nvidia-cuda"' in text
    assert "float addrspace(1)* noalias" in text
    assert " ptr " not in text  # no opaque pointers for the LLVM 7 reader
    assert '!"kernel", i32 1' in text and '!"maxntidx", i32 256' in text
    assert "!nvvmir.version" in text
    assert '@"__nv_expf"' in text and '@"__nv_tanhf"' in text
    assert 'call i32 @"llvm.nvvm.read.ptx.sreg.tid.x"()' in text


def test_gpu_kernel_structure():
    module = lower(chain(7))
    text = str(module)
    assert "func.func private @llvm.nvvm.read.ptx.sreg.ctaid.x() -> i32" in text
    assert "gpu.kernel" in text and "gpu.block_size = 256" in text
    assert "tile.kernel" not in text and "memref.alloca" not in text
    # Both results of the fused group are stored in one thread loop.
    assert text.count("scf.for") == 1 and text.count("memref.store") == 2


@pytest.mark.parametrize(
    "text, expected",
    [
        (single_op("graph.matmul", [((7, 17), "f32"), ((17, 33), "f32")], ((7, 33), "f32")), ["math.fma", "barrier0"]),
        (single_op("graph.softmax", [((33, 7), "f32")], ((33, 7), "f32"), "axis = -1 : i64"), ["shfl.sync.bfly.f32", "barrier0"]),
        (single_op("graph.reduce_sum", [((7, 33), "f64")], ((7,), "f64"), "axes = array<i64: 1>"), ["shfl.sync.bfly.i32"]),
    ],
    ids=["matmul", "softmax", "reduce_sum-f64"],
)
def test_cooperative_kernels_use_shared_memory_shuffles_and_barriers(text, expected):
    lowered = str(lower(text))
    assert "memref<" in lowered and ", 3 : i64>" in lowered  # shared-memory tiles
    for fragment in expected:
        assert fragment in lowered


def test_unsupported_arch_is_a_clear_error():
    from strata.lowering.nvvm.translate import compute_arch

    with pytest.raises(StrataError, match="unsupported GPU architecture 'sm_70'"):
        compute_arch("sm_70")


def test_bf16_is_i16_in_memory_and_f32_in_registers():
    """LLVM 7 has no bfloat: i16 loads shifted into f32, each result rounded to bf16."""
    from strata.lowering.nvvm.translate import translate_kernels

    module = lower(single_op("graph.add", [((8,), "bf16"), ((8,), "bf16")], ((8,), "bf16")))
    text = str(translate_kernels(module, ir_version=(2, 0, 3, 2)))
    assert "bfloat" not in text and "i16 addrspace(1)*" in text
    assert "fadd float" in text and "cvt.rn.bf16x2.f32" in text  # rounded to nearest even


BF16_KERNELS = [
    ("softmax-bf16", single_op("graph.softmax", [((5, 300), "bf16")], ((5, 300), "bf16"), "axis = -1 : i64")),
    ("layernorm-bf16", single_op("graph.layernorm", [((5, 40), "bf16"), ((40,), "bf16"), ((40,), "bf16")], ((5, 40), "bf16"))),
    ("matmul-bf16", single_op("graph.matmul", [((9, 40), "bf16"), ((40, 7), "bf16")], ((9, 7), "bf16"))),
    ("reduce_sum-bf16", single_op("graph.reduce_sum", [((9, 40), "bf16")], ((9,), "bf16"), "axes = array<i64: 1>")),
    ("reduce_max-bf16", single_op("graph.reduce_max", [((300, 9), "bf16")], ((9,), "bf16"), "axes = array<i64: 0>")),
]  # fmt: skip


@needs_ptx_tools
@pytest.mark.parametrize("text", [t for _, t in BF16_KERNELS], ids=[i for i, _ in BF16_KERNELS])
def test_bf16_kernels_compile(text):
    ptxas(ptx_of(text), "sm_90")


@needs_gpu
@pytest.mark.parametrize("text", [t for _, t in BF16_KERNELS], ids=[i for i, _ in BF16_KERNELS])
def test_bf16_kernels_on_gpu(text, request):
    check_on_gpu(text, inputs_for(text, request.node.callspec.id, np.random.default_rng(9)))


@pytest.mark.skipif(_cuda_available(), reason="a GPU is present")
def test_compile_cuda_without_gpu_is_a_clear_error():
    with pytest.raises(StrataError, match="no usable NVIDIA GPU or driver"):
        strata.compile(chain(7), target="cuda")


# On the GPU -----------------------------------------------------------------------------------


def inputs_for(text: str, case_id: str, rng):
    function = strata.parse_module(text).ops.first
    arrays = []
    for t in function.function_type.inputs.data:
        name = str(t.element_type)
        name = {"i1": "i1"}.get(name, name)
        arrays.append(random_array(rng, tuple(t.get_shape()), name))
    if any(case_id.startswith(p) for p in ("log", "sqrt", "rsqrt", "pow", "div")):
        arrays[0] = np.abs(arrays[0]) + arrays[0].dtype.type(0.5)
    if case_id.startswith("cast-f"):
        arrays[0] = (arrays[0] * 1e3).astype(arrays[0].dtype)
    return arrays


def check_on_gpu(text: str, inputs) -> None:
    exe = strata.compile(text, target="cuda")
    got = exe(*inputs)
    want = strata.interpret(text, *inputs)
    for comparison, g, w in zip(compare(got, want), got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert comparison.ok, f"{comparison}\n{text}"
    again = exe(*inputs)  # bound once: a second call gives the same results
    for a, b in zip(got, again):
        np.testing.assert_array_equal(a, b)


@needs_gpu
@pytest.mark.parametrize("text", TEXTS, ids=IDS)
def test_gpu_matches_reference(text, request):
    case_id = request.node.callspec.id
    check_on_gpu(text, inputs_for(text, case_id, np.random.default_rng(7)))


@needs_gpu
@pytest.mark.parametrize("n", [1, 7, 1000, 4097, 1 << 20])
def test_gpu_fused_chain_sizes(n):
    text = chain(n)
    check_on_gpu(text, inputs_for(text, "chain", np.random.default_rng(n)))


@needs_gpu
def test_gpu_cast_saturates_and_maps_nan_to_zero():
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.7, -2.7], dtype=np.float32)
    check_on_gpu(single_op("graph.cast", [((7,), "f32")], ((7,), "i32")), [x])


@needs_gpu
def test_gpu_maximum_propagates_nan():
    x = np.array([np.nan, 1.0, -np.inf, 0.0], dtype=np.float32)
    y = np.array([1.0, np.nan, 2.0, -0.0], dtype=np.float32)
    for name in ("maximum", "minimum"):
        check_on_gpu(single_op(f"graph.{name}", [((4,), "f32"), ((4,), "f32")], ((4,), "f32")), [x, y])


@needs_gpu
def test_gpu_in_place_chain():
    """softmax, and exp → relu → tanh, over intermediates: plan-memory runs them in place."""
    t = ttype((3, 1000), "f32")
    text = f"""func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %0 = "graph.add"(%a, %b) : ({t}, {t}) -> {t}
  %1 = "graph.softmax"(%0) <{{axis = -1 : i64}}> : ({t}) -> {t}
  func.return %1 : {t}
}}"""
    check_on_gpu(text, inputs_for(text, "softmax", np.random.default_rng(2)))
    chain_text = f"""func.func @main(%a: {t}, %b: {t}) -> ({t}, {t}) {{
  %0 = "graph.add"(%a, %b) : ({t}, {t}) -> {t}
  %1 = "graph.exp"(%0) : ({t}) -> {t}
  %2 = "graph.relu"(%1) : ({t}) -> {t}
  %3 = "graph.tanh"(%2) : ({t}) -> {t}
  func.return %3, %0 : {t}, {t}
}}"""
    check_on_gpu(chain_text, inputs_for(chain_text, "chain", np.random.default_rng(3)))


@needs_gpu
def test_device_arrays_are_read_in_place_and_results_stay_on_device():
    from numba import cuda

    text = single_op("graph.softmax", [((17, 33), "f32")], ((17, 33), "f32"), "axis = -1 : i64")
    exe = strata.compile(text, target="cuda")
    x = np.random.default_rng(4).standard_normal((17, 33)).astype(np.float32)
    (want,) = strata.interpret(text, x)
    device_x = cuda.to_device(x)
    (on_device,) = exe.run_on_device(device_x)
    assert hasattr(on_device, "__cuda_array_interface__")
    np.testing.assert_allclose(on_device.copy_to_host(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(exe(x)[0], want, rtol=1e-5, atol=1e-6)  # host inputs again
    with pytest.raises(strata.InputError, match="argument 0"):
        exe(cuda.to_device(x[:, :32].copy()))
    t = ttype((17, 33), "f32")
    returns_input = strata.compile(f"func.func @main(%x: {t}) -> {t} {{\n  func.return %x : {t}\n}}", target="cuda")
    np.testing.assert_array_equal(returns_input.run_on_device(device_x)[0].copy_to_host(), x)
    try:
        import torch
    except ImportError:
        return
    (from_torch,) = exe(torch.from_numpy(x).cuda())
    np.testing.assert_allclose(from_torch, want, rtol=1e-5, atol=1e-6)

    class DLPackOnly:
        """A CUDA array that speaks only DLPack (as JAX arrays do)."""

        def __init__(self, tensor):
            self.tensor = tensor

        def __dlpack__(self, **kwargs):
            return self.tensor.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.tensor.__dlpack_device__()

    (from_dlpack,) = exe(DLPackOnly(torch.from_numpy(x).cuda()))
    np.testing.assert_allclose(from_dlpack, want, rtol=1e-5, atol=1e-6)


SPLIT_COLUMN_REDUCTIONS = {
    "bias-grad-bf16": ("reduce_sum", (8, 1024, 768), "bf16", "0, 1"),
    "sum-3x1000x77-f32": ("reduce_sum", (3, 1000, 77), "f32", "0, 1"),
    "mean-2048x33-f16": ("reduce_mean", (2048, 33), "f16", "0"),
    "max-middle-5x4096x7-f32": ("reduce_max", (5, 4096, 7), "f32", "1"),
}


def split_column_reduction(op: str, shape, dtype: str, axes: str) -> str:
    reduced = {int(a) for a in axes.split(", ")}
    out = "x".join(str(d) for i, d in enumerate(shape) if i not in reduced)
    x = f"tensor<{'x'.join(map(str, shape))}x{dtype}>"
    return (f'func.func @f(%x: {x}) -> tensor<{out}x{dtype}> {{\n'
            f'  %0 = "graph.{op}"(%x) <{{axes = array<i64: {axes}>}}> : ({x}) -> tensor<{out}x{dtype}>\n'
            f'  func.return %0 : tensor<{out}x{dtype}>\n}}')  # fmt: skip


@pytest.mark.parametrize("case", list(SPLIT_COLUMN_REDUCTIONS))
def test_column_reductions_with_few_columns_split_their_rows(case):
    """A column reduction whose columns alone would not fill the GPU runs as chunk partials
    then a reduction of the partials (reductions.py split_for_grid)."""
    lowered = str(lower(split_column_reduction(*SPLIT_COLUMN_REDUCTIONS[case])))
    assert sum("gpu.kernel" in line for line in lowered.splitlines()) == 2


@needs_gpu
@pytest.mark.parametrize("case", list(SPLIT_COLUMN_REDUCTIONS))
def test_split_column_reductions_on_gpu(case):
    text = split_column_reduction(*SPLIT_COLUMN_REDUCTIONS[case])
    check_on_gpu(text, inputs_for(text, case, np.random.default_rng(3)))


@needs_gpu
@pytest.mark.parametrize("case", ["matmul-17-rows", "matmul-1-row", "matmul-1-column", "matmul-transposed-b",
                                  "attention-17", "softmax-1-row", "layernorm-1-column", "reduce-max-i64",
                                  "cross-entropy", "embedding"])
def test_gpu_boundary_sizes(case):
    from test_ptx_barriers import BOUNDARY_PROGRAMS

    text = dict(BOUNDARY_PROGRAMS)[case]
    rng = np.random.default_rng(5)
    inputs = inputs_for(text, case, rng)
    if case == "cross-entropy":
        inputs[1] = rng.integers(0, 3000, size=17)
    if case == "embedding":
        inputs[1] = rng.integers(0, 11, size=5)
    check_on_gpu(text, inputs)


@needs_gpu
def test_bf16_rounding_matches_ml_dtypes():
    """The NVVM emitter's f32 -> bf16 rounding (cvt.rn.bf16x2.f32: to nearest, ties to even,
    NaN kept), through a cast kernel on the GPU: every f32 bit pattern class (ties, carries
    into the exponent, overflow to inf, subnormals, NaN) against ml_dtypes."""
    import ml_dtypes

    rng = np.random.default_rng(3)
    bits = np.concatenate([
        rng.integers(0, 2**32, size=20000, dtype=np.uint64).astype(np.uint32),
        np.array([0x3F808000, 0x3F818000, 0x7F7FFFFF, 0x7F7F8000, 0x00008000, 0x80018000, 0x3FFFFFFF], np.uint32),
    ])  # fmt: skip
    values = bits.view(np.float32)
    n = len(values)
    text = (f"func.func @round(%x: tensor<{n}xf32>) -> tensor<{n}xbf16> {{\n"
            f"  %0 = graph.cast %x : (tensor<{n}xf32>) -> tensor<{n}xbf16>\n  func.return %0 : tensor<{n}xbf16>\n}}")  # fmt: skip
    (got,) = strata.compile(text, target="cuda")(values)
    got = got.astype(np.float32)
    with np.errstate(invalid="ignore"):
        want = values.astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    np.testing.assert_array_equal(got[finite].view(np.uint32), want[finite].view(np.uint32))


def transpose_through(token: str) -> str:
    """A tile kernel that stores a tile to %b, then loads %b transposed (each thread reads
    another thread's element) with the load's token `token`: %t2 orders it after the store."""
    row, col = "tensor_view<8x8xf32, strides [8, 1], offset 0>", "tensor_view<8x8xf32, strides [1, 8], offset 0>"
    part = lambda view: f"!tile.partition_view<8x8, !tile.{view}>"  # noqa: E731
    return f"""tile.kernel @k(%a: memref<64xf32>, %b: memref<64xf32>) attributes {{grid = array<i64: 1>}} {{
  %c0 = arith.constant 0 : index
  %t0 = token.make : !token.token
  %va = tile.make_tensor_view %a : memref<64xf32> -> !tile.{row}
  %pa = tile.make_partition_view %va : !tile.{row} -> {part(row)}
  %vb = tile.make_tensor_view %b : memref<64xf32> -> !tile.{row}
  %pb = tile.make_partition_view %vb : !tile.{row} -> {part(row)}
  %vt = tile.make_tensor_view %b : memref<64xf32> -> !tile.{col}
  %pt = tile.make_partition_view %vt : !tile.{col} -> {part(col)}
  %x, %t1 = tile.load_view_tko %pa[%c0, %c0] token %t0 : {part(row)} -> !tile.tile<8x8xf32>
  %t2 = tile.store_view_tko %x, %pb[%c0, %c0] token %t1 : !tile.tile<8x8xf32>, {part(row)}
  %y, %t3 = tile.load_view_tko %pt[%c0, %c0] token {token} : {part(col)} -> !tile.tile<8x8xf32>
  %t4 = tile.store_view_tko %y, %pa[%c0, %c0] token %t3 : !tile.tile<8x8xf32>, {part(row)}
  tile.return
}}"""


@pytest.mark.parametrize("token, barriers", [("%t2", 1), ("%t1", 0)], ids=["ordered-after-store", "unordered"])
def test_barriers_follow_token_order_through_global_memory(token, barriers):
    """A load whose token follows a store to the same buffer reads what other threads
    wrote: one barrier between them. Without that token order, none (the program says the
    accesses need no order)."""
    module = strata.parse_module(transpose_through(token))
    run_pipeline(module, "lower-tile-to-gpu")
    (kernel,) = [f for f in module.ops if "gpu.kernel" in f.attributes]
    assert kernel.attributes["gpu.barriers"].value.data == barriers
    text = str(kernel)
    if barriers:
        first_store = text.index("memref.store")
        assert first_store < text.index("llvm.nvvm.barrier0") < text.index("memref.store", first_store + 1)
