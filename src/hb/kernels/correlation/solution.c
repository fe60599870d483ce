/* correlation: the column means and standard deviations (each thread owns a band of columns and
 * streams the rows), the data standardised in place and copied transposed into the workspace
 * (rows shared among threads), then each correlation of the upper triangle as a contiguous dot
 * product of two transposed rows, rows dealt dynamically and mirrored; the diagonal is 1. */
#include <math.h>
#include <omp.h>
#include <stdint.h>

#define HB_CORRELATION(NAME, T, SQRT)                                                            \
    void NAME(T *restrict data, T *restrict corr, T *restrict mean, T *restrict stddev,          \
              int64_t M, int64_t N, void *workspace, int64_t workspace_bytes) {                  \
        (void)workspace_bytes;                                                                   \
        T *restrict t = workspace; /* t[j * N + i] = the standardised data[i][j] */              \
        const T eps = (T)0.1, root_n = SQRT((T)N);                                               \
        _Pragma("omp parallel")                                                                  \
        {                                                                                        \
            const int64_t id = omp_get_thread_num(), nt = omp_get_num_threads();                 \
            const int64_t j0 = M * id / nt, j1 = M * (id + 1) / nt;                              \
            for (int64_t j = j0; j < j1; ++j) mean[j] = stddev[j] = 0;                           \
            for (int64_t i = 0; i < N; ++i)                                                      \
                for (int64_t j = j0; j < j1; ++j) mean[j] += data[i * M + j];                    \
            for (int64_t j = j0; j < j1; ++j) mean[j] /= (T)N;                                   \
            for (int64_t i = 0; i < N; ++i)                                                      \
                for (int64_t j = j0; j < j1; ++j) {                                              \
                    const T d = data[i * M + j] - mean[j];                                       \
                    stddev[j] += d * d;                                                          \
                }                                                                                \
            for (int64_t j = j0; j < j1; ++j) {                                                  \
                const T s = SQRT(stddev[j] / (T)N);                                              \
                stddev[j] = s <= eps ? (T)1 : s;                                                 \
            }                                                                                    \
            _Pragma("omp barrier")                                                               \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t i = 0; i < N; ++i)                                                      \
                for (int64_t j = 0; j < M; ++j) {                                                \
                    const T z = (data[i * M + j] - mean[j]) / (root_n * stddev[j]);              \
                    data[i * M + j] = z;                                                         \
                    t[j * N + i] = z;                                                            \
                }                                                                                \
            _Pragma("omp for schedule(dynamic, 4)")                                              \
            for (int64_t i = 0; i < M; ++i) {                                                    \
                corr[i * M + i] = 1;                                                             \
                for (int64_t j = i + 1; j < M; ++j) {                                            \
                    T sum = 0;                                                                   \
                    _Pragma("omp simd reduction(+ : sum)")                                       \
                    for (int64_t k = 0; k < N; ++k) sum += t[i * N + k] * t[j * N + k];          \
                    corr[i * M + j] = corr[j * M + i] = sum;                                     \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
    }

HB_CORRELATION(correlation_fp64, double, sqrt)
HB_CORRELATION(correlation_fp32, float, sqrtf)
