/* atax: y <- A^T (A x). tmp = A x with rows shared among threads; then each thread owns a band of
 * y's columns and streams A row by row over it, so A is read along its rows in both passes. */
#include <omp.h>
#include <stdint.h>

#define HB_ATAX(NAME, T)                                                                         \
    void NAME(const T *restrict A, const T *restrict x, T *restrict y, int64_t M, int64_t N,     \
              void *workspace, int64_t workspace_bytes) {                                        \
        (void)workspace_bytes;                                                                   \
        T *restrict tmp = workspace;                                                             \
        _Pragma("omp parallel")                                                                  \
        {                                                                                        \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t i = 0; i < M; ++i) {                                                    \
                T sum = 0;                                                                       \
                for (int64_t j = 0; j < N; ++j) sum += A[i * N + j] * x[j];                      \
                tmp[i] = sum;                                                                    \
            }                                                                                    \
            const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();                  \
            const int64_t j0 = N * t / nt, j1 = N * (t + 1) / nt;                                \
            for (int64_t j = j0; j < j1; ++j) y[j] = 0;                                          \
            for (int64_t i = 0; i < M; ++i) {                                                    \
                const T s = tmp[i];                                                              \
                for (int64_t j = j0; j < j1; ++j) y[j] += A[i * N + j] * s;                      \
            }                                                                                    \
        }                                                                                        \
    }

HB_ATAX(atax_fp64, double)
HB_ATAX(atax_fp32, float)
