"""graph → tile: every graph function becomes a program of tile kernels (lower.py is the
pass; one module per op family registers its lowering in the op registry)."""
