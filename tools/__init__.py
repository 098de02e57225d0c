"""The command-line programs: strata-opt, strata-run, strata-translate."""
