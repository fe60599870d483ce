/* heat_3d: TSTEPS pairs of 7-point sweeps A -> B -> A, outer planes shared among threads. */
#include <stdint.h>

#define HB_AT(X, i, j, k) X[((i) * N + (j)) * N + (k)]
#define HB_SWEEP(S, T, TYPE)                                                                  \
    _Pragma("omp parallel for schedule(static)")                                              \
    for (int64_t i = 1; i < N - 1; ++i)                                                       \
        for (int64_t j = 1; j < N - 1; ++j)                                                   \
            for (int64_t k = 1; k < N - 1; ++k) {                                             \
                const TYPE mid = HB_AT(S, i, j, k);                                           \
                HB_AT(T, i, j, k) =                                                           \
                    c * (HB_AT(S, i + 1, j, k) - two * mid + HB_AT(S, i - 1, j, k))           \
                    + c * (HB_AT(S, i, j + 1, k) - two * mid + HB_AT(S, i, j - 1, k))         \
                    + c * (HB_AT(S, i, j, k + 1) - two * mid + HB_AT(S, i, j, k - 1)) + mid;  \
            }

#define HB_HEAT(NAME, TYPE)                                                                    \
    void NAME(TYPE *restrict A, TYPE *restrict B, int64_t N, int64_t TSTEPS, void *workspace,  \
              int64_t workspace_bytes) {                                                       \
        (void)workspace;                                                                       \
        (void)workspace_bytes;                                                                 \
        const TYPE c = (TYPE)0.125, two = (TYPE)2.0;                                           \
        for (int64_t t = 0; t < TSTEPS; ++t) {                                                 \
            HB_SWEEP(A, B, TYPE)                                                               \
            HB_SWEEP(B, A, TYPE)                                                               \
        }                                                                                      \
    }

HB_HEAT(heat_3d_fp64, double)
HB_HEAT(heat_3d_fp32, float)
