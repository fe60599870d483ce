/* gramschmidt: modified Gram-Schmidt. For each column k: its norm (a reduction over the rows),
 * q_k, then the columns after k are shared among threads in bands: each thread forms its band of
 * R's row k (streaming A along its rows) and removes q_k's projection from the band. */
#include <math.h>
#include <omp.h>
#include <stdint.h>

#define HB_GRAMSCHMIDT(NAME, T, SQRT)                                                            \
    void NAME(T *restrict A, T *restrict R, T *restrict Q, int64_t M, int64_t N,                 \
              void *workspace, int64_t workspace_bytes) {                                        \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        for (int64_t k = 0; k < N; ++k) {                                                        \
            T norm = 0;                                                                          \
            _Pragma("omp parallel for schedule(static) reduction(+ : norm)")                     \
            for (int64_t i = 0; i < M; ++i) norm += A[i * N + k] * A[i * N + k];                 \
            const T rkk = SQRT(norm);                                                            \
            R[k * N + k] = rkk;                                                                  \
            _Pragma("omp parallel")                                                              \
            {                                                                                    \
                _Pragma("omp for schedule(static)")                                              \
                for (int64_t i = 0; i < M; ++i) Q[i * N + k] = A[i * N + k] / rkk;               \
                const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();              \
                const int64_t width = N - k - 1;                                                 \
                const int64_t j0 = k + 1 + width * t / nt, j1 = k + 1 + width * (t + 1) / nt;    \
                T *restrict rk = R + k * N;                                                      \
                for (int64_t j = j0; j < j1; ++j) rk[j] = 0;                                     \
                for (int64_t i = 0; i < M; ++i) {                                                \
                    const T q = Q[i * N + k];                                                    \
                    for (int64_t j = j0; j < j1; ++j) rk[j] += q * A[i * N + j];                 \
                }                                                                                \
                for (int64_t i = 0; i < M; ++i) {                                                \
                    const T q = Q[i * N + k];                                                    \
                    for (int64_t j = j0; j < j1; ++j) A[i * N + j] -= q * rk[j];                 \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
    }

HB_GRAMSCHMIDT(gramschmidt_fp64, double, sqrt)
HB_GRAMSCHMIDT(gramschmidt_fp32, float, sqrtf)
