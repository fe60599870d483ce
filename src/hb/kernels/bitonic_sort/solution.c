/* bitonic_sort: Batcher's network over y (a copy of x), cache-blocked. Pair p of a pass at distance
 * j joins i = 2p - (p mod j) and i + j, ascending where i & k is zero (k the merge size), as a
 * branch-free min / max. Passes with j below the block of HB_BLOCK elements stay inside aligned
 * blocks, so each thread runs all of them over its own blocks without a barrier between passes:
 * first the whole network up to k = HB_BLOCK, then, for every larger k, the passes j >= HB_BLOCK
 * over the whole array (split over the threads) followed by the in-block passes. */
#include <stdint.h>

#define HB_BLOCK 4096

#define HB_BITONIC(NAME, T)                                                                        \
    static inline void NAME##_pass(T *restrict y, int64_t k, int64_t j, int64_t first,             \
                                   int64_t last) {                                                 \
        for (int64_t p = first; p < last; ++p) {                                                   \
            const int64_t i = 2 * p - (p & (j - 1));                                               \
            const T a = y[i], b = y[i + j];                                                        \
            const T lo = a < b ? a : b, hi = a < b ? b : a;                                        \
            const int up = (i & k) == 0;                                                           \
            y[i] = up ? lo : hi;                                                                   \
            y[i + j] = up ? hi : lo;                                                               \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    void NAME(const T *restrict x, T *restrict y, int64_t N, void *workspace,                      \
              int64_t workspace_bytes) {                                                           \
        (void)workspace;                                                                           \
        (void)workspace_bytes;                                                                     \
        const int64_t block = N < HB_BLOCK ? N : HB_BLOCK, blocks = N / block;                     \
        _Pragma("omp parallel")                                                                    \
        {                                                                                          \
            _Pragma("omp for schedule(static)")                                                    \
            for (int64_t b = 0; b < blocks; ++b) {                                                 \
                for (int64_t i = b * block; i < (b + 1) * block; ++i) y[i] = x[i];                 \
                for (int64_t k = 2; k <= block; k *= 2)                                            \
                    for (int64_t j = k / 2; j > 0; j /= 2)                                         \
                        NAME##_pass(y, k, j, b * block / 2, (b + 1) * block / 2);                  \
            }                                                                                      \
            for (int64_t k = 2 * block; k <= N; k *= 2) {                                          \
                for (int64_t j = k / 2; j >= block; j /= 2) {                                      \
                    _Pragma("omp for schedule(static)")                                            \
                    for (int64_t b = 0; b < blocks; ++b)                                           \
                        NAME##_pass(y, k, j, b * block / 2, (b + 1) * block / 2);                  \
                }                                                                                  \
                _Pragma("omp for schedule(static)")                                                \
                for (int64_t b = 0; b < blocks; ++b)                                               \
                    for (int64_t j = block / 2; j > 0; j /= 2)                                     \
                        NAME##_pass(y, k, j, b * block / 2, (b + 1) * block / 2);                  \
            }                                                                                      \
        }                                                                                          \
    }

HB_BITONIC(bitonic_sort_fp64, double)
HB_BITONIC(bitonic_sort_fp32, float)
