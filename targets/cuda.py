"""The CUDA target: graph → tile kernels → cooperative GPU kernels → NVVM IR → PTX
(libNVVM), loaded and launched through Numba on an NVIDIA GPU.

    strata.compile(module, target="cuda")       strata-run --target cuda
    strata-opt -p gpu-pipeline                  strata-translate --emit=ptx --arch sm_90

PTX needs libNVVM but no GPU; running needs a GPU (else a clear "not available" error).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp

from strata.lowering.nvvm.translate import compute_arch, module_to_ptx
from strata.runtime import cuda as cuda_runtime
from strata.runtime.cuda import CudaExecutable
from strata.targets.passes import PipelinePass, register_pipeline, split_spec
from strata.targets.target import Target, register_target
from strata.transforms.expand_attention_grad import DEEPEST_FLASH_GRAD_HEAD

DEFAULT_ARCH = "sm_90"
WARPGROUP_ARCH = "sm_90a"
RESIDENT_ROW_BYTES = 112 * 1024
"""Softmax rows up to this long are kept in shared memory on sm_90: two blocks of such rows
fit one multiprocessor's 228 KiB, so one block's copies fly while the other computes."""


@register_pipeline
@dataclass(frozen=True)
class GpuPipelinePass(PipelinePass):
    """The CUDA path from graph to GPU kernel functions plus the memory plan, as one named
    pass. Smaller tiles than the CPU's: tiles staged in shared memory must fit 48 KiB per
    block, and a matmul gets at least one output tile per SM of an H100/H200 (132); 16-bit
    matmuls get twice the rows and columns (tensor cores keep the accumulator in
    registers), and 16-bit attention the flash kernel. `allow_tf32` lets f32 matmuls use
    TF32 tensor cores."""

    name = "gpu-pipeline"

    STEPS = (
        "lower-vsla-to-graph,expand-attention-grad{keep_flash=true widen_16bit=false},share-attention-lse,fuse-patterns,canonicalize,cse,fuse-elementwise,"
        "lower-graph-to-tile{tile_elements=2048 matmul_m=64 matmul_n=64 matmul_k=32 dot_k=32 "
        "matmul_bytes=49152 matmul_min_tiles=132 pretranspose_rows=256 matmul_16bit_scale=2 flash_attention=true "
        "fused_attention=false},"
        "token-dce,dedupe-kernels,"
        "lower-tile-to-gpu,plan-memory,verify-memory-plan"
    )


    allow_tf32: bool = False
    """f32 matmuls on tensor cores as TF32 (lower-tile-to-gpu{tf32=true})."""
    allow_16bit_attention_p: bool = False
    """The flash kernel's probabilities rounded to 16 bits (lower-tile-to-gpu{attention_p16=true})."""
    warpgroup_mma: bool = False
    """16-bit matmuls on sm_90's warpgroup mma: 128 x 128 x 64 tiles, 128 x 256 where k is
    long and they fill whole waves (matmul_16bit_n=256, matmul_16bit_k=64), and
    lower-tile-to-gpu{warpgroup_mma=true}; the PTX is then for sm_90a
    (H100/H200) only. sm_90's shared memory also holds softmax rows of up to
    RESIDENT_ROW_BYTES, read once (resident_row_bytes), and the gradient of attention with
    heads of up to 256 takes the flash backward (flash_grad_head).
    strata.compile sets it on such a device."""
    tensor_maps: bool = False
    """The warpgroup flash forward's copies through tensor maps (lower-tile-to-gpu{tensor_maps=true});
    strata.compile sets it with warpgroup_mma (the CUDA runtime encodes the maps), PTX emitted
    for other use leaves it off."""

    def steps(self) -> str:
        deep_grad = [f"flash_grad_head={DEEPEST_FLASH_GRAD_HEAD}"] if self.warpgroup_mma else []
        added = {
            "expand-attention-grad": deep_grad,
            "share-attention-lse": deep_grad,
            "lower-graph-to-tile": [
                "matmul_16bit_k=64", "matmul_16bit_n=256", f"resident_row_bytes={RESIDENT_ROW_BYTES}",
                *(["matmul_tf32=true"] if self.allow_tf32 else []), *deep_grad,
            ] if self.warpgroup_mma else [],
            "lower-tile-to-gpu": [
                o for o, wanted in (
                    ("tf32=true", self.allow_tf32), ("warpgroup_mma=true", self.warpgroup_mma),
                    ("attention_p16=true", self.allow_16bit_attention_p), ("tensor_maps=true", self.tensor_maps),
                ) if wanted
            ],
        }  # fmt: skip
        return ",".join(with_options(step, added.get(step.split("{")[0], [])) for step in split_spec(super().steps()))


def with_options(step: str, options: list[str]) -> str:
    """The pipeline step `step` (name{options}) with `options` too, unless it sets them already."""
    name, _, given = step.partition("{")
    given = given.removesuffix("}").split()
    options = given + [o for o in options if o.split("=")[0] not in {g.split("=")[0] for g in given}]
    return f"{name}{{{' '.join(options)}}}" if options else name


class CudaTarget(Target):
    name = "cuda"
    description = "an NVIDIA GPU: PTX from libNVVM, launched through Numba"
    pipeline = GpuPipelinePass
    emits = ("ptx",)

    def compile(self, module: ModuleOp, entry: str | None = None, fusion: bool = True, allow_tf32: bool = False,
                allow_16bit_attention_p: bool = False) -> CudaExecutable:
        cuda = cuda_runtime.require_cuda()  # before lowering: no GPU is a clear error, not a late one
        warpgroup_mma = cuda_runtime.warpgroup_mma_available(cuda)
        options = {"allow_tf32": allow_tf32, "allow_16bit_attention_p": allow_16bit_attention_p, "warpgroup_mma": warpgroup_mma,
                   "tensor_maps": warpgroup_mma}  # the runtime encodes them (runtime/tensor_maps.py)
        return CudaExecutable(self.lowered_program(module, entry, fusion, **options))

    def emit(self, module: ModuleOp, kind: str, arch: str | None = None) -> str:
        """PTX for `arch` (sm_90 by default); sm_90a lowers 16-bit matmuls for the warpgroup mma."""
        if kind not in self.emits:
            return super().emit(module, kind, arch)
        arch = arch or DEFAULT_ARCH
        compute_arch(arch)
        self.lower(module, warpgroup_mma=arch == WARPGROUP_ARCH)
        return module_to_ptx(module, arch)[1] or "// no GPU kernels: the program launches nothing\n"


CUDA = register_target(CudaTarget())
