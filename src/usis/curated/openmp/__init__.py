"""Hand-authored OpenMP facts: curated data files with a source note per fact."""
