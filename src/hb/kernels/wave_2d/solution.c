/* wave_2d: TSTEPS pairs of leapfrog steps, the next level written over the older one in place
   (each point reads its own old value only), rows shared among the threads of one region. */
#include <stdint.h>

#define HB_WAVE_STEP(OLD, NOW, TYPE)                                                           \
    _Pragma("omp for schedule(static)")                                                        \
    for (int64_t i = 1; i < N - 1; ++i)                                                        \
        for (int64_t j = 1; j < N - 1; ++j) {                                                  \
            const int64_t x = i * N + j;                                                       \
            const TYPE lap = ((NOW[x - N] + NOW[x + N]) + (NOW[x - 1] + NOW[x + 1]))           \
                             - (TYPE)4.0 * NOW[x];                                             \
            OLD[x] = ((TYPE)2.0 * NOW[x] - OLD[x]) + C2 * lap;                                 \
        }

#define HB_WAVE(NAME, TYPE)                                                                    \
    void NAME(TYPE *restrict U0, TYPE *restrict U1, int64_t N, int64_t TSTEPS, TYPE C2,        \
              void *workspace, int64_t workspace_bytes) {                                      \
        (void)workspace;                                                                       \
        (void)workspace_bytes;                                                                 \
        _Pragma("omp parallel")                                                                \
        for (int64_t t = 0; t < TSTEPS; ++t) {                                                 \
            HB_WAVE_STEP(U0, U1, TYPE)                                                         \
            HB_WAVE_STEP(U1, U0, TYPE)                                                         \
        }                                                                                      \
    }

HB_WAVE(wave_2d_fp64, double)
HB_WAVE(wave_2d_fp32, float)
