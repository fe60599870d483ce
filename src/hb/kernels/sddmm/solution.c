/* sddmm: out[k] = S_data[k] * (A[i,:] . B[j,:]) over the entries k = (i, j) of S in canonical CSR,
 * one row of S per iteration, rows shared among threads (dynamic chunks: rows differ in length
 * under other formats' orderings); each entry is a contiguous K-term dot product of two rows. */
#include <stdint.h>

#define HB_SDDMM(NAME, T)                                                                      \
    void NAME(const T *restrict S_data, const int64_t *restrict S_indices,                     \
              const int64_t *restrict S_indptr, const T *restrict A, const T *restrict B,      \
              T *restrict out, int64_t M, int64_t N, int64_t K, int64_t nnz, void *workspace,  \
              int64_t workspace_bytes) {                                                       \
        (void)N;                                                                               \
        (void)nnz;                                                                             \
        (void)workspace;                                                                       \
        (void)workspace_bytes;                                                                 \
        _Pragma("omp parallel for schedule(dynamic, 64)")                                      \
        for (int64_t i = 0; i < M; ++i) {                                                      \
            const T *restrict a = A + i * K;                                                   \
            for (int64_t k = S_indptr[i]; k < S_indptr[i + 1]; ++k) {                          \
                const T *restrict b = B + S_indices[k] * K;                                    \
                T dot = 0;                                                                     \
                _Pragma("omp simd reduction(+ : dot)")                                         \
                for (int64_t t = 0; t < K; ++t) dot += a[t] * b[t];                            \
                out[k] = S_data[k] * dot;                                                      \
            }                                                                                  \
        }                                                                                      \
    }

HB_SDDMM(sddmm_fp64, double)
HB_SDDMM(sddmm_fp32, float)
