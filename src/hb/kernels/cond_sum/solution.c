/* cond_sum (TSVC s3111): the sum of the positive a[i] as a masked SIMD reduction shared among
 * threads, accumulated in double and rounded once. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                \
    void NAME(const T *restrict a, T *restrict sum, int64_t N, void *workspace,           \
          int64_t workspace_bytes) {                                                      \
        (void)workspace;                                                                  \
        (void)workspace_bytes;                                                            \
        double s = 0.0;                                                                   \
        _Pragma("omp parallel for simd schedule(static) reduction(+ : s)")                \
        for (int64_t i = 0; i < N; ++i) s += a[i] > (T)0 ? (double)a[i] : 0.0;            \
        sum[0] = (T)s;                                                                    \
    }

HB_KERNEL(cond_sum_fp64, double)
HB_KERNEL(cond_sum_fp32, float)
