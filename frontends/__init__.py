"""Where programs come in from: the builder (`strata.Graph`, `strata.ops`). Front ends
build verified `graph` modules; they import dialects and transforms, never lowering."""
