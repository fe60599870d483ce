/* linear_backward: blocks of eight rows of dW shared among threads; each block streams the batch
   once, every row X[n,:] feeding the block's eight SIMD axpys (dW[m,:] += dY[n,m] X[n,:]) while it
   is in cache, and db[m] summing the same dY[n,m]. */
#include <stdint.h>

#define HB_LINEAR_BACKWARD_ROWS 8

#define HB_LINEAR_BACKWARD(NAME, T)                                                           \
    void NAME(const T *restrict X, const T *restrict dY, T *restrict dW, T *restrict db,      \
              int64_t N, int64_t K, int64_t M, void *workspace, int64_t workspace_bytes) {    \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        _Pragma("omp parallel for schedule(static)")                                          \
        for (int64_t first = 0; first < M; first += HB_LINEAR_BACKWARD_ROWS) {                \
            const int64_t last = first + HB_LINEAR_BACKWARD_ROWS < M                          \
                                     ? first + HB_LINEAR_BACKWARD_ROWS                        \
                                     : M;                                                     \
            for (int64_t m = first; m < last; ++m) {                                          \
                db[m] = 0;                                                                    \
                for (int64_t k = 0; k < K; ++k) dW[m * K + k] = 0;                            \
            }                                                                                 \
            for (int64_t n = 0; n < N; ++n) {                                                 \
                const T *restrict x = X + n * K;                                              \
                for (int64_t m = first; m < last; ++m) {                                      \
                    const T g = dY[n * M + m];                                                \
                    T *restrict row = dW + m * K;                                             \
                    db[m] += g;                                                               \
                    _Pragma("omp simd")                                                       \
                    for (int64_t k = 0; k < K; ++k) row[k] += g * x[k];                       \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    }

HB_LINEAR_BACKWARD(linear_backward_fp64, double)
HB_LINEAR_BACKWARD(linear_backward_fp32, float)
