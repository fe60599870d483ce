"""scaled_add: y <- y + alpha * x, in place."""


def scaled_add_fp64(x, y, N, alpha, workspace, workspace_bytes):
    y += alpha * x
