/* weighted_histogram: every thread sums into a private copy of the bins (an OpenMP array-section
 * reduction), merged at the end. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                    \
    void NAME(const int64_t *restrict bins, const T *restrict w, T *restrict hist, int64_t N, \
          int64_t B, void *workspace, int64_t workspace_bytes) {                              \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        for (int64_t k = 0; k < B; ++k) hist[k] = 0;                                          \
        _Pragma("omp parallel for schedule(static) reduction(+ : hist[:B])")                  \
        for (int64_t i = 0; i < N; ++i) hist[bins[i]] += w[i];                                \
    }

HB_KERNEL(weighted_histogram_fp64, double)
HB_KERNEL(weighted_histogram_fp32, float)
