"""The numpy reference of hdiff: NPBench's operator on the interior. NPBench passes the interior's
output [I-4, J-4, K] and its coefficients apart from the halo-padded input; here all three share
the padded grid [I, J, K], the coefficients of the edge band unused and the edge band of the
output a copy of the input's (the points the operator does not reach keep their value, as the
halo of a model's field does). The inputs are the default uniform [-1, 1]: the operator is a
fixed combination of differences, with no conditioning to protect."""

from __future__ import annotations

import numpy as np


def reference(
    arrays: dict[str, np.ndarray], sizes: dict[str, int], scalars: dict[str, float]
) -> None:
    f, coeff, out = arrays["in_field"], arrays["coeff"], arrays["out_field"]
    zero, four = f.dtype.type(0.0), f.dtype.type(4.0)
    # the Laplacian at every point one or more columns from the edges: lap[a, b] is at (a+1, b+1)
    lap = four * f[1:-1, 1:-1] - (((f[2:, 1:-1] + f[:-2, 1:-1]) + f[1:-1, 2:]) + f[1:-1, :-2])
    # x fluxes between (a, b) and (a+1, b) for a in 1..I-3, b in 2..J-3, limited to zero where
    # they run with the field's gradient
    res = lap[1:, 1:-1] - lap[:-1, 1:-1]
    flx = np.where(res * (f[2:-1, 2:-2] - f[1:-2, 2:-2]) > zero, zero, res)
    res = lap[1:-1, 1:] - lap[1:-1, :-1]
    fly = np.where(res * (f[2:-2, 2:-1] - f[2:-2, 1:-2]) > zero, zero, res)
    out[...] = f
    out[2:-2, 2:-2] = f[2:-2, 2:-2] - coeff[2:-2, 2:-2] * (
        ((flx[1:] - flx[:-1]) + fly[:, 1:]) - fly[:, :-1]
    )
