#!/usr/bin/env bash
# Create .venv (if missing) and install Strata into it, editable. An argument names extras
# to install too: `setup-venv.sh test` adds the test tools (pytest, pytest-xdist, lit, filecheck).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${STRATA_VENV:-$root/.venv}"
extras="${1:-}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
probe="import strata"
if [ "$extras" = "test" ]; then
    probe="import strata, pytest, xdist, lit, filecheck"
fi
if ! "$venv/bin/python" -c "$probe" 2>/dev/null; then
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet -e "$root${extras:+[$extras]}"
fi
echo "$venv"
