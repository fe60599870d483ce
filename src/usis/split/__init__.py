"""Split stage: writes the shipped per-model corpus and provenance files."""
