"""The catalog's PolyBench references against PolyBench 4.2's loops themselves: where a reference
computes the kernel another way (a library factorisation, a filter, one anti-diagonal at a time,
a triangle of a product), the literal loop nest, transcribed here, gives the same outputs at
preset S on the reference's own inputs."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from hb import kernels

Arrays = dict[str, np.ndarray]
Scalars = dict[str, float]


def syrk(a: Arrays, s: Scalars) -> None:
    C, A = a["C"], a["A"]
    n, m = A.shape
    for i in range(n):
        for j in range(i + 1):
            C[i, j] *= s["beta"]
        for k in range(m):
            for j in range(i + 1):
                C[i, j] += s["alpha"] * A[i, k] * A[j, k]


def syr2k(a: Arrays, s: Scalars) -> None:
    C, A, B = a["C"], a["A"], a["B"]
    n, m = A.shape
    for i in range(n):
        for j in range(i + 1):
            C[i, j] *= s["beta"]
        for k in range(m):
            for j in range(i + 1):
                C[i, j] += A[j, k] * s["alpha"] * B[i, k] + B[j, k] * s["alpha"] * A[i, k]


def trmm(a: Arrays, s: Scalars) -> None:
    A, B = a["A"], a["B"]
    m, n = B.shape
    for i in range(m):
        for j in range(n):
            for k in range(i + 1, m):
                B[i, j] += A[k, i] * B[k, j]
            B[i, j] = s["alpha"] * B[i, j]


def symm(a: Arrays, s: Scalars) -> None:
    C, A, B = a["C"], a["A"], a["B"]
    m, n = C.shape
    for i in range(m):
        for j in range(n):
            temp2 = 0.0
            for k in range(i):
                C[k, j] += s["alpha"] * B[i, j] * A[i, k]
                temp2 += B[k, j] * A[i, k]
            C[i, j] = s["beta"] * C[i, j] + s["alpha"] * B[i, j] * A[i, i] + s["alpha"] * temp2


def gemver(a: Arrays, s: Scalars) -> None:
    A, x, w = a["A"], a["x"], a["w"]
    n = A.shape[0]
    for i in range(n):
        for j in range(n):
            A[i, j] = A[i, j] + a["u1"][i] * a["v1"][j] + a["u2"][i] * a["v2"][j]
    for i in range(n):
        for j in range(n):
            x[i] = x[i] + s["beta"] * A[j, i] * a["y"][j]
    for i in range(n):
        x[i] = x[i] + a["z"][i]
    for i in range(n):
        for j in range(n):
            w[i] = w[i] + s["alpha"] * A[i, j] * x[j]


def cholesky(a: Arrays, s: Scalars) -> None:
    A = a["A"]
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            for k in range(j):
                A[i, j] -= A[i, k] * A[j, k]
            A[i, j] /= A[j, j]
        for k in range(i):
            A[i, i] -= A[i, k] * A[i, k]
        A[i, i] = math.sqrt(A[i, i])


def lu(a: Arrays, s: Scalars) -> None:
    A = a["A"]
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            for k in range(j):
                A[i, j] -= A[i, k] * A[k, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            for k in range(i):
                A[i, j] -= A[i, k] * A[k, j]


def ludcmp(a: Arrays, s: Scalars) -> None:
    lu(a, s)
    A, b, x, y = a["A"], a["b"], a["x"], a["y"]
    n = A.shape[0]
    for i in range(n):
        w = b[i]
        for j in range(i):
            w -= A[i, j] * y[j]
        y[i] = w
    for i in range(n - 1, -1, -1):
        w = y[i]
        for j in range(i + 1, n):
            w -= A[i, j] * x[j]
        x[i] = w / A[i, i]


def trisolv(a: Arrays, s: Scalars) -> None:
    L, x, b = a["L"], a["x"], a["b"]
    for i in range(L.shape[0]):
        x[i] = b[i]
        for j in range(i):
            x[i] -= L[i, j] * x[j]
        x[i] = x[i] / L[i, i]


def gramschmidt(a: Arrays, s: Scalars) -> None:
    A, R, Q = a["A"], a["R"], a["Q"]
    m, n = A.shape
    for k in range(n):
        nrm = 0.0
        for i in range(m):
            nrm += A[i, k] * A[i, k]
        R[k, k] = math.sqrt(nrm)
        for i in range(m):
            Q[i, k] = A[i, k] / R[k, k]
        for j in range(k + 1, n):
            R[k, j] = 0.0
            for i in range(m):
                R[k, j] += Q[i, k] * A[i, j]
            for i in range(m):
                A[i, j] = A[i, j] - Q[i, k] * R[k, j]


def durbin(a: Arrays, s: Scalars) -> None:
    r, y = a["r"], a["y"]
    n = r.shape[0]
    z = np.zeros(n)
    y[0] = -r[0]
    beta, alpha = 1.0, -r[0]
    for k in range(1, n):
        beta = (1 - alpha * alpha) * beta
        total = 0.0
        for i in range(k):
            total += r[k - i - 1] * y[i]
        alpha = -(r[k] + total) / beta
        for i in range(k):
            z[i] = y[i] + alpha * y[k - i - 1]
        for i in range(k):
            y[i] = z[i]
        y[k] = alpha


def correlation(a: Arrays, s: Scalars) -> None:
    data, corr, mean, stddev = a["data"], a["corr"], a["mean"], a["stddev"]
    n, m = data.shape
    for j in range(m):
        mean[j] = sum(data[i, j] for i in range(n)) / n
    for j in range(m):
        stddev[j] = math.sqrt(sum((data[i, j] - mean[j]) ** 2 for i in range(n)) / n)
        stddev[j] = 1.0 if stddev[j] <= 0.1 else stddev[j]
    for i in range(n):
        for j in range(m):
            data[i, j] -= mean[j]
            data[i, j] /= math.sqrt(n) * stddev[j]
    for i in range(m - 1):
        corr[i, i] = 1.0
        for j in range(i + 1, m):
            corr[i, j] = sum(data[k, i] * data[k, j] for k in range(n))
            corr[j, i] = corr[i, j]
    corr[m - 1, m - 1] = 1.0


def covariance(a: Arrays, s: Scalars) -> None:
    data, cov, mean = a["data"], a["cov"], a["mean"]
    n, m = data.shape
    for j in range(m):
        mean[j] = sum(data[i, j] for i in range(n)) / n
    for i in range(n):
        for j in range(m):
            data[i, j] -= mean[j]
    for i in range(m):
        for j in range(i, m):
            cov[i, j] = sum(data[k, i] * data[k, j] for k in range(n)) / (n - 1.0)
            cov[j, i] = cov[i, j]


def floyd_warshall(a: Arrays, s: Scalars) -> None:
    paths = a["paths"]
    n = paths.shape[0]
    for k in range(n):
        for i in range(n):
            for j in range(n):
                through = paths[i, k] + paths[k, j]
                paths[i, j] = paths[i, j] if paths[i, j] < through else through


def nussinov(a: Arrays, s: Scalars) -> None:
    seq, table = a["seq"], a["table"]
    n = seq.shape[0]
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            if j - 1 >= 0:
                table[i, j] = max(table[i, j], table[i, j - 1])
            if i + 1 < n:
                table[i, j] = max(table[i, j], table[i + 1, j])
            if j - 1 >= 0 and i + 1 < n:
                if i < j - 1:
                    match = 1 if seq[i] + seq[j] == 3 else 0
                    table[i, j] = max(table[i, j], table[i + 1, j - 1] + match)
                else:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1])
            for k in range(i + 1, j):
                table[i, j] = max(table[i, j], table[i, k] + table[k + 1, j])


def deriche(a: Arrays, s: Scalars) -> None:
    img_in, img_out = a["imgIn"], a["imgOut"]
    w, h = img_in.shape
    alpha = s["alpha"]
    k = (1.0 - math.exp(-alpha)) ** 2 / (
        1.0 + 2.0 * alpha * math.exp(-alpha) - math.exp(2.0 * alpha)
    )
    a1 = a5 = k
    a2 = a6 = k * math.exp(-alpha) * (alpha - 1.0)
    a3 = a7 = k * math.exp(-alpha) * (alpha + 1.0)
    a4 = a8 = -k * math.exp(-2.0 * alpha)
    b1, b2 = 2.0**-alpha, -math.exp(-2.0 * alpha)
    y1, y2 = np.zeros((w, h)), np.zeros((w, h))
    for i in range(w):
        ym1 = ym2 = xm1 = 0.0
        for j in range(h):
            y1[i, j] = a1 * img_in[i, j] + a2 * xm1 + b1 * ym1 + b2 * ym2
            xm1, ym2, ym1 = img_in[i, j], ym1, y1[i, j]
    for i in range(w):
        yp1 = yp2 = xp1 = xp2 = 0.0
        for j in range(h - 1, -1, -1):
            y2[i, j] = a3 * xp1 + a4 * xp2 + b1 * yp1 + b2 * yp2
            xp2, xp1, yp2, yp1 = xp1, img_in[i, j], yp1, y2[i, j]
    img_out[...] = y1 + y2
    for j in range(h):
        tm1 = ym1 = ym2 = 0.0
        for i in range(w):
            y1[i, j] = a5 * img_out[i, j] + a6 * tm1 + b1 * ym1 + b2 * ym2
            tm1, ym2, ym1 = img_out[i, j], ym1, y1[i, j]
    for j in range(h):
        tp1 = tp2 = yp1 = yp2 = 0.0
        for i in range(w - 1, -1, -1):
            y2[i, j] = a7 * tp1 + a8 * tp2 + b1 * yp1 + b2 * yp2
            tp2, tp1, yp2, yp1 = tp1, img_out[i, j], yp1, y2[i, j]
    img_out[...] = y1 + y2


LOOPS: dict[str, Callable[[Arrays, Scalars], None]] = {
    f.__name__: f
    for f in (syrk, syr2k, trmm, symm, gemver, cholesky, lu, ludcmp, trisolv, gramschmidt,
              durbin, correlation, covariance, floyd_warshall, nussinov, deriche)
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_reference_is_polybenchs_loop_nest(name: str) -> None:
    manifest = kernels.load_manifest(name)
    sizes, scalars = manifest.preset_sizes("S"), manifest.preset_scalars("S")
    inputs = kernels.make_inputs(manifest, sizes, 5, np.dtype(np.float64))
    want = kernels.reference_outputs(manifest, inputs, sizes, scalars)
    arrays = {
        n: v.astype(np.float64) if v.dtype.kind == "f" else v.copy() for n, v in inputs.items()
    }
    LOOPS[name](arrays, scalars)
    for output in kernels.output_names(manifest):
        np.testing.assert_allclose(
            arrays[output], want[output], rtol=1e-10, atol=1e-12, err_msg=f"{name}.{output}"
        )
