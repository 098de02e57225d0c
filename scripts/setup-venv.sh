#!/usr/bin/env bash
# Create .venv (if missing) and install Strata into it, editable. An argument names extras
# to install too: `setup-venv.sh test` adds the test tools (pytest, pytest-xdist, lit, filecheck)
# and the PyTorch front end's torch (CPU build) and transformers; `setup-venv.sh torch` only those.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${STRATA_VENV:-$root/.venv}"
extras="${1:-}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
probe="import strata"
case ",$extras," in
    *,test,*) probe="import strata, pytest, xdist, lit, filecheck, torch, transformers" ;;
    *,torch,*) probe="import strata, torch, transformers" ;;
esac
if ! "$venv/bin/python" -c "$probe" 2>/dev/null; then
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    case ",$extras," in
        *,test,*|*,torch,*)
            # torch first, from PyTorch's CPU index: the default Linux wheel pulls gigabytes
            # of CUDA libraries the PyTorch front end never uses. Where that index cannot be
            # reached, the package index pip is configured with is tried instead.
            if ! "$venv/bin/python" -c "import torch" 2>/dev/null; then
                "$venv/bin/python" -m pip install --quiet --retries 1 --timeout 30 \
                    --index-url https://download.pytorch.org/whl/cpu torch \
                    || "$venv/bin/python" -m pip install --quiet torch
            fi ;;
    esac
    "$venv/bin/python" -m pip install --quiet -e "$root${extras:+[$extras]}"
fi
echo "$venv"
