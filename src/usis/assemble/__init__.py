"""Assemble stage: supersedes inversion, `{T}` family concretization and explicit nulls."""
