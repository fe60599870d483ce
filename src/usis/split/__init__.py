"""Split stage: writes the shipped per-model corpus and provenance files."""

from usis.split.files import (
    corpus_file_name,
    dump_json,
    provenance_file_name,
    split,
    write_files,
)

__all__ = [
    "corpus_file_name",
    "dump_json",
    "provenance_file_name",
    "split",
    "write_files",
]
