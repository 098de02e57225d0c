"""Passes that stay on one level: canonicalization patterns, autodiff and its VJP rules,
fusion, memory planning and loop transforms (the transforms layer: imports dialects and
support only)."""
