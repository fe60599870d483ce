"""Provenance stage: a record (stage, method, from) for every value of every entry."""

from usis.provenance.records import (
    ProvenanceError,
    complete_provenance,
    method_mix,
    provenance_stage,
    record_for,
)
from usis.provenance.shipped import (
    compact_provenance,
    dump_provenance,
    expand_provenance,
    expand_records,
    family_links,
)

__all__ = [
    "ProvenanceError",
    "compact_provenance",
    "complete_provenance",
    "dump_provenance",
    "expand_provenance",
    "expand_records",
    "family_links",
    "method_mix",
    "provenance_stage",
    "record_for",
]
