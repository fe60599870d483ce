/* goto_branch_nest (TSVC s279): the nest if-converted, one parallel SIMD loop. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                \
    void NAME(const T *restrict d, const T *restrict e, T *restrict a, T *restrict b,     \
          T *restrict c, int64_t N, void *workspace, int64_t workspace_bytes) {           \
        (void)workspace;                                                                  \
        (void)workspace_bytes;                                                            \
        _Pragma("omp parallel for simd schedule(static)")                                 \
        for (int64_t i = 0; i < N; ++i) {                                                 \
            T bi = b[i], ci = c[i];                                                       \
            if (a[i] > (T)0) {                                                            \
                ci = -ci + e[i] * e[i];                                                   \
            } else {                                                                      \
                bi = -bi + d[i] * d[i];                                                   \
                if (bi > a[i]) ci += d[i] * e[i];                                         \
            }                                                                             \
            b[i] = bi;                                                                    \
            c[i] = ci;                                                                    \
            a[i] = bi + ci * d[i];                                                        \
        }                                                                                 \
    }

HB_KERNEL(goto_branch_nest_fp64, double)
HB_KERNEL(goto_branch_nest_fp32, float)
