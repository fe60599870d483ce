/* gemver: each thread owns a band of columns, applies the rank-2 update to it and accumulates
 * that band of A^T y in the same sweep (A read once, along its rows); x += z on the band; after
 * a barrier, w += alpha A x with rows shared among threads. */
#include <omp.h>
#include <stdint.h>

#define HB_GEMVER(NAME, T)                                                                       \
    void NAME(T *restrict A, const T *restrict u1, const T *restrict v1, const T *restrict u2,   \
              const T *restrict v2, T *restrict w, T *restrict x, const T *restrict y,           \
              const T *restrict z, int64_t N, T alpha, T beta, void *workspace,                  \
              int64_t workspace_bytes) {                                                         \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        _Pragma("omp parallel")                                                                  \
        {                                                                                        \
            const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();                  \
            const int64_t j0 = N * t / nt, j1 = N * (t + 1) / nt;                                \
            for (int64_t i = 0; i < N; ++i) {                                                    \
                const T a1 = u1[i], a2 = u2[i], by = beta * y[i];                                \
                for (int64_t j = j0; j < j1; ++j) {                                              \
                    const T aij = A[i * N + j] + a1 * v1[j] + a2 * v2[j];                        \
                    A[i * N + j] = aij;                                                          \
                    x[j] += by * aij;                                                            \
                }                                                                                \
            }                                                                                    \
            for (int64_t j = j0; j < j1; ++j) x[j] += z[j];                                      \
            _Pragma("omp barrier")                                                               \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t i = 0; i < N; ++i) {                                                    \
                T sum = 0;                                                                       \
                for (int64_t j = 0; j < N; ++j) sum += A[i * N + j] * x[j];                      \
                w[i] += alpha * sum;                                                             \
            }                                                                                    \
        }                                                                                        \
    }

HB_GEMVER(gemver_fp64, double)
HB_GEMVER(gemver_fp32, float)
