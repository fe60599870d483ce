/* gather_scale (TSVC s4112): one parallel SIMD loop, b read through ip. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                    \
    void NAME(const T *restrict b, const int64_t *restrict ip, T *restrict a, int64_t N, T s, \
          void *workspace, int64_t workspace_bytes) {                                         \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        _Pragma("omp parallel for simd schedule(static)")                                     \
        for (int64_t i = 0; i < N; ++i) a[i] += b[ip[i]] * s;                                 \
    }

HB_KERNEL(gather_scale_fp64, double)
HB_KERNEL(gather_scale_fp32, float)
