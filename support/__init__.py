"""The ground layer: errors, source locations and element types. It imports nothing of
Strata, so every other layer may import it."""
