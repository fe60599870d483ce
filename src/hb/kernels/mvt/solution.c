/* mvt: x1 += A y_1 with rows shared among threads; x2 += A^T y_2 with each thread owning a band
 * of x2 and streaming A row by row over it, so A is read along its rows in both products. */
#include <omp.h>
#include <stdint.h>

#define HB_MVT(NAME, T)                                                                          \
    void NAME(T *restrict x1, T *restrict x2, const T *restrict y_1, const T *restrict y_2,      \
              const T *restrict A, int64_t N, void *workspace, int64_t workspace_bytes) {        \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        _Pragma("omp parallel")                                                                  \
        {                                                                                        \
            _Pragma("omp for schedule(static) nowait")                                           \
            for (int64_t i = 0; i < N; ++i) {                                                    \
                T sum = 0;                                                                       \
                for (int64_t j = 0; j < N; ++j) sum += A[i * N + j] * y_1[j];                    \
                x1[i] += sum;                                                                    \
            }                                                                                    \
            const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();                  \
            const int64_t j0 = N * t / nt, j1 = N * (t + 1) / nt;                                \
            for (int64_t i = 0; i < N; ++i) {                                                    \
                const T yi = y_2[i];                                                             \
                for (int64_t j = j0; j < j1; ++j) x2[j] += A[i * N + j] * yi;                    \
            }                                                                                    \
        }                                                                                        \
    }

HB_MVT(mvt_fp64, double)
HB_MVT(mvt_fp32, float)
