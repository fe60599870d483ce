/* mlp_block: rows of x shared among threads; per row the hidden activations (SIMD dot products
   with W1's rows, bias, exact GELU) into the workspace, then the output row from W2's rows. */
#include <stdint.h>
#include <tgmath.h>

#define HB_MLP_BLOCK(NAME, T)                                                                 \
    void NAME(const T *restrict x, const T *restrict w1, const T *restrict b1,                \
              const T *restrict w2, const T *restrict b2, T *restrict y, int64_t N,           \
              int64_t D, int64_t F, void *workspace, int64_t workspace_bytes) {               \
        (void)workspace_bytes;                                                                \
        T *restrict hidden = (T *)workspace;                                                  \
        const T inv_sqrt2 = (T)0.70710678118654752440;                                        \
        _Pragma("omp parallel for schedule(static)")                                          \
        for (int64_t n = 0; n < N; ++n) {                                                     \
            const T *restrict row = x + n * D;                                                \
            T *restrict h = hidden + n * F;                                                   \
            for (int64_t f = 0; f < F; ++f) {                                                 \
                T acc = 0;                                                                    \
                _Pragma("omp simd reduction(+ : acc)")                                        \
                for (int64_t d = 0; d < D; ++d) acc += row[d] * w1[f * D + d];                \
                acc += b1[f];                                                                 \
                h[f] = (T)0.5 * acc * ((T)1 + erf(acc * inv_sqrt2));                          \
            }                                                                                 \
            for (int64_t d = 0; d < D; ++d) {                                                 \
                T acc = 0;                                                                    \
                _Pragma("omp simd reduction(+ : acc)")                                        \
                for (int64_t f = 0; f < F; ++f) acc += h[f] * w2[d * F + f];                  \
                y[n * D + d] = acc + b2[d];                                                   \
            }                                                                                 \
        }                                                                                     \
    }

HB_MLP_BLOCK(mlp_block_fp64, double)
HB_MLP_BLOCK(mlp_block_fp32, float)
