/* coupled_sum (TSVC s319): one fused SIMD loop shared among threads writes a and b and reduces
 * both into one double sum. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                  \
    void NAME(const T *restrict c, const T *restrict d, const T *restrict e, T *restrict a, \
          T *restrict b, T *restrict sum, int64_t N, void *workspace,                       \
          int64_t workspace_bytes) {                                                        \
        (void)workspace;                                                                    \
        (void)workspace_bytes;                                                              \
        double s = 0.0;                                                                     \
        _Pragma("omp parallel for simd schedule(static) reduction(+ : s)")                  \
        for (int64_t i = 0; i < N; ++i) {                                                   \
            a[i] = c[i] + d[i];                                                             \
            b[i] = c[i] + e[i];                                                             \
            s += (double)a[i] + (double)b[i];                                               \
        }                                                                                   \
        sum[0] = (T)s;                                                                      \
    }

HB_KERNEL(coupled_sum_fp64, double)
HB_KERNEL(coupled_sum_fp32, float)
