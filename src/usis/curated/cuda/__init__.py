"""Curated facts of the cuda corpus (hand-checked against NVIDIA's documentation, each with its source)."""
