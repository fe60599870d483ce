/* jacobi_2d: TSTEPS pairs of 5-point sweeps A -> B -> A, rows shared among threads. */
#include <stdint.h>

#define HB_JACOBI(NAME, T)                                                                     \
    void NAME(T *restrict A, T *restrict B, int64_t N, int64_t TSTEPS, void *workspace,        \
              int64_t workspace_bytes) {                                                       \
        (void)workspace;                                                                       \
        (void)workspace_bytes;                                                                 \
        const T fifth = (T)0.2;                                                                \
        for (int64_t t = 0; t < TSTEPS; ++t) {                                                 \
            _Pragma("omp parallel for schedule(static)")                                       \
            for (int64_t i = 1; i < N - 1; ++i)                                                \
                for (int64_t j = 1; j < N - 1; ++j)                                            \
                    B[i * N + j] = fifth * (A[i * N + j] + A[i * N + j - 1] + A[i * N + j + 1] \
                                            + A[(i + 1) * N + j] + A[(i - 1) * N + j]);        \
            _Pragma("omp parallel for schedule(static)")                                       \
            for (int64_t i = 1; i < N - 1; ++i)                                                \
                for (int64_t j = 1; j < N - 1; ++j)                                            \
                    A[i * N + j] = fifth * (B[i * N + j] + B[i * N + j - 1] + B[i * N + j + 1] \
                                            + B[(i + 1) * N + j] + B[(i - 1) * N + j]);        \
        }                                                                                      \
    }

HB_JACOBI(jacobi_2d_fp64, double)
HB_JACOBI(jacobi_2d_fp32, float)
