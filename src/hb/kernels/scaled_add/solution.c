/* scaled_add: y <- y + alpha * x, one OpenMP loop. */
#include <stdint.h>

void scaled_add_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha,
                     void *workspace, int64_t workspace_bytes) {
    (void)workspace;
    (void)workspace_bytes;
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < N; ++i) y[i] += alpha * x[i];
}

void scaled_add_fp32(const float *restrict x, float *restrict y, int64_t N, float alpha,
                     void *workspace, int64_t workspace_bytes) {
    (void)workspace;
    (void)workspace_bytes;
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < N; ++i) y[i] += alpha * x[i];
}
