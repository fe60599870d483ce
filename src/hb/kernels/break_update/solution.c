/* break_update (TSVC s482): the exit index is searched first (blocks of 4096 elements are handed
 * out in order (dynamic schedule); a thread skips a block that starts past the first match found
 * so far, and the smallest match wins (an atomic minimum)), then the prefix up to it is updated
 * in one parallel SIMD loop. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                                 \
    void NAME(const T *restrict b, const T *restrict c, T *restrict a, int64_t N,                          \
          void *workspace, int64_t workspace_bytes) {                                                      \
        (void)workspace;                                                                                   \
        (void)workspace_bytes;                                                                             \
        int64_t first = N;                                                                                 \
        _Pragma("omp parallel for schedule(dynamic, 1)")                                                   \
        for (int64_t start = 0; start < N; start += 4096) {                                                \
            if (start >= __atomic_load_n(&first, __ATOMIC_RELAXED)) continue;                              \
            const int64_t end = start + 4096 < N ? start + 4096 : N;                                       \
            for (int64_t i = start; i < end; ++i)                                                          \
                if (c[i] > b[i]) {                                                                         \
                    int64_t seen = __atomic_load_n(&first, __ATOMIC_RELAXED);                              \
                    while (i < seen && !__atomic_compare_exchange_n(&first, &seen, i, 0, __ATOMIC_RELAXED, \
                                                                    __ATOMIC_RELAXED)) {                   \
                    }                                                                                      \
                    break;                                                                                 \
                }                                                                                          \
        }                                                                                                  \
        const int64_t stop = first < N ? first + 1 : N;                                                    \
        _Pragma("omp parallel for simd schedule(static)")                                                  \
        for (int64_t i = 0; i < stop; ++i) a[i] += b[i] * c[i];                                            \
    }

HB_KERNEL(break_update_fp64, double)
HB_KERNEL(break_update_fp32, float)
