/* spmm in ELL: C <- A B over [M][A_width] slots per row of A; a padding slot has column -1. */
#include <stdint.h>

#define HB_SPMM_ELL(NAME, T)                                                                    \
    void NAME(const T *restrict A_data, const int64_t *restrict A_indices, const T *restrict B, \
              T *restrict C, int64_t M, int64_t K, int64_t N, int64_t nnz, int64_t A_width,     \
              void *workspace, int64_t workspace_bytes) {                                       \
        (void)K;                                                                                \
        (void)nnz;                                                                              \
        (void)workspace;                                                                        \
        (void)workspace_bytes;                                                                  \
        _Pragma("omp parallel for schedule(static)")                                            \
        for (int64_t i = 0; i < M; ++i) {                                                       \
            T *restrict row = C + i * N;                                                        \
            for (int64_t j = 0; j < N; ++j) row[j] = 0;                                         \
            for (int64_t s = i * A_width; s < (i + 1) * A_width; ++s) {                         \
                if (A_indices[s] < 0) continue;                                                 \
                const T a = A_data[s];                                                          \
                const T *restrict b = B + A_indices[s] * N;                                     \
                for (int64_t j = 0; j < N; ++j) row[j] += a * b[j];                             \
            }                                                                                   \
        }                                                                                       \
    }

HB_SPMM_ELL(spmm_fp64, double)
HB_SPMM_ELL(spmm_fp32, float)
