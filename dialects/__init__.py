"""Strata's IRDL dialects: `graph` (tensor programs); `tile` and `token` land with the CPU backend."""
