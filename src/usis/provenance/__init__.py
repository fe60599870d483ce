"""Provenance stage: a record (stage, method, from) for every value of every entry."""
