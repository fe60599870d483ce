/* gather_dot (TSVC s4115): the gathered dot product as a SIMD reduction shared among threads,
 * accumulated in double and rounded once. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                \
    void NAME(const T *restrict a, const T *restrict b, const int64_t *restrict ip,       \
          T *restrict sum, int64_t N, void *workspace, int64_t workspace_bytes) {         \
        (void)workspace;                                                                  \
        (void)workspace_bytes;                                                            \
        double s = 0.0;                                                                   \
        _Pragma("omp parallel for simd schedule(static) reduction(+ : s)")                \
        for (int64_t i = 0; i < N; ++i) s += (double)a[i] * (double)b[ip[i]];             \
        sum[0] = (T)s;                                                                    \
    }

HB_KERNEL(gather_dot_fp64, double)
HB_KERNEL(gather_dot_fp32, float)
