"""Tests of the usis package."""
