/* scatter_permute (TSVC s491): ip is a permutation, so the scattered stores never collide and the
 * loop is shared among threads. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                \
    void NAME(const T *restrict b, const T *restrict c, const T *restrict d,              \
          const int64_t *restrict ip, T *restrict a, int64_t N, void *workspace,          \
          int64_t workspace_bytes) {                                                      \
        (void)workspace;                                                                  \
        (void)workspace_bytes;                                                            \
        _Pragma("omp parallel for simd schedule(static)")                                 \
        for (int64_t i = 0; i < N; ++i) a[ip[i]] = b[i] + c[i] * d[i];                    \
    }

HB_KERNEL(scatter_permute_fp64, double)
HB_KERNEL(scatter_permute_fp32, float)
