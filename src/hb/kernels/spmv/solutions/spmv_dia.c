/* spmv in DIA: y <- A x over A_ndiag stored diagonals, A_data[k][j] = A[j - A_offsets[k]][j].
 * Row i meets diagonal k at column i + offset; columns outside [0, N) hold nothing. */
#include <stdint.h>

#define HB_SPMV_DIA(NAME, T)                                                                     \
    void NAME(const T *restrict A_data, const int64_t *restrict A_offsets, const T *restrict x,  \
              T *restrict y, int64_t M, int64_t N, int64_t nnz, int64_t A_ndiag,                 \
              void *workspace, int64_t workspace_bytes) {                                        \
        (void)nnz;                                                                               \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        _Pragma("omp parallel for schedule(static)")                                             \
        for (int64_t i = 0; i < M; ++i) {                                                        \
            T sum = 0;                                                                           \
            for (int64_t k = 0; k < A_ndiag; ++k) {                                              \
                const int64_t j = i + A_offsets[k];                                              \
                if (j >= 0 && j < N) sum += A_data[k * N + j] * x[j];                            \
            }                                                                                    \
            y[i] = sum;                                                                          \
        }                                                                                        \
    }

HB_SPMV_DIA(spmv_fp64, double)
HB_SPMV_DIA(spmv_fp32, float)
