"""Strata's dialects and passes for every xDSL tool: registered under the `xdsl.universe`
entry point (pyproject.toml), so plain `xdsl-opt` parses and prints graph, tile and token
IR and runs Strata's passes and named pipelines (`xdsl-opt -p cpu-pipeline`)."""

from __future__ import annotations

from xdsl.universe import Universe

from strata.dialects.context import STRATA_DIALECTS

# Imported for its registrations: the named pipelines of every target.
from strata import targets  # noqa: F401
from strata.targets.passes import strata_passes

STRATA_UNIVERSE = Universe(all_dialects=dict(STRATA_DIALECTS), all_passes=strata_passes())
