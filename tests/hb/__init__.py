"""Tests of the hb package."""
