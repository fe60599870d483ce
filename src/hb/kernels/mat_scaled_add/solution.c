/* mat_scaled_add: B <- B + alpha * A, rows shared among the OpenMP threads. */
#include <stdint.h>

void mat_scaled_add_fp64(const double *restrict A, double *restrict B, int64_t M, int64_t N,
                         double alpha, void *workspace, int64_t workspace_bytes) {
    (void)workspace;
    (void)workspace_bytes;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) B[i * N + j] += alpha * A[i * N + j];
}

void mat_scaled_add_fp32(const float *restrict A, float *restrict B, int64_t M, int64_t N,
                         float alpha, void *workspace, int64_t workspace_bytes) {
    (void)workspace;
    (void)workspace_bytes;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) B[i * N + j] += alpha * A[i * N + j];
}
