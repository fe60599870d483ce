/* switch_dispatch (TSVC s442): the switch if-converted into selects, one parallel SIMD loop. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                \
    void NAME(const int64_t *restrict indx, const T *restrict b, const T *restrict c,     \
          const T *restrict d, const T *restrict e, T *restrict a, int64_t N,             \
          void *workspace, int64_t workspace_bytes) {                                     \
        (void)workspace;                                                                  \
        (void)workspace_bytes;                                                            \
        _Pragma("omp parallel for simd schedule(static)")                                 \
        for (int64_t i = 0; i < N; ++i) {                                                 \
            const int64_t k = indx[i];                                                    \
            const T v = k == 2 ? c[i] : (k == 3 ? d[i] : (k == 4 ? e[i] : b[i]));         \
            a[i] += v * v;                                                                \
        }                                                                                 \
    }

HB_KERNEL(switch_dispatch_fp64, double)
HB_KERNEL(switch_dispatch_fp32, float)
