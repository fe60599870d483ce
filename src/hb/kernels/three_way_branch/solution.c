/* three_way_branch (TSVC s441): the branch if-converted into selects, one parallel SIMD loop. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                        \
    void NAME(const T *restrict b, const T *restrict c, const T *restrict d, T *restrict a,       \
          int64_t N, void *workspace, int64_t workspace_bytes) {                                  \
        (void)workspace;                                                                          \
        (void)workspace_bytes;                                                                    \
        _Pragma("omp parallel for simd schedule(static)")                                         \
        for (int64_t i = 0; i < N; ++i) {                                                         \
            const T add = d[i] < (T)0 ? b[i] * c[i] : (d[i] == (T)0 ? b[i] * b[i] : c[i] * c[i]); \
            a[i] += add;                                                                          \
        }                                                                                         \
    }

HB_KERNEL(three_way_branch_fp64, double)
HB_KERNEL(three_way_branch_fp32, float)
