/* doitgen: A[r][q][:] <- A[r][q][:] C4. The (r, q) rows are independent and shared among threads
 * (collapsed); each is accumulated into its own sum buffer over the rows of C4 (a contiguous inner
 * loop), then copied back. */
#include <stdint.h>

#define HB_DOITGEN(NAME, T)                                                                      \
    void NAME(T *restrict A, const T *restrict C4, int64_t NR, int64_t NQ, int64_t NP,           \
              void *workspace, int64_t workspace_bytes) {                                        \
        (void)workspace_bytes;                                                                   \
        T *restrict sums = workspace;                                                            \
        _Pragma("omp parallel for schedule(static)")                                             \
        for (int64_t r = 0; r < NR; ++r) {                                                       \
            T *restrict sum = sums + r * NP;                                                     \
            for (int64_t q = 0; q < NQ; ++q) {                                                   \
                T *restrict a = A + (r * NQ + q) * NP;                                           \
                for (int64_t p = 0; p < NP; ++p) sum[p] = 0;                                     \
                for (int64_t s = 0; s < NP; ++s) {                                               \
                    const T as = a[s];                                                           \
                    for (int64_t p = 0; p < NP; ++p) sum[p] += as * C4[s * NP + p];              \
                }                                                                                \
                for (int64_t p = 0; p < NP; ++p) a[p] = sum[p];                                  \
            }                                                                                    \
        }                                                                                        \
    }

HB_DOITGEN(doitgen_fp64, double)
HB_DOITGEN(doitgen_fp32, float)
