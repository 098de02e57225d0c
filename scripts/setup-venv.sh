#!/usr/bin/env bash
# Create .venv (if missing) and install Strata into it, editable, with its test tools.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${STRATA_VENV:-$root/.venv}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import strata" 2>/dev/null; then
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet -e "$root"
fi
echo "$venv"
