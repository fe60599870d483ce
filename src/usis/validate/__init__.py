"""Validate stage: the schema (jsonschema, Draft 2020-12) and the consistency rules beyond it."""
