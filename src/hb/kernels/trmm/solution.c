/* trmm: B <- alpha (I + L)^T B in place. Row i needs the rows below it before they change, so
 * rows go in ascending order and the columns are shared: each thread owns a band of columns and
 * updates it row by row (a contiguous inner loop). */
#include <omp.h>
#include <stdint.h>

#define HB_TRMM(NAME, T)                                                                         \
    void NAME(const T *restrict A, T *restrict B, int64_t M, int64_t N, T alpha,                 \
              void *workspace, int64_t workspace_bytes) {                                        \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        _Pragma("omp parallel")                                                                  \
        {                                                                                        \
            const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();                  \
            const int64_t j0 = N * t / nt, j1 = N * (t + 1) / nt;                                \
            for (int64_t i = 0; i < M; ++i) {                                                    \
                T *restrict bi = B + i * N;                                                      \
                for (int64_t k = i + 1; k < M; ++k) {                                            \
                    const T a = A[k * M + i];                                                    \
                    const T *restrict bk = B + k * N;                                            \
                    for (int64_t j = j0; j < j1; ++j) bi[j] += a * bk[j];                        \
                }                                                                                \
                for (int64_t j = j0; j < j1; ++j) bi[j] *= alpha;                                \
            }                                                                                    \
        }                                                                                        \
    }

HB_TRMM(trmm_fp64, double)
HB_TRMM(trmm_fp32, float)
