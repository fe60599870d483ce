/* induction_strength (TSVC s453): s computed from i, one parallel SIMD loop. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                \
    void NAME(const T *restrict b, T *restrict a, int64_t N, void *workspace,             \
          int64_t workspace_bytes) {                                                      \
        (void)workspace;                                                                  \
        (void)workspace_bytes;                                                            \
        _Pragma("omp parallel for simd schedule(static)")                                 \
        for (int64_t i = 0; i < N; ++i) a[i] = (T)(2 * (i + 1)) * b[i];                   \
    }

HB_KERNEL(induction_strength_fp64, double)
HB_KERNEL(induction_strength_fp32, float)
