"""tile → GPU kernels: thread mapping, shared memory, warp-shuffle reductions and barrier
placement (lower.py is the pass and describes the mapping)."""
