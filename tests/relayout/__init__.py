"""Tests of the relayout package."""
