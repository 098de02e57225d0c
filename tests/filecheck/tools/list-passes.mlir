// strata-opt --list-passes: one line per Strata pass and named pipeline (signature with
// option types and defaults, then the first sentence of its docstring), then xDSL's passes
// by name.
// RUN: strata-opt --list-passes | filecheck %s
// RUN: strata-opt --list-passes | filecheck %s --check-prefix=UPSTREAM

// CHECK-LABEL: Strata passes:
// CHECK-DAG:   {{^  }}autodiff{checkpoint: str = all} {{ +}}Adds @f_grad for every function marked graph.differentiate.
// CHECK-DAG:   {{^  }}lower-graph-to-tile{tile_elements: int = 4096, matmul_m: int = 128, {{.*}}} {{ +}}Lower every graph function to a program of tile kernels.
// CHECK-DAG:   {{^  }}plan-memory{strategy: str = {{[a-z-]+}}, in_place: bool = true} {{ +}}Plan arenas and offsets
// CHECK-DAG:   {{^  }}token-dce {{ +}}Remove unused tokens and redundant joins.
// CHECK-DAG:   {{^  }}dedupe-kernels {{ +}}Merge kernels identical but for their name into one, launches renamed.
// CHECK-DAG:   {{^  }}verify-memory-plan {{ +}}Fail if any program's recorded plan is unsafe.
// CHECK-DAG:   {{^  }}expand-attention-grad{keep_flash: bool = false, flash_grad_head: int = 128, widen_16bit: bool = true} {{ +}}Spells out graph.attention_grad in matmuls, a softmax and elementwise ops: every one, or (keep_flash) all but those the GPU's flash-attention backward takes.
// CHECK-DAG:   {{^  }}share-attention-lse{flash_grad_head: int = 128} {{ +}}Gives each flash-shaped graph.attention_grad its forward's log-sum-exp (the module docstring).
// CHECK-LABEL: Strata pipelines
// CHECK-DAG:   {{^  }}cpu-pipeline{fusion: bool = true} {{.*}} Steps: lower-vsla-to-graph, expand-attention-grad, fuse-patterns, canonicalize, cse, fuse-elementwise, lower-graph-to-tile, token-dce, dedupe-kernels, lower-tile-to-loops, expand-math, plan-memory, verify-memory-plan.
// CHECK-DAG:   {{^  }}gpu-pipeline{fusion: bool = true, allow_tf32: bool = false, allow_16bit_attention_p: bool = false, warpgroup_mma: bool = false, tensor_maps: bool = false} {{.*}} Steps: lower-vsla-to-graph, expand-attention-grad, share-attention-lse, fuse-patterns, {{.*}}token-dce, dedupe-kernels, lower-tile-to-gpu, plan-memory, verify-memory-plan.
// CHECK-LABEL: Upstream xDSL passes:

// Upstream passes are names only, and Strata's are not repeated among them.
// UPSTREAM-LABEL: Upstream xDSL passes:
// UPSTREAM:       {{^  canonicalize$}}
// UPSTREAM-NOT:   plan-memory
// UPSTREAM-NOT:   cpu-pipeline
// UPSTREAM-NOT:   expand-attention-grad
// UPSTREAM-NOT:   share-attention-lse
