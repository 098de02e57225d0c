"""The numpy reference interpreter: every graph op's meaning (kernels.py) and the function
runner (interpreter.py). Compiled targets are tested against it."""
