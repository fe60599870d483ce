"""jacobi_2d: TSTEPS pairs of 5-point sweeps A -> B -> A over the interior."""


def _sweep(source, target):
    target[1:-1, 1:-1] = 0.2 * (
        source[1:-1, 1:-1]
        + source[1:-1, :-2]
        + source[1:-1, 2:]
        + source[2:, 1:-1]
        + source[:-2, 1:-1]
    )


def jacobi_2d_fp64(A, B, N, TSTEPS, workspace, workspace_bytes):
    for _ in range(TSTEPS):
        _sweep(A, B)
        _sweep(B, A)
