"""strata-fuzz: differential fuzzing of the compiler against the reference interpreter.

`generate` makes seeded random graph programs, `differential` runs one on every target
and compares, `shrink` reduces a failing one to a minimal reproducer, `mutate` feeds the
parser and the npz reader mutated inputs, and `cli` is the command (docs/fuzzing.md).
"""
