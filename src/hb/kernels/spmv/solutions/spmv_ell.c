/* spmv in ELL: y <- A x over [M][A_width] slots per row; a padding slot has column -1. */
#include <stdint.h>

#define HB_SPMV_ELL(NAME, T)                                                                    \
    void NAME(const T *restrict A_data, const int64_t *restrict A_indices, const T *restrict x, \
              T *restrict y, int64_t M, int64_t N, int64_t nnz, int64_t A_width,                \
              void *workspace, int64_t workspace_bytes) {                                       \
        (void)N;                                                                                \
        (void)nnz;                                                                              \
        (void)workspace;                                                                        \
        (void)workspace_bytes;                                                                  \
        _Pragma("omp parallel for schedule(static)")                                            \
        for (int64_t i = 0; i < M; ++i) {                                                       \
            T sum = 0;                                                                          \
            for (int64_t s = i * A_width; s < (i + 1) * A_width; ++s) {                         \
                const int64_t col = A_indices[s];                                               \
                if (col >= 0) sum += A_data[s] * x[col];                                        \
            }                                                                                   \
            y[i] = sum;                                                                         \
        }                                                                                       \
    }

HB_SPMV_ELL(spmv_fp64, double)
HB_SPMV_ELL(spmv_fp32, float)
