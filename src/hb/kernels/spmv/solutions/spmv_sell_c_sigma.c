/* spmv in SELL-C-sigma: y <- A x over A_nslices slices of A_C rows, each slice column-major
 * (entry j of the slice's row i at A_slice_ptr[s] + j * A_C + i); padding slots have column -1,
 * and A_perm maps a permuted row back to its row. */
#include <stdint.h>

#define HB_SPMV_SELL(NAME, T)                                                                  \
    void NAME(const T *restrict A_data, const int64_t *restrict A_indices,                     \
              const int64_t *restrict A_perm, const int64_t *restrict A_slice_ptr,             \
              const T *restrict x, T *restrict y, int64_t M, int64_t N, int64_t nnz,           \
              int64_t A_C, int64_t A_nslices, void *workspace, int64_t workspace_bytes) {      \
        (void)N;                                                                               \
        (void)nnz;                                                                             \
        (void)workspace;                                                                       \
        (void)workspace_bytes;                                                                 \
        _Pragma("omp parallel for schedule(static)")                                           \
        for (int64_t s = 0; s < A_nslices; ++s) {                                              \
            const int64_t width = (A_slice_ptr[s + 1] - A_slice_ptr[s]) / A_C;                 \
            for (int64_t i = 0; i < A_C && s * A_C + i < M; ++i) {                             \
                T sum = 0;                                                                     \
                for (int64_t j = 0; j < width; ++j) {                                          \
                    const int64_t k = A_slice_ptr[s] + j * A_C + i;                            \
                    const int64_t col = A_indices[k];                                          \
                    if (col >= 0) sum += A_data[k] * x[col];                                   \
                }                                                                              \
                y[A_perm[s * A_C + i]] = sum;                                                  \
            }                                                                                  \
        }                                                                                      \
    }

HB_SPMV_SELL(spmv_fp64, double)
HB_SPMV_SELL(spmv_fp32, float)
