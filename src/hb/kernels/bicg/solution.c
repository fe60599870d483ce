/* bicg: s <- A^T r and q <- A p. q's rows are shared among threads; for s each thread owns a
 * band of columns and streams A row by row over it, so A is always read along its rows. */
#include <omp.h>
#include <stdint.h>

#define HB_BICG(NAME, T)                                                                         \
    void NAME(const T *restrict A, T *restrict s, T *restrict q, const T *restrict p,            \
              const T *restrict r, int64_t M, int64_t N, void *workspace,                        \
              int64_t workspace_bytes) {                                                         \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        _Pragma("omp parallel")                                                                  \
        {                                                                                        \
            _Pragma("omp for schedule(static) nowait")                                           \
            for (int64_t i = 0; i < N; ++i) {                                                    \
                T sum = 0;                                                                       \
                for (int64_t j = 0; j < M; ++j) sum += A[i * M + j] * p[j];                      \
                q[i] = sum;                                                                      \
            }                                                                                    \
            const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();                  \
            const int64_t j0 = M * t / nt, j1 = M * (t + 1) / nt;                                \
            for (int64_t j = j0; j < j1; ++j) s[j] = 0;                                          \
            for (int64_t i = 0; i < N; ++i) {                                                    \
                const T ri = r[i];                                                               \
                for (int64_t j = j0; j < j1; ++j) s[j] += A[i * M + j] * ri;                     \
            }                                                                                    \
        }                                                                                        \
    }

HB_BICG(bicg_fp64, double)
HB_BICG(bicg_fp32, float)
