"""Targets: cpu, cuda and reference, each one registered object that owns its pipeline,
its translator and its executable (target.py). Importing this package registers them
and, through them, fills the per-op registry (dialects/opinfo.py)."""

from strata.targets import cpu, cuda, reference  # noqa: F401
from strata.targets.target import Target, emit_kinds, register_target, target_for_emit, target_named, target_names

__all__ = ["Target", "emit_kinds", "register_target", "target_for_emit", "target_named", "target_names"]
