/* last_negative_index (TSVC s331): a parallel max-reduction of the index over the elements below
 * zero (-1 where none is). */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                \
    void NAME(const T *restrict a, int64_t *restrict last, int64_t N, void *workspace,    \
          int64_t workspace_bytes) {                                                      \
        (void)workspace;                                                                  \
        (void)workspace_bytes;                                                            \
        int64_t found = -1;                                                               \
        _Pragma("omp parallel for simd schedule(static) reduction(max : found)")          \
        for (int64_t i = 0; i < N; ++i)                                                   \
            if (a[i] < (T)0 && i > found) found = i;                                      \
        last[0] = found;                                                                  \
    }

HB_KERNEL(last_negative_index_fp64, double)
HB_KERNEL(last_negative_index_fp32, float)
