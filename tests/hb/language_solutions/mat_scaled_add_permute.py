"""mat_scaled_add with A permuted (order i1, i0): A arrives as an [N, M] array."""


def mat_scaled_add_fp64(A, B, M, N, alpha, workspace, workspace_bytes):
    assert A.shape == (N, M) and B.shape == (M, N)
    B += alpha * A.T
