"""usis: the Unified Semantic Interface Specification, its corpora and the tools to query them."""
