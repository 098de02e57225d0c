"""Suite-wide settings, applied before any test module imports Strata.

The on-disk compile cache (runtime/compile_cache.py) goes to a temporary directory per
test process, never the user's ~/.cache/strata, and is off unless STRATA_CACHE is set:
a test that compiles a program another test (or an earlier run) compiled must still run
the whole compile it checks (timings, in-process JIT sharing). tests/test_compile_cache.py
turns it on for its own tests. Subprocesses (the tools' tests) inherit both variables.
"""

import atexit
import os
import shutil
import tempfile

_CACHE_DIR = tempfile.mkdtemp(prefix="strata-test-cache-")
os.environ["STRATA_CACHE_DIR"] = _CACHE_DIR
os.environ.setdefault("STRATA_CACHE", "0")
atexit.register(shutil.rmtree, _CACHE_DIR, ignore_errors=True)
