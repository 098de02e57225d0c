"""`strata.lazy.nn`: as in PyTorch, `from strata.lazy.nn import functional as F`."""

from strata.lazy import functional

__all__ = ["functional"]
