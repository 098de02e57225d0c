"""loops → LLVM IR with llvmlite (translate.py) and the MCJIT glue (jit.py)."""
