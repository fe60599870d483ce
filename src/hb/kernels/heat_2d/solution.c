/* heat_2d: TSTEPS pairs of 5-point heat sweeps A -> B -> A, rows shared among threads. */
#include <stdint.h>

#define HB_HEAT2_SWEEP(S, D, T)                                                               \
    _Pragma("omp for schedule(static)")                                                       \
    for (int64_t i = 1; i < N - 1; ++i)                                                       \
        for (int64_t j = 1; j < N - 1; ++j) {                                                 \
            const T mid = S[i * N + j];                                                       \
            D[i * N + j] = c * (S[(i + 1) * N + j] - two * mid + S[(i - 1) * N + j])          \
                           + c * (S[i * N + j + 1] - two * mid + S[i * N + j - 1]) + mid;     \
        }

#define HB_HEAT2(NAME, T)                                                                     \
    void NAME(T *restrict A, T *restrict B, int64_t N, int64_t TSTEPS, void *workspace,       \
              int64_t workspace_bytes) {                                                      \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        const T c = (T)0.125, two = (T)2.0;                                                   \
        _Pragma("omp parallel")                                                               \
        for (int64_t t = 0; t < TSTEPS; ++t) {                                                \
            HB_HEAT2_SWEEP(A, B, T)                                                           \
            HB_HEAT2_SWEEP(B, A, T)                                                           \
        }                                                                                     \
    }

HB_HEAT2(heat_2d_fp64, double)
HB_HEAT2(heat_2d_fp32, float)
