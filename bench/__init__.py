"""Benchmarks that print measured ratios against the memory-copy bound and the peers, in one run."""
