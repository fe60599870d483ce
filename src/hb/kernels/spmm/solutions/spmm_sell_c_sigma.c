/* spmm in SELL-C-sigma: C <- A B over A_nslices slices of A_C rows of A, each slice column-major
 * (entry j of the slice's row i at A_slice_ptr[s] + j * A_C + i); padding slots have column -1,
 * and A_perm maps a permuted row back to its row of C. */
#include <stdint.h>

#define HB_SPMM_SELL(NAME, T)                                                                     \
    void NAME(const T *restrict A_data, const int64_t *restrict A_indices,                        \
              const int64_t *restrict A_perm, const int64_t *restrict A_slice_ptr,                \
              const T *restrict B, T *restrict C, int64_t M, int64_t K, int64_t N, int64_t nnz,   \
              int64_t A_C, int64_t A_nslices, void *workspace, int64_t workspace_bytes) {         \
        (void)K;                                                                                  \
        (void)nnz;                                                                                \
        (void)workspace;                                                                          \
        (void)workspace_bytes;                                                                    \
        _Pragma("omp parallel for schedule(dynamic, 8)")                                          \
        for (int64_t s = 0; s < A_nslices; ++s) {                                                 \
            const int64_t width = (A_slice_ptr[s + 1] - A_slice_ptr[s]) / A_C;                    \
            for (int64_t i = 0; i < A_C && s * A_C + i < M; ++i) {                                \
                T *restrict row = C + A_perm[s * A_C + i] * N;                                    \
                for (int64_t j = 0; j < N; ++j) row[j] = 0;                                       \
                for (int64_t w = 0; w < width; ++w) {                                             \
                    const int64_t k = A_slice_ptr[s] + w * A_C + i;                               \
                    if (A_indices[k] < 0) continue;                                               \
                    const T a = A_data[k];                                                        \
                    const T *restrict b = B + A_indices[k] * N;                                   \
                    for (int64_t j = 0; j < N; ++j) row[j] += a * b[j];                           \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }

HB_SPMM_SELL(spmm_fp64, double)
HB_SPMM_SELL(spmm_fp32, float)
