/* midpoint_dependence (TSVC s1113), split at N/2: the value before and after the middle iteration
 * are loop invariants, each half one parallel SIMD loop. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                \
    void NAME(const T *restrict b, T *restrict a, int64_t N, void *workspace,             \
          int64_t workspace_bytes) {                                                      \
        (void)workspace;                                                                  \
        (void)workspace_bytes;                                                            \
        const int64_t middle = N / 2;                                                     \
        const T before = a[middle], after = before + b[middle];                           \
        _Pragma("omp parallel for simd schedule(static)")                                 \
        for (int64_t i = 0; i <= middle; ++i) a[i] = before + b[i];                       \
        _Pragma("omp parallel for simd schedule(static)")                                 \
        for (int64_t i = middle + 1; i < N; ++i) a[i] = after + b[i];                     \
    }

HB_KERNEL(midpoint_dependence_fp64, double)
HB_KERNEL(midpoint_dependence_fp32, float)
