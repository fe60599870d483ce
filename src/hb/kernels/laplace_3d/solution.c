/* laplace_3d: TSTEPS pairs of 7-point Jacobi sweeps A -> B -> A, outer planes shared among the
   threads of one parallel region. */
#include <stdint.h>

#define HB_AT(X, i, j, k) X[((i) * N + (j)) * N + (k)]
#define HB_LAPLACE_SWEEP(S, D)                                                                \
    _Pragma("omp for schedule(static)")                                                       \
    for (int64_t i = 1; i < N - 1; ++i)                                                       \
        for (int64_t j = 1; j < N - 1; ++j)                                                   \
            for (int64_t k = 1; k < N - 1; ++k)                                               \
                HB_AT(D, i, j, k) =                                                           \
                    sixth * (((HB_AT(S, i - 1, j, k) + HB_AT(S, i + 1, j, k))                 \
                              + (HB_AT(S, i, j - 1, k) + HB_AT(S, i, j + 1, k)))              \
                             + (HB_AT(S, i, j, k - 1) + HB_AT(S, i, j, k + 1)));

#define HB_LAPLACE(NAME, T)                                                                   \
    void NAME(T *restrict A, T *restrict B, int64_t N, int64_t TSTEPS, void *workspace,       \
              int64_t workspace_bytes) {                                                      \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        const T sixth = (T)(1.0 / 6.0);                                                       \
        _Pragma("omp parallel")                                                               \
        for (int64_t t = 0; t < TSTEPS; ++t) {                                                \
            HB_LAPLACE_SWEEP(A, B)                                                            \
            HB_LAPLACE_SWEEP(B, A)                                                            \
        }                                                                                     \
    }

HB_LAPLACE(laplace_3d_fp64, double)
HB_LAPLACE(laplace_3d_fp32, float)
