/* black_scholes: one option per iteration of an OpenMP loop, the closed form at the element type's
 * own precision, N(d) = 0.5 erfc(-d / sqrt 2). */
#include <math.h>
#include <stdint.h>

#define HB_BLACK_SCHOLES(NAME, T, LOG, EXP, SQRT, ERFC)                                            \
    void NAME(const T *restrict S, const T *restrict K, const T *restrict r, const T *restrict v,  \
              const T *restrict Tx, T *restrict call, T *restrict put, int64_t N,                  \
              void *workspace, int64_t workspace_bytes) {                                          \
        (void)workspace;                                                                           \
        (void)workspace_bytes;                                                                     \
        const T half = (T)0.5, root_half = (T)0.70710678118654752440;                              \
        _Pragma("omp parallel for simd schedule(static)")                                          \
        for (int64_t i = 0; i < N; ++i) {                                                          \
            const T spread = v[i] * SQRT(Tx[i]);                                                   \
            const T d1 = (LOG(S[i] / K[i]) + (r[i] + half * v[i] * v[i]) * Tx[i]) / spread;        \
            const T d2 = d1 - spread;                                                              \
            const T discounted = K[i] * EXP(-r[i] * Tx[i]);                                        \
            const T n1 = half * ERFC(-d1 * root_half), n2 = half * ERFC(-d2 * root_half);          \
            call[i] = S[i] * n1 - discounted * n2;                                                 \
            put[i] = discounted * ((T)1 - n2) - S[i] * ((T)1 - n1);                                \
        }                                                                                          \
    }

HB_BLACK_SCHOLES(black_scholes_fp64, double, log, exp, sqrt, erfc)
HB_BLACK_SCHOLES(black_scholes_fp32, float, logf, expf, sqrtf, erfcf)
