/* depthwise_conv2d: the (sample, channel) planes shared among threads; each plane starts at its
   bias and accumulates, per tap, a SIMD axpy of the shifted input rows over the cells the tap
   reaches inside the zero padding. */
#include <stdint.h>

#define HB_DEPTHWISE_CONV2D(NAME, T)                                                          \
    void NAME(const T *restrict x, const T *restrict w, const T *restrict b, T *restrict y,   \
              int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, void *workspace,         \
              int64_t workspace_bytes) {                                                      \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        const int64_t pad = K / 2;                                                            \
        _Pragma("omp parallel for collapse(2) schedule(static)")                              \
        for (int64_t n = 0; n < N; ++n)                                                       \
            for (int64_t c = 0; c < C; ++c) {                                                 \
                const T *restrict in = x + (n * C + c) * H * W;                               \
                T *restrict out = y + (n * C + c) * H * W;                                    \
                for (int64_t s = 0; s < H * W; ++s) out[s] = b[c];                            \
                for (int64_t i = 0; i < K; ++i) {                                             \
                    const int64_t di = i - pad;                                               \
                    const int64_t h_lo = di < 0 ? -di : 0, h_hi = di > 0 ? H - di : H;        \
                    for (int64_t j = 0; j < K; ++j) {                                         \
                        const T tap = w[(c * K + i) * K + j];                                 \
                        const int64_t dj = j - pad;                                           \
                        const int64_t w_lo = dj < 0 ? -dj : 0, w_hi = dj > 0 ? W - dj : W;    \
                        for (int64_t h = h_lo; h < h_hi; ++h) {                               \
                            T *restrict row = out + h * W;                                    \
                            const T *restrict src = in + (h + di) * W + dj;                   \
                            _Pragma("omp simd")                                               \
                            for (int64_t v = w_lo; v < w_hi; ++v) row[v] += tap * src[v];     \
                        }                                                                     \
                    }                                                                         \
                }                                                                             \
            }                                                                                 \
    }

HB_DEPTHWISE_CONV2D(depthwise_conv2d_fp64, double)
HB_DEPTHWISE_CONV2D(depthwise_conv2d_fp32, float)
