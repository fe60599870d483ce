/* rmsnorm: rows shared among threads; per row the mean square (a SIMD reduction), then one
   scaling pass by the gain. */
#include <stdint.h>
#include <tgmath.h>

#define HB_RMSNORM(NAME, T)                                                                   \
    void NAME(const T *restrict x, const T *restrict g, T *restrict y, int64_t N, int64_t D,  \
              T eps, void *workspace, int64_t workspace_bytes) {                              \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        _Pragma("omp parallel for schedule(static)")                                          \
        for (int64_t n = 0; n < N; ++n) {                                                     \
            const T *restrict row = x + n * D;                                                \
            T squares = 0;                                                                    \
            _Pragma("omp simd reduction(+ : squares)")                                        \
            for (int64_t d = 0; d < D; ++d) squares += row[d] * row[d];                       \
            const T inv = (T)1 / sqrt(squares / (T)D + eps);                                  \
            _Pragma("omp simd")                                                               \
            for (int64_t d = 0; d < D; ++d) y[n * D + d] = row[d] * inv * g[d];               \
        }                                                                                     \
    }

HB_RMSNORM(rmsnorm_fp64, double)
HB_RMSNORM(rmsnorm_fp32, float)
