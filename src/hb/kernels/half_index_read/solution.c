/* half_index_read (TSVC s4117): one parallel SIMD loop over the pairs (2k, 2k + 1), each pair
 * reading c[k] once. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                  \
    void NAME(const T *restrict b, const T *restrict c, const T *restrict d, T *restrict a, \
          int64_t N, void *workspace, int64_t workspace_bytes) {                            \
        (void)workspace;                                                                    \
        (void)workspace_bytes;                                                              \
        _Pragma("omp parallel for simd schedule(static)")                                   \
        for (int64_t k = 0; k < N / 2; ++k) {                                               \
            a[2 * k] = b[2 * k] + c[k] * d[2 * k];                                          \
            a[2 * k + 1] = b[2 * k + 1] + c[k] * d[2 * k + 1];                              \
        }                                                                                   \
        if (N % 2) a[N - 1] = b[N - 1] + c[(N - 1) / 2] * d[N - 1];                         \
    }

HB_KERNEL(half_index_read_fp64, double)
HB_KERNEL(half_index_read_fp32, float)
