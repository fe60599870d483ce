/* lu: right-looking elimination without pivoting. For each pivot k the rows below it are shared
 * among threads: each scales its multiplier and updates its row's trailing part (a contiguous
 * inner loop). */
#include <stdint.h>

#define HB_LU(NAME, T)                                                                           \
    void NAME(T *restrict A, int64_t N, void *workspace, int64_t workspace_bytes) {              \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        _Pragma("omp parallel")                                                                  \
        for (int64_t k = 0; k < N - 1; ++k) {                                                    \
            const T *restrict ak = A + k * N;                                                    \
            const T pivot = ak[k];                                                               \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t i = k + 1; i < N; ++i) {                                                \
                T *restrict ai = A + i * N;                                                      \
                const T l = ai[k] / pivot;                                                       \
                ai[k] = l;                                                                       \
                for (int64_t j = k + 1; j < N; ++j) ai[j] -= l * ak[j];                          \
            }                                                                                    \
        }                                                                                        \
    }

HB_LU(lu_fp64, double)
HB_LU(lu_fp32, float)
