/* gmres: restarted GMRES(m) from x = 0 (Saad, Algorithms 6.9 and 6.11): an Arnoldi basis by
 * modified Gram-Schmidt, the least-squares problem kept triangular by Givens rotations, x updated
 * at the end of every cycle, until the residual estimate reaches tol ||b||; every cycle starts
 * from the true residual b - A x. The vector work (CSR products, dot products, axpys) is shared
 * among threads; the (m + 1) x m Hessenberg system stays serial. Workspace: the basis V
 * ((m + 1) N), H ((m + 1) m), the rotations' cosines and sines, g and y. */
#include <math.h>
#include <stdint.h>

static void gmres_csr_product(const double *restrict data, const int64_t *restrict indices,
                              const int64_t *restrict indptr, const double *restrict v,
                              double *restrict out, int64_t N) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < N; ++i) {
        double sum = 0.0;
        for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k) sum += data[k] * v[indices[k]];
        out[i] = sum;
    }
}

static double gmres_dot(const double *restrict u, const double *restrict v, int64_t N) {
    double sum = 0.0;
#pragma omp parallel for simd schedule(static) reduction(+ : sum)
    for (int64_t i = 0; i < N; ++i) sum += u[i] * v[i];
    return sum;
}

void gmres_fp64(const double *restrict A_data, const int64_t *restrict A_indices,
                const int64_t *restrict A_indptr, const double *restrict b, double *restrict x,
                int64_t N, int64_t nnz, int64_t m, double tol, int64_t max_iter, void *workspace,
                int64_t workspace_bytes) {
    (void)nnz;
    (void)workspace_bytes;
    double *restrict V = (double *)workspace;
    double *restrict H = V + (m + 1) * N;
    double *restrict cs = H + (m + 1) * m;
    double *restrict sn = cs + m + 1;
    double *restrict g = sn + m + 1;
    double *restrict y = g + m + 1;
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < N; ++i) x[i] = 0.0;
    const double target = tol * sqrt(gmres_dot(b, b, N));
    for (int64_t cycle = 0; cycle < max_iter; ++cycle) {
        double *restrict r = V;
        gmres_csr_product(A_data, A_indices, A_indptr, x, r, N);
#pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < N; ++i) r[i] = b[i] - r[i];
        const double beta = sqrt(gmres_dot(r, r, N));
        if (beta <= target) return;
#pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < N; ++i) r[i] /= beta;
        g[0] = beta;
        int64_t steps = 0;
        double residual = beta;
        for (int64_t j = 0; j < m && residual > target; ++j) {
            double *restrict w = V + (j + 1) * N;
            gmres_csr_product(A_data, A_indices, A_indptr, V + j * N, w, N);
            for (int64_t i = 0; i <= j; ++i) {
                const double *restrict vi = V + i * N;
                const double h = gmres_dot(w, vi, N);
                H[i * m + j] = h;
#pragma omp parallel for simd schedule(static)
                for (int64_t t = 0; t < N; ++t) w[t] -= h * vi[t];
            }
            const double norm = sqrt(gmres_dot(w, w, N));
            H[(j + 1) * m + j] = norm;
            if (norm > 0.0) {
#pragma omp parallel for simd schedule(static)
                for (int64_t t = 0; t < N; ++t) w[t] /= norm;
            }
            for (int64_t i = 0; i < j; ++i) {  /* the earlier rotations on the new column */
                const double upper = H[i * m + j], lower = H[(i + 1) * m + j];
                H[i * m + j] = cs[i] * upper + sn[i] * lower;
                H[(i + 1) * m + j] = -sn[i] * upper + cs[i] * lower;
            }
            const double diag = H[j * m + j], below = H[(j + 1) * m + j];
            const double radius = hypot(diag, below);
            cs[j] = diag / radius;
            sn[j] = below / radius;
            H[j * m + j] = radius;
            H[(j + 1) * m + j] = 0.0;
            g[j + 1] = -sn[j] * g[j];
            g[j] = cs[j] * g[j];
            residual = fabs(g[j + 1]);
            steps = j + 1;
            if (norm == 0.0) break; /* the Krylov space is invariant: the solution is exact */
        }
        for (int64_t i = steps - 1; i >= 0; --i) {  /* back substitution of H y = g */
            double sum = g[i];
            for (int64_t t = i + 1; t < steps; ++t) sum -= H[i * m + t] * y[t];
            y[i] = sum / H[i * m + i];
        }
#pragma omp parallel for schedule(static)
        for (int64_t t = 0; t < N; ++t) {
            double sum = 0.0;
            for (int64_t i = 0; i < steps; ++i) sum += y[i] * V[i * N + t];
            x[t] += sum;
        }
    }
}
