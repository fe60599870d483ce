"""The test suite of the hb repository."""
