/* carried_scalar (TSVC s252), the scalar expanded: a[i] = b[i] c[i] + b[i-1] c[i-1], one parallel
 * SIMD loop. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                \
    void NAME(const T *restrict b, const T *restrict c, T *restrict a, int64_t N,         \
          void *workspace, int64_t workspace_bytes) {                                     \
        (void)workspace;                                                                  \
        (void)workspace_bytes;                                                            \
        a[0] = b[0] * c[0];                                                               \
        _Pragma("omp parallel for simd schedule(static)")                                 \
        for (int64_t i = 1; i < N; ++i) {                                                 \
            const T s = b[i] * c[i], t = b[i - 1] * c[i - 1];                             \
            a[i] = s + t;                                                                 \
        }                                                                                 \
    }

HB_KERNEL(carried_scalar_fp64, double)
HB_KERNEL(carried_scalar_fp32, float)
