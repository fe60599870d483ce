"""hb: a judge for parallel kernels — catalog, builds, timed runs, grading and the requests API."""
