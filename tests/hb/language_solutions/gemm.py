"""gemm: C <- alpha * A B + beta * C, the product staged in the workspace-free numpy way."""

import numpy as np


def gemm_fp64(A, B, C, NI, NJ, NK, alpha, beta, workspace, workspace_bytes):
    product = np.matmul(A, B)
    C *= beta
    C += alpha * product
