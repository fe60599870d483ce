/* spmv in COO: y <- A x over (row, col, value) entries. Entries of one row may fall to different
 * threads, so each thread adds into its own copy of y (an OpenMP array reduction). */
#include <stdint.h>

#define HB_SPMV_COO(NAME, T)                                                                     \
    void NAME(const T *restrict A_data, const int64_t *restrict A_row,                           \
              const int64_t *restrict A_col, const T *restrict x, T *restrict y, int64_t M,      \
              int64_t N, int64_t nnz, void *workspace, int64_t workspace_bytes) {                \
        (void)N;                                                                                 \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        for (int64_t i = 0; i < M; ++i) y[i] = 0;                                                \
        if (M == 0) return;                                                                      \
        _Pragma("omp parallel for schedule(static) reduction(+ : y[:M])")                        \
        for (int64_t k = 0; k < nnz; ++k) y[A_row[k]] += A_data[k] * x[A_col[k]];                \
    }

HB_SPMV_COO(spmv_fp64, double)
HB_SPMV_COO(spmv_fp32, float)
