/* spgemm: C = A B by Gustavson's row-by-row product over canonical CSR, C dense: row i of C is
 * zeroed, then every entry a_ik of A's row i adds a_ik times B's row k into it (a dense
 * accumulator row, which here is C's own row). Rows of A (and C) are shared among threads in
 * dynamic chunks. */
#include <stdint.h>
#include <string.h>

#define HB_SPGEMM(NAME, T)                                                                      \
    void NAME(const T *restrict A_data, const int64_t *restrict A_indices,                      \
              const int64_t *restrict A_indptr, const T *restrict B_data,                       \
              const int64_t *restrict B_indices, const int64_t *restrict B_indptr,              \
              T *restrict C, int64_t M, int64_t K, int64_t N, int64_t nnz_A, int64_t nnz_B,     \
              void *workspace, int64_t workspace_bytes) {                                       \
        (void)K;                                                                                \
        (void)nnz_A;                                                                            \
        (void)nnz_B;                                                                            \
        (void)workspace;                                                                        \
        (void)workspace_bytes;                                                                  \
        _Pragma("omp parallel for schedule(dynamic, 16)")                                       \
        for (int64_t i = 0; i < M; ++i) {                                                       \
            T *restrict row = C + i * N;                                                        \
            memset(row, 0, (size_t)N * sizeof(T));                                              \
            for (int64_t p = A_indptr[i]; p < A_indptr[i + 1]; ++p) {                           \
                const T a = A_data[p];                                                          \
                const int64_t k = A_indices[p];                                                 \
                for (int64_t q = B_indptr[k]; q < B_indptr[k + 1]; ++q)                         \
                    row[B_indices[q]] += a * B_data[q];                                         \
            }                                                                                   \
        }                                                                                       \
    }

HB_SPGEMM(spgemm_fp64, double)
HB_SPGEMM(spgemm_fp32, float)
