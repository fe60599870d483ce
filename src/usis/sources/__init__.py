"""Pinned sources: the manifest of what each model is built from, and the fetch that downloads and caches it."""
