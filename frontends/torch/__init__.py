"""The PyTorch front end: `torch.export` graphs translated into graph modules.

    from strata.frontends.torch import from_torch, import_program
    module = from_torch(model.eval(), (example_input,))     # one func.func @forward

Needs PyTorch (`pip install 'strata-compiler[torch]'`); `import strata` does not. The op
table is `SUPPORTED_OPS` (docs/torch-frontend.md lists it).
"""

from strata.frontends.torch.importer import ImportedProgram, export, from_torch, import_program
from strata.frontends.torch.values import location
from strata.frontends.torch.ops import SUPPORTED_OPS, TRANSLATIONS

__all__ = ["ImportedProgram", "SUPPORTED_OPS", "TRANSLATIONS", "export", "from_torch", "import_program", "location"]
