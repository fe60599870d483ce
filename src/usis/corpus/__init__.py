"""The built corpora, shipped as package data: final-<model>-api.json and provenance-<model>.json."""
