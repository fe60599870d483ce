/* jacobi_1d: TSTEPS pairs of 3-point sweeps A -> B -> A; one parallel region for all the steps,
   the points of each sweep shared statically among its threads. */
#include <stdint.h>

#define HB_JACOBI1(NAME, T)                                                                  \
    void NAME(T *restrict A, T *restrict B, int64_t N, int64_t TSTEPS, void *workspace,      \
              int64_t workspace_bytes) {                                                     \
        (void)workspace;                                                                     \
        (void)workspace_bytes;                                                               \
        const T third = (T)0.33333;                                                          \
        _Pragma("omp parallel")                                                              \
        for (int64_t t = 0; t < TSTEPS; ++t) {                                               \
            _Pragma("omp for schedule(static)")                                              \
            for (int64_t i = 1; i < N - 1; ++i)                                              \
                B[i] = third * (A[i - 1] + A[i] + A[i + 1]);                                 \
            _Pragma("omp for schedule(static)")                                              \
            for (int64_t i = 1; i < N - 1; ++i)                                              \
                A[i] = third * (B[i - 1] + B[i] + B[i + 1]);                                 \
        }                                                                                    \
    }

HB_JACOBI1(jacobi_1d_fp64, double)
HB_JACOBI1(jacobi_1d_fp32, float)
