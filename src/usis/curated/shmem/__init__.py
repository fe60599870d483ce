"""Hand-authored OpenSHMEM facts: curated data files with a source note per fact."""
