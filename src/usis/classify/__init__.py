"""Classify stage: one module per model (`usis.classify.<model>`) turns raw records into schema-complete entries, formal assignments and provenance."""
