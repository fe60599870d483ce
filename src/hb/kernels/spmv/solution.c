/* spmv: y <- A x over canonical CSR (the default format), one row per iteration, rows shared
 * among threads. The baseline, and the reference solution of the csr format. */
#include <stdint.h>

#define HB_SPMV_CSR(NAME, T)                                                                   \
    void NAME(const T *restrict A_data, const int64_t *restrict A_indices,                     \
              const int64_t *restrict A_indptr, const T *restrict x, T *restrict y, int64_t M, \
              int64_t N, int64_t nnz, void *workspace, int64_t workspace_bytes) {              \
        (void)N;                                                                               \
        (void)nnz;                                                                             \
        (void)workspace;                                                                       \
        (void)workspace_bytes;                                                                 \
        _Pragma("omp parallel for schedule(static)")                                           \
        for (int64_t i = 0; i < M; ++i) {                                                      \
            T sum = 0;                                                                         \
            for (int64_t k = A_indptr[i]; k < A_indptr[i + 1]; ++k)                            \
                sum += A_data[k] * x[A_indices[k]];                                            \
            y[i] = sum;                                                                        \
        }                                                                                      \
    }

HB_SPMV_CSR(spmv_fp64, double)
HB_SPMV_CSR(spmv_fp32, float)
