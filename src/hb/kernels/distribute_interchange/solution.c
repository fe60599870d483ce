/* distribute_interchange (TSVC s2275): the nest distributed from the 1-D statement and
 * interchanged: rows shared among threads, each row one SIMD loop; then the 1-D loop. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                  \
    void NAME(const T *restrict bb, const T *restrict cc, const T *restrict b,              \
          const T *restrict c, const T *restrict d, T *restrict aa, T *restrict a,          \
          int64_t N, void *workspace, int64_t workspace_bytes) {                            \
        (void)workspace;                                                                    \
        (void)workspace_bytes;                                                              \
        _Pragma("omp parallel for schedule(static)")                                        \
        for (int64_t j = 0; j < N; ++j) {                                                   \
            _Pragma("omp simd")                                                             \
            for (int64_t i = 0; i < N; ++i) aa[j * N + i] += bb[j * N + i] * cc[j * N + i]; \
        }                                                                                   \
        _Pragma("omp parallel for simd schedule(static)")                                   \
        for (int64_t i = 0; i < N; ++i) a[i] = b[i] + c[i] * d[i];                          \
    }

HB_KERNEL(distribute_interchange_fp64, double)
HB_KERNEL(distribute_interchange_fp32, float)
