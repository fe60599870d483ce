/* spmv in CSC: y <- A x column by column. Columns scatter into every row, so each thread adds
 * into its own copy of y (an OpenMP array reduction) instead of racing on shared rows. */
#include <stdint.h>

#define HB_SPMV_CSC(NAME, T)                                                                   \
    void NAME(const T *restrict A_data, const int64_t *restrict A_indices,                     \
              const int64_t *restrict A_indptr, const T *restrict x, T *restrict y, int64_t M, \
              int64_t N, int64_t nnz, void *workspace, int64_t workspace_bytes) {              \
        (void)nnz;                                                                             \
        (void)workspace;                                                                       \
        (void)workspace_bytes;                                                                 \
        for (int64_t i = 0; i < M; ++i) y[i] = 0;                                              \
        if (M == 0) return;                                                                    \
        _Pragma("omp parallel for schedule(static) reduction(+ : y[:M])")                      \
        for (int64_t j = 0; j < N; ++j) {                                                      \
            const T xj = x[j];                                                                 \
            for (int64_t k = A_indptr[j]; k < A_indptr[j + 1]; ++k)                            \
                y[A_indices[k]] += A_data[k] * xj;                                             \
        }                                                                                      \
    }

HB_SPMV_CSC(spmv_fp64, double)
HB_SPMV_CSC(spmv_fp32, float)
