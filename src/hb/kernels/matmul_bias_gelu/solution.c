/* matmul_bias_gelu: Y = GELU(X W^T + b); rows of X shared among threads, each output a SIMD dot
   product of two contiguous rows, then the exact (erf) GELU. */
#include <stdint.h>
#include <tgmath.h>

#define HB_MATMUL_BIAS_GELU(NAME, T)                                                           \
    void NAME(const T *restrict X, const T *restrict W, const T *restrict b, T *restrict Y,    \
              int64_t N, int64_t K, int64_t M, void *workspace, int64_t workspace_bytes) {     \
        (void)workspace;                                                                       \
        (void)workspace_bytes;                                                                 \
        const T inv_sqrt2 = (T)0.70710678118654752440;                                         \
        _Pragma("omp parallel for schedule(static)")                                           \
        for (int64_t i = 0; i < N; ++i) {                                                      \
            const T *restrict x = X + i * K;                                                   \
            for (int64_t j = 0; j < M; ++j) {                                                  \
                const T *restrict w = W + j * K;                                               \
                T acc = 0;                                                                     \
                _Pragma("omp simd reduction(+ : acc)")                                         \
                for (int64_t k = 0; k < K; ++k) acc += x[k] * w[k];                            \
                acc += b[j];                                                                   \
                Y[i * M + j] = (T)0.5 * acc * ((T)1 + erf(acc * inv_sqrt2));                   \
            }                                                                                  \
        }                                                                                      \
    }

HB_MATMUL_BIAS_GELU(matmul_bias_gelu_fp64, double)
HB_MATMUL_BIAS_GELU(matmul_bias_gelu_fp32, float)
