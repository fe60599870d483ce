"""Provenance stage: a record (stage, method, from) for every value of every entry."""

from usis.provenance.records import (
    ProvenanceError,
    complete_provenance,
    method_mix,
    provenance_stage,
    record_for,
)

__all__ = [
    "ProvenanceError",
    "complete_provenance",
    "method_mix",
    "provenance_stage",
    "record_for",
]
