"""tile → loops (CPU): every tile.kernel becomes a function of scf loop nests (lower.py is
the pass)."""
