"""GPU kernels → NVVM IR → PTX through libNVVM (translate.py), and the barrier-safety checks
on the PTX (ptx_checks.py)."""
