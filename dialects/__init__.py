"""Strata's IRDL dialects: `graph` (tensor programs), `tile` (kernels over a grid of tiles)
and `token` (memory ordering between tile loads and stores); the per-op registry
(opinfo.py) and the IR context and located parser (context.py)."""
