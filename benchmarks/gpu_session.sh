#!/bin/bash
# One device session for the GPU backend (run through the device tool from the repo root):
# installs carried wheels (xdsl), lays out the strata package, runs tests/test_gpu.py,
# strata-run --target cuda --check, compute-sanitizer memcheck and the benchmark.
set -o pipefail
export PYTHONUNBUFFERED=1 LLVMLITE_ENABLE_IR_LAYER_TYPED_POINTERS=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
rm -rf /tmp/pkg; mkdir -p /tmp/pkg/strata && cp -r strata/* /tmp/pkg/strata/
for d in dialects transforms lowering runtime tools; do ln -s $PWD/$d /tmp/pkg/strata/$d; done
export PYTHONPATH=/tmp/pkg:/tmp/site
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
python3 -c "import llvmlite,numba,sys;print('python',sys.version.split()[0],'llvmlite',llvmlite.__version__,'numba',numba.__version__)"
python3 -m pip show numba-cuda cuda-bindings cuda-core torch 2>/dev/null | grep -E "^(Name|Version)"
python3 -P -m pytest -q -p no:cacheprovider tests/test_gpu.py -rfs 2>&1 | tee $OUT/pytest.log | tail -30
echo "== strata-run --target cuda --check"
python3 -P -m strata.tools.run benchmarks/inputs/gpu_chain.mlir --target cuda --check --timing --repeat 5 2>&1 | tail -8
echo "== compute-sanitizer memcheck (7x1000 chain, edge tiles)"
compute-sanitizer --tool memcheck --print-limit 5 python3 -P -m strata.tools.run benchmarks/inputs/gpu_chain.mlir --target cuda --check 2>&1 | tail -4
echo "== benchmark"
python3 benchmarks/gpu_elementwise.py --json $OUT/bench.json 2>&1 | tee $OUT/bench.log
