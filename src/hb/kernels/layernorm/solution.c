/* layernorm: rows shared among threads; per row a two-pass mean and (biased) variance, then one
   normalise-scale-shift pass. */
#include <stdint.h>
#include <tgmath.h>

#define HB_LAYERNORM(NAME, T)                                                                 \
    void NAME(const T *restrict x, const T *restrict gamma, const T *restrict beta,           \
              T *restrict y, int64_t N, int64_t D, T eps, void *workspace,                    \
              int64_t workspace_bytes) {                                                      \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        _Pragma("omp parallel for schedule(static)")                                          \
        for (int64_t n = 0; n < N; ++n) {                                                     \
            const T *restrict row = x + n * D;                                                \
            T sum = 0;                                                                        \
            _Pragma("omp simd reduction(+ : sum)")                                            \
            for (int64_t d = 0; d < D; ++d) sum += row[d];                                    \
            const T mean = sum / (T)D;                                                        \
            T squares = 0;                                                                    \
            _Pragma("omp simd reduction(+ : squares)")                                        \
            for (int64_t d = 0; d < D; ++d) squares += (row[d] - mean) * (row[d] - mean);     \
            const T inv = (T)1 / sqrt(squares / (T)D + eps);                                  \
            _Pragma("omp simd")                                                               \
            for (int64_t d = 0; d < D; ++d)                                                   \
                y[n * D + d] = (row[d] - mean) * inv * gamma[d] + beta[d];                    \
        }                                                                                     \
    }

HB_LAYERNORM(layernorm_fp64, double)
HB_LAYERNORM(layernorm_fp32, float)
