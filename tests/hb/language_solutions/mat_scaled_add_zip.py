"""mat_scaled_add with A and B zipped (stacked last): one [M, N, 2] array, field 1 written."""


def mat_scaled_add_fp64(AB, M, N, alpha, workspace, workspace_bytes):
    assert AB.shape == (M, N, 2)
    AB[:, :, 1] += alpha * AB[:, :, 0]
