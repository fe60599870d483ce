/* reverse_read_crossing (TSVC s281), split at the middle: the first half reads only elements it
 * does not write, the second half reads only the first half's results; each half is one parallel
 * SIMD loop. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                   \
    void NAME(const T *restrict c, T *restrict a, T *restrict b, int64_t N, void *workspace, \
          int64_t workspace_bytes) {                                                         \
        (void)workspace;                                                                     \
        (void)workspace_bytes;                                                               \
        const int64_t half = (N + 1) / 2;                                                    \
        _Pragma("omp parallel for simd schedule(static)")                                    \
        for (int64_t i = 0; i < half; ++i) {                                                 \
            const T x = a[N - 1 - i] + b[i] * c[i];                                          \
            b[i] = x;                                                                        \
            a[i] = x - (T)1;                                                                 \
        }                                                                                    \
        _Pragma("omp parallel for simd schedule(static)")                                    \
        for (int64_t i = half; i < N; ++i) {                                                 \
            const T x = a[N - 1 - i] + b[i] * c[i];                                          \
            b[i] = x;                                                                        \
            a[i] = x - (T)1;                                                                 \
        }                                                                                    \
    }

HB_KERNEL(reverse_read_crossing_fp64, double)
HB_KERNEL(reverse_read_crossing_fp32, float)
