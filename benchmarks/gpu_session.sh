#!/bin/bash
# One device session for the GPU backend (run through the device tool from the repo root,
# carrying .whl with the xdsl wheels): lays out the strata package, runs the GPU tests and
# every op suite on the GPU (STRATA_TEST_TARGET=cuda), compute-sanitizer memcheck and
# racecheck on cooperative kernels, then the benchmarks. `STAGES` picks parts (default all;
# "fuzz" runs strata-fuzz: FUZZ_CASES programs on the CPU configurations and PTX, and
# FUZZ_GPU_CASES on the GPU, one worker per core).
set -o pipefail
export PYTHONUNBUFFERED=1 LLVMLITE_ENABLE_IR_LAYER_TYPED_POINTERS=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
STAGES=${STAGES:-"tests suites sanitizers bench"}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
PYTHONPATH=/tmp/site python3 -c "import ml_dtypes" 2>/dev/null || python3 -m pip install -q --no-index --no-compile --find-links .whl/extra --target /tmp/site ml_dtypes
rm -rf /tmp/pkg; mkdir -p /tmp/pkg/strata && cp -r strata/* /tmp/pkg/strata/
for d in support dialects transforms frontends lowering runtime targets tools; do ln -s $PWD/$d /tmp/pkg/strata/$d; done
export PYTHONPATH=/tmp/pkg:/tmp/site
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
python3 -c "import llvmlite,numba,sys;print('python',sys.version.split()[0],'llvmlite',llvmlite.__version__,'numba',numba.__version__)"
python3 -m pip show numba-cuda cuda-bindings cuda-core torch 2>/dev/null | grep -E "^(Name|Version)"
has() { [[ " $STAGES " == *" $1 "* ]]; }
XDIST=""; python3 -c "import xdist" 2>/dev/null && XDIST="-n 8"
if has tests; then
  echo "== GPU tests"
  python3 -P -m pytest -q -p no:cacheprovider $XDIST tests/test_gpu.py tests/test_tensor_cores.py tests/test_warpgroup_mma.py tests/test_flash_attention.py tests/test_flash_attention_grad.py tests/test_cuda_graphs.py -rfs 2>&1 | tee $OUT/pytest-gpu.log | tail -25
  python3 -P -m pytest -q -p no:cacheprovider tests/test_torch_import.py -k cuda -rfs 2>&1 | tail -3
  python3 -P -m pytest -q -p no:cacheprovider $XDIST tests/test_vsla.py -k cuda -rfs 2>&1 | tail -3
  python3 -P -m pytest -q -p no:cacheprovider tests/test_dsl.py -k cuda -rfs 2>&1 | tail -3
fi
if has suites; then
  echo "== op suites on the GPU (STRATA_TEST_TARGET=cuda)"
  STRATA_TEST_TARGET=cuda python3 -P -m pytest -q -p no:cacheprovider $XDIST tests/test_cpu.py tests/test_fusion.py -rf 2>&1 | tee $OUT/pytest-suites.log | tail -40
  # The row kernels' long-row paths (not the CPU's own exp expansion at its range edges).
  STRATA_TEST_TARGET=cuda python3 -P -m pytest -q -p no:cacheprovider $XDIST tests/test_cpu_rows_speed_paths.py -k "not exp_range" -rf 2>&1 | tail -3
fi
if has sanitizers; then
  for program in benchmarks/inputs/*.mlir; do
    for tool in memcheck racecheck synccheck; do
      echo "== compute-sanitizer $tool $program"
      compute-sanitizer --tool $tool --print-limit 5 python3 -P -m strata.tools.run $program --target cuda --check 2>&1 | tail -3
    done
  done
fi
if has fuzz; then
  echo "== strata-fuzz"
  python3 -P -m strata.tools.fuzz.cli --cases ${FUZZ_CASES:-2000} --jobs $(nproc) --targets cpu,cpu-unfused,ptx --out $OUT/fuzz-cpu 2>&1 | tail -30
  python3 -P -m strata.tools.fuzz.cli --cases ${FUZZ_GPU_CASES:-2000} --seed 100000 --jobs $(( $(nproc) / 2 )) --targets cuda --out $OUT/fuzz-cuda 2>&1 | tail -30
  python3 -P -m strata.tools.fuzz.cli --mode grad --cases ${FUZZ_GRAD_CASES:-2000} --jobs $(nproc) --targets cpu,cpu-unfused --out $OUT/fuzz-grad 2>&1 | tail -10
  for mode in parser npz; do
    python3 -P -m strata.tools.fuzz.cli --mode $mode --cases ${FUZZ_CASES:-2000} --jobs $(nproc) --out $OUT/fuzz-$mode 2>&1 | tail -5
  done
fi
if has bench; then
  echo "== benchmarks"
  [ -z "$BENCH_ARGS" ] && python3 benchmarks/gpu_elementwise.py --json $OUT/bench-elementwise.json 2>&1 | tee $OUT/bench-elementwise.log
  python3 benchmarks/gpu_kernels.py $BENCH_ARGS --json $OUT/bench-kernels.json 2>&1 | tee $OUT/bench-kernels.log
fi
true
