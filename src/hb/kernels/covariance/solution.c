/* covariance: the column means (each thread owns a band of columns and streams the rows), the
 * data centred in place and copied transposed into the workspace (rows shared among threads),
 * then each covariance of the upper triangle as a contiguous dot product of two transposed rows,
 * rows dealt dynamically (row i holds M - i entries) and mirrored. */
#include <omp.h>
#include <stdint.h>

#define HB_COVARIANCE(NAME, T)                                                                   \
    void NAME(T *restrict data, T *restrict cov, T *restrict mean, int64_t M, int64_t N,         \
              void *workspace, int64_t workspace_bytes) {                                        \
        (void)workspace_bytes;                                                                   \
        T *restrict t = workspace; /* t[j * N + i] = data[i][j] - mean[j] */                     \
        _Pragma("omp parallel")                                                                  \
        {                                                                                        \
            const int64_t id = omp_get_thread_num(), nt = omp_get_num_threads();                 \
            const int64_t j0 = M * id / nt, j1 = M * (id + 1) / nt;                              \
            for (int64_t j = j0; j < j1; ++j) mean[j] = 0;                                       \
            for (int64_t i = 0; i < N; ++i)                                                      \
                for (int64_t j = j0; j < j1; ++j) mean[j] += data[i * M + j];                    \
            for (int64_t j = j0; j < j1; ++j) mean[j] /= (T)N;                                   \
            _Pragma("omp barrier")                                                               \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t i = 0; i < N; ++i)                                                      \
                for (int64_t j = 0; j < M; ++j) {                                                \
                    const T centred = data[i * M + j] - mean[j];                                 \
                    data[i * M + j] = centred;                                                   \
                    t[j * N + i] = centred;                                                      \
                }                                                                                \
            _Pragma("omp for schedule(dynamic, 4)")                                              \
            for (int64_t i = 0; i < M; ++i)                                                      \
                for (int64_t j = i; j < M; ++j) {                                                \
                    T sum = 0;                                                                   \
                    _Pragma("omp simd reduction(+ : sum)")                                       \
                    for (int64_t k = 0; k < N; ++k) sum += t[i * N + k] * t[j * N + k];          \
                    cov[i * M + j] = cov[j * M + i] = sum / (T)(N - 1);                          \
                }                                                                                \
        }                                                                                        \
    }

HB_COVARIANCE(covariance_fp64, double)
HB_COVARIANCE(covariance_fp32, float)
