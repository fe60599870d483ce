"""Curated facts of the nccl corpus (hand-checked against NVIDIA's documentation, each with its source)."""
