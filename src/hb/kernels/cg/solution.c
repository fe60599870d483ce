/* cg: conjugate gradients from x = 0 (Saad, Algorithm 6.18) until ||r|| <= tol ||b|| or max_iter
 * iterations. r, p and A p live in the workspace (3 N doubles); each iteration is two parallel
 * loops: the CSR product fused with p . Ap, then the updates of x and r fused with r . r, and
 * the update of p. */
#include <stdint.h>

void cg_fp64(const double *restrict A_data, const int64_t *restrict A_indices,
             const int64_t *restrict A_indptr, const double *restrict b, double *restrict x,
             int64_t N, int64_t nnz, double tol, int64_t max_iter, void *workspace,
             int64_t workspace_bytes) {
    (void)nnz;
    (void)workspace_bytes;
    double *restrict r = (double *)workspace;
    double *restrict p = r + N;
    double *restrict Ap = p + N;
    double rr = 0.0;
#pragma omp parallel for simd schedule(static) reduction(+ : rr)
    for (int64_t i = 0; i < N; ++i) {
        x[i] = 0.0;
        r[i] = b[i];
        p[i] = b[i];
        rr += b[i] * b[i];
    }
    const double stop = tol * tol * rr;
    for (int64_t it = 0; it < max_iter && rr > stop; ++it) {
        double pAp = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : pAp)
        for (int64_t i = 0; i < N; ++i) {
            double sum = 0.0;
            for (int64_t k = A_indptr[i]; k < A_indptr[i + 1]; ++k) sum += A_data[k] * p[A_indices[k]];
            Ap[i] = sum;
            pAp += p[i] * sum;
        }
        const double alpha = rr / pAp;
        double next = 0.0;
#pragma omp parallel for simd schedule(static) reduction(+ : next)
        for (int64_t i = 0; i < N; ++i) {
            x[i] += alpha * p[i];
            r[i] -= alpha * Ap[i];
            next += r[i] * r[i];
        }
        const double beta = next / rr;
        rr = next;
#pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < N; ++i) p[i] = r[i] + beta * p[i];
    }
}
