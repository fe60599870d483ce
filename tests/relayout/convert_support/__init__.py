"""Helpers shared by the conversion tests: the rounding oracle and program generators."""
