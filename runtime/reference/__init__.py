"""The numpy reference interpreter: every graph op's meaning (kernels.py) and the function
runner (interpreter.py). Compiled targets are tested against it."""

# Imported for their registrations: every op's numpy meaning, which the interpreter looks up
# (opinfo.evaluate), is there as soon as any part of the interpreter is.
from strata.runtime.reference import kernels, vsla_kernels  # noqa: F401
