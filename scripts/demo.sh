#!/usr/bin/env bash
# Strata's main job on the bundled transformer block: verify, optimize, execute, report.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$("$root/scripts/setup-venv.sh" | tail -n 1)"
exec "$venv/bin/python" "$root/examples/demo.py" "$@"
