/* advection_1d: TSTEPS upwind steps; each step writes the next q into the workspace from the
   current one (cells shared among threads, the two periodic end cells apart), then they swap; an
   odd count copies the result back into q. */
#include <stdint.h>
#include <string.h>

/* max(u, 0) and min(u, 0) without a branch: u + |u| is 2u or 0 exactly, as u - |u| is 0 or 2u, so
   the halves are exact; a data-dependent branch on a velocity of random sign mispredicts. ABS is
   the precision's absolute value. */
#define HB_UPWIND(T, ABS, Q, NEXT, i, w, e)                                                        \
    {                                                                                              \
        const T lp = (T)0.5 * (u[i] + ABS(u[i]));                                                  \
        const T rm = (T)0.5 * (u[e] - ABS(u[e]));                                                  \
        NEXT[i] = Q[i] - r * (lp * (Q[i] - Q[w]) + rm * (Q[e] - Q[i]));                            \
    }

#define HB_ADVECTION(NAME, T, ABS)                                                                 \
    void NAME(T *restrict q, const T *restrict u, int64_t N, int64_t TSTEPS, T r,                  \
              void *workspace, int64_t workspace_bytes) {                                          \
        (void)workspace_bytes;                                                                     \
        T *bufs[2] = {q, (T *)workspace};                                                          \
        _Pragma("omp parallel")                                                                    \
        for (int64_t t = 0; t < TSTEPS; ++t) {                                                     \
            const T *restrict cur = bufs[t & 1];                                                   \
            T *restrict next = bufs[(t + 1) & 1];                                                  \
            _Pragma("omp for schedule(static)")                                                    \
            for (int64_t i = 1; i < N - 1; ++i) HB_UPWIND(T, ABS, cur, next, i, i - 1, i + 1)      \
            _Pragma("omp single")                                                                  \
            {                                                                                      \
                HB_UPWIND(T, ABS, cur, next, 0, N - 1, N > 1 ? 1 : 0)                              \
                if (N > 1) HB_UPWIND(T, ABS, cur, next, N - 1, N - 2, 0)                           \
            }                                                                                      \
        }                                                                                          \
        if (TSTEPS & 1) memcpy(q, workspace, (size_t)N * sizeof(T));                               \
    }

HB_ADVECTION(advection_1d_fp64, double, __builtin_fabs)
HB_ADVECTION(advection_1d_fp32, float, __builtin_fabsf)
