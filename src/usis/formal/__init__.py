"""The formal layer: the reference grammar, the shape catalog and the expander that inlines `semantics.formal`."""
