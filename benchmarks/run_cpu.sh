#!/bin/bash
# Every CPU benchmark in order, each printing its machine/command header and its table:
#
#     benchmarks/run_cpu.sh               # the numbers for the closing note
#     QUICK=1 benchmarks/run_cpu.sh       # small repeat counts: checks that everything runs
#
# Sets no thread variables: the ones in the environment are printed first (and each
# script's header repeats them in its command line). GPT-2 runs when `transformers` is
# installed. Exits nonzero if any benchmark failed (the others still run).
set -o pipefail
cd "$(dirname "$0")" || exit 1
PYTHON=${PYTHON:-python}
export PYTHONUNBUFFERED=1

echo "# Strata CPU benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC'), git $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD -- .. 2>/dev/null || echo ' (+ uncommitted changes)')"
for v in OMP_NUM_THREADS OPENBLAS_NUM_THREADS MKL_NUM_THREADS STRATA_NUM_THREADS STRATA_CACHE; do
  echo "$v=${!v-(unset)}"
done
echo "cores: $(nproc), load average: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ -n "$QUICK" ]; then R=2; else R=""; fi
rep() { [ -n "$R" ] && echo "--repeat $1"; }  # QUICK's repeat count, else the script's default

failed=()
run() {
  echo
  echo "== $*"
  local start=$SECONDS
  "$PYTHON" "$@" || failed+=("$1")
  echo "($((SECONDS - start)) s)"
}

run cpu_rows.py $(rep $R)
run cpu_elementwise.py $(rep $R)
run cpu_matmul.py $(rep $R)
run cpu_models.py $(rep $R)
run cpu_training.py $(rep $R)
run compile_profile.py
run compile_scaling.py $([ -n "$QUICK" ] && echo "--ops 250 500")
run memory_plan.py
if "$PYTHON" -c "import transformers" 2>/dev/null; then
  if [ -n "$QUICK" ]; then
    run gpt2.py --target cpu --config tiny --batch 1 --no-inductor --no-warm --repeat 2
  else
    run gpt2.py --target cpu
  fi
else
  echo; echo "== gpt2.py: skipped (transformers is not installed)"
fi

echo
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all CPU benchmarks ran"
