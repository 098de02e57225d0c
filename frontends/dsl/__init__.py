"""The module DSL front end: source text -> syntax tree (parser.py) -> module instances
(resolve.py) -> graph IR (lower.py, program.py); Hugging Face mapping in hf.py; the
standard library in std/. The Python API is `strata.dsl` (docs/dsl.md)."""
