/* spmv in BCSR: y <- A x over dense [A_block_rows][A_block_cols] blocks, CSR over block rows.
 * The last block row and column may reach past M and N; those cells hold 0 and are skipped so
 * that x and y are never read or written out of bounds. */
#include <stdint.h>

#define HB_SPMV_BCSR(NAME, T)                                                                     \
    void NAME(const T *restrict A_data, const int64_t *restrict A_indices,                        \
              const int64_t *restrict A_indptr, const T *restrict x, T *restrict y, int64_t M,    \
              int64_t N, int64_t nnz, int64_t A_block_rows, int64_t A_block_cols,                 \
              int64_t A_nblocks, void *workspace, int64_t workspace_bytes) {                      \
        (void)nnz;                                                                                \
        (void)A_nblocks;                                                                          \
        (void)workspace;                                                                          \
        (void)workspace_bytes;                                                                    \
        const int64_t R = A_block_rows, C = A_block_cols;                                         \
        const int64_t block_rows = (M + R - 1) / R;                                               \
        _Pragma("omp parallel for schedule(static)")                                              \
        for (int64_t b = 0; b < block_rows; ++b) {                                                \
            const int64_t rows = (b + 1) * R <= M ? R : M - b * R;                                \
            for (int64_t r = 0; r < rows; ++r) {                                                  \
                T sum = 0;                                                                        \
                for (int64_t p = A_indptr[b]; p < A_indptr[b + 1]; ++p) {                         \
                    const int64_t first = A_indices[p] * C;                                       \
                    const int64_t cols = first + C <= N ? C : N - first;                          \
                    const T *block_row = A_data + (p * R + r) * C;                                \
                    for (int64_t c = 0; c < cols; ++c) sum += block_row[c] * x[first + c];        \
                }                                                                                 \
                y[b * R + r] = sum;                                                               \
            }                                                                                     \
        }                                                                                         \
    }

HB_SPMV_BCSR(spmv_fp64, double)
HB_SPMV_BCSR(spmv_fp32, float)
