/* spmm: C <- A B over canonical CSR (the default format), one row of A (and of C) per
 * iteration, rows shared among threads; each entry of A scales one contiguous row of B into the
 * row of C. The baseline, and the reference solution of the csr format. */
#include <stdint.h>

#define HB_SPMM(NAME, T)                                                                        \
    void NAME(const T *restrict A_data, const int64_t *restrict A_indices,                      \
              const int64_t *restrict A_indptr, const T *restrict B, T *restrict C, int64_t M,  \
              int64_t K, int64_t N, int64_t nnz, void *workspace, int64_t workspace_bytes) {    \
        (void)K;                                                                                \
        (void)nnz;                                                                              \
        (void)workspace;                                                                        \
        (void)workspace_bytes;                                                                  \
        _Pragma("omp parallel for schedule(dynamic, 64)")                                       \
        for (int64_t i = 0; i < M; ++i) {                                                       \
            T *restrict row = C + i * N;                                                        \
            for (int64_t j = 0; j < N; ++j) row[j] = 0;                                         \
            for (int64_t k = A_indptr[i]; k < A_indptr[i + 1]; ++k) {                           \
                const T a = A_data[k];                                                          \
                const T *restrict b = B + A_indices[k] * N;                                     \
                for (int64_t j = 0; j < N; ++j) row[j] += a * b[j];                             \
            }                                                                                   \
        }                                                                                       \
    }

HB_SPMM(spmm_fp64, double)
HB_SPMM(spmm_fp32, float)
