"""Assemble stage: supersedes inversion, `{T}` family concretization and explicit nulls."""

from usis.assemble.stage import AssembleError, assemble, concretize_text

__all__ = ["AssembleError", "assemble", "concretize_text"]
