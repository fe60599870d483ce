/* first_above (TSVC s332): blocks of 4096 elements are handed out in order (dynamic schedule); a
 * thread skips a block that starts past the first match found so far, and the smallest match wins
 * (an atomic minimum). */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                                 \
    void NAME(const T *restrict a, int64_t *restrict index, T *restrict value, int64_t N, T t,             \
          void *workspace, int64_t workspace_bytes) {                                                      \
        (void)workspace;                                                                                   \
        (void)workspace_bytes;                                                                             \
        int64_t first = N;                                                                                 \
        _Pragma("omp parallel for schedule(dynamic, 1)")                                                   \
        for (int64_t start = 0; start < N; start += 4096) {                                                \
            if (start >= __atomic_load_n(&first, __ATOMIC_RELAXED)) continue;                              \
            const int64_t end = start + 4096 < N ? start + 4096 : N;                                       \
            for (int64_t i = start; i < end; ++i)                                                          \
                if (a[i] > t) {                                                                            \
                    int64_t seen = __atomic_load_n(&first, __ATOMIC_RELAXED);                              \
                    while (i < seen && !__atomic_compare_exchange_n(&first, &seen, i, 0, __ATOMIC_RELAXED, \
                                                                    __ATOMIC_RELAXED)) {                   \
                    }                                                                                      \
                    break;                                                                                 \
                }                                                                                          \
        }                                                                                                  \
        index[0] = first < N ? first : -2;                                                                 \
        value[0] = first < N ? a[first] : (T)-1;                                                           \
    }

HB_KERNEL(first_above_fp64, double)
HB_KERNEL(first_above_fp32, float)
