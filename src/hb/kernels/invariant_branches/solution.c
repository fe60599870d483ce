/* invariant_branches (TSVC s2710), unswitched: the tests of N and x are made once, and each of
 * the four cases is one parallel SIMD loop with the data-dependent test left inside. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                \
    void NAME(const T *restrict d, const T *restrict e, T *restrict a, T *restrict b,     \
          T *restrict c, int64_t N, T x, void *workspace, int64_t workspace_bytes) {      \
        (void)workspace;                                                                  \
        (void)workspace_bytes;                                                            \
        const int wide = N > 10, positive = x > (T)0;                                     \
        _Pragma("omp parallel for simd schedule(static)")                                 \
        for (int64_t i = 0; i < N; ++i) {                                                 \
            if (a[i] > b[i]) {                                                            \
                a[i] += b[i] * d[i];                                                      \
                c[i] = wide ? c[i] + d[i] * d[i] : d[i] * e[i] + (T)1;                    \
            } else {                                                                      \
                b[i] = a[i] + e[i] * e[i];                                                \
                c[i] = positive ? a[i] + d[i] * d[i] : c[i] + e[i] * e[i];                \
            }                                                                             \
        }                                                                                 \
    }

HB_KERNEL(invariant_branches_fp64, double)
HB_KERNEL(invariant_branches_fp32, float)
