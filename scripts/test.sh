#!/usr/bin/env bash
# Run every test: lit/FileCheck suites, then pytest. Creates .venv on first use.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$("$root/scripts/setup-venv.sh" test | tail -n 1)"
export PATH="$venv/bin:$PATH"
cd "$root"
lit -sv tests/filecheck
python -m pytest -q -n "${STRATA_TEST_WORKERS:-2}" tests "$@"
# The op suites once more for the GPU without a GPU: PTX for every program, barrier-checked
# and accepted by ptxas (tests/targets.py).
STRATA_TEST_TARGET=ptx python -m pytest -q -n "${STRATA_TEST_WORKERS:-2}" tests/test_cpu.py tests/test_fusion.py "$@"
