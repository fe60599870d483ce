/* wraparound_average (TSVC s291): the first iteration peeled, the rest one parallel SIMD loop. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                \
    void NAME(const T *restrict b, T *restrict a, int64_t N, void *workspace,             \
          int64_t workspace_bytes) {                                                      \
        (void)workspace;                                                                  \
        (void)workspace_bytes;                                                            \
        a[0] = (b[0] + b[N - 1]) * (T)0.5;                                                \
        _Pragma("omp parallel for simd schedule(static)")                                 \
        for (int64_t i = 1; i < N; ++i) a[i] = (b[i] + b[i - 1]) * (T)0.5;                \
    }

HB_KERNEL(wraparound_average_fp64, double)
HB_KERNEL(wraparound_average_fp32, float)
