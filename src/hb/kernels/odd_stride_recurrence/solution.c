/* odd_stride_recurrence (TSVC s111): the odd elements read only even ones, so one parallel SIMD
 * loop of stride 2. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                \
    void NAME(const T *restrict b, T *restrict a, int64_t N, void *workspace,             \
          int64_t workspace_bytes) {                                                      \
        (void)workspace;                                                                  \
        (void)workspace_bytes;                                                            \
        _Pragma("omp parallel for simd schedule(static)")                                 \
        for (int64_t i = 1; i < N; i += 2) a[i] = a[i - 1] + b[i];                        \
    }

HB_KERNEL(odd_stride_recurrence_fp64, double)
HB_KERNEL(odd_stride_recurrence_fp32, float)
