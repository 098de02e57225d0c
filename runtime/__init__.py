"""What runs programs: the reference interpreter (the oracle), lowered programs and their
buffer bindings, the CPU and CUDA runtimes."""
