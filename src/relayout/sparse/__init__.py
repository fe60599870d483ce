"""Sparse arrays: their storage formats (formats: from and to the canonical CSR) and the C kernels
of the formats scipy lacks (kernels)."""
