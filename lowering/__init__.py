"""Passes that go down a level, one sub-package per level edge (graph_to_tile, tile_to_loops,
tile_to_gpu) and the translations out of the compiler (llvm, nvvm); tile_builder.py and
scalar_rules.py are shared by the edges."""
