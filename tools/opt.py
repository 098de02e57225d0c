"""strata-opt: xdsl-opt with Strata's dialects and passes registered."""

from __future__ import annotations

import sys

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from strata.dialects.context import STRATA_DIALECTS, LocatingParser, verification_error
from strata.targets.passes import strata_passes
from strata.tools.diagnostics import run_reporting_errors


class StrataOptMain(xDSLOptMain):
    def register_all_dialects(self):
        super().register_all_dialects()
        for name, factory in STRATA_DIALECTS.items():
            self.ctx.register_dialect(name, factory)

    def parse_chunk(self, chunk, file_extension, start_offset=0) -> ModuleOp | None:
        """Parse with source locations and verify at once, so a diagnostic says where
        the offending op is (also under --split-input-file)."""
        if file_extension != "mlir":
            return super().parse_chunk(chunk, file_extension, start_offset)
        module = LocatingParser(
            self.ctx, chunk.read(), self.get_input_name(), start_offset
        ).parse_module(not self.args.no_implicit_module)
        if not self.args.disable_verify and (error := verification_error(module)):
            raise VerifyException(error)
        return module

    def register_all_passes(self):
        super().register_all_passes()
        for name, factory in strata_passes().items():
            self.register_pass(name, factory)


def main(argv: list[str] | None = None) -> int:
    return run_reporting_errors(
        "strata-opt",
        lambda: StrataOptMain(description="Strata modular optimizer driver", args=argv).run(),
    )


if __name__ == "__main__":
    sys.exit(main())
