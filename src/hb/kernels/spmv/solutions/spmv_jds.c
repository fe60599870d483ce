/* spmv in JDS: y <- A x over A_ndiag jagged diagonals of the rows sorted by decreasing length.
 * Permuted row r owns entry r of every diagonal longer than r; A_perm maps it back to its row. */
#include <stdint.h>

#define HB_SPMV_JDS(NAME, T)                                                                   \
    void NAME(const T *restrict A_data, const int64_t *restrict A_indices,                     \
              const int64_t *restrict A_perm, const int64_t *restrict A_jd_ptr,                \
              const T *restrict x, T *restrict y, int64_t M, int64_t N, int64_t nnz,           \
              int64_t A_ndiag, void *workspace, int64_t workspace_bytes) {                     \
        (void)N;                                                                               \
        (void)nnz;                                                                             \
        (void)workspace;                                                                       \
        (void)workspace_bytes;                                                                 \
        _Pragma("omp parallel for schedule(static)")                                           \
        for (int64_t r = 0; r < M; ++r) {                                                      \
            T sum = 0;                                                                         \
            for (int64_t d = 0; d < A_ndiag && A_jd_ptr[d] + r < A_jd_ptr[d + 1]; ++d) {       \
                const int64_t k = A_jd_ptr[d] + r;                                             \
                sum += A_data[k] * x[A_indices[k]];                                            \
            }                                                                                  \
            y[A_perm[r]] = sum;                                                                \
        }                                                                                      \
    }

HB_SPMV_JDS(spmv_fp64, double)
HB_SPMV_JDS(spmv_fp32, float)
