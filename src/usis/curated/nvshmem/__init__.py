"""Curated facts of the nvshmem corpus (hand-checked against NVIDIA's documentation, each with its source)."""
