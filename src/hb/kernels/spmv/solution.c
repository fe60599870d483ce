/* spmv: y <- A x over canonical CSR, one row per iteration. */
#include <stdint.h>

void spmv_fp64(const double *restrict A_data, const int64_t *restrict A_indices,
               const int64_t *restrict A_indptr, const double *restrict x, double *restrict y,
               int64_t M, int64_t N, int64_t nnz, void *workspace, int64_t workspace_bytes) {
    (void)N;
    (void)nnz;
    (void)workspace;
    (void)workspace_bytes;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < M; ++i) {
        double sum = 0.0;
        for (int64_t k = A_indptr[i]; k < A_indptr[i + 1]; ++k) sum += A_data[k] * x[A_indices[k]];
        y[i] = sum;
    }
}

void spmv_fp32(const float *restrict A_data, const int64_t *restrict A_indices,
               const int64_t *restrict A_indptr, const float *restrict x, float *restrict y,
               int64_t M, int64_t N, int64_t nnz, void *workspace, int64_t workspace_bytes) {
    (void)N;
    (void)nnz;
    (void)workspace;
    (void)workspace_bytes;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < M; ++i) {
        float sum = 0.0f;
        for (int64_t k = A_indptr[i]; k < A_indptr[i + 1]; ++k) sum += A_data[k] * x[A_indices[k]];
        y[i] = sum;
    }
}
