"""spmv in ELL: y <- A x over [M, A_width] slots; a padding slot has column -1."""

import numpy as np


def spmv_fp64(A_data, A_indices, x, y, M, N, nnz, A_width, workspace, workspace_bytes):
    live = A_indices >= 0
    y[:] = np.where(live, A_data * x[np.where(live, A_indices, 0)], 0.0).sum(axis=1)
