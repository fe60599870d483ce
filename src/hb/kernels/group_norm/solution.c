/* group_norm: the (sample, group) blocks shared among threads; each block, contiguous in x, gets a
   two-pass mean and variance, then each channel of it one multiply-add. */
#include <stdint.h>
#include <tgmath.h>

#define HB_GROUP_NORM(NAME, T)                                                                 \
    void NAME(const T *restrict x, const T *restrict weight, const T *restrict bias,           \
              T *restrict y, int64_t N, int64_t C, int64_t HW, int64_t G, T eps,               \
              void *workspace, int64_t workspace_bytes) {                                      \
        (void)workspace;                                                                       \
        (void)workspace_bytes;                                                                 \
        const int64_t per_group = C / G, span = per_group * HW;                                \
        _Pragma("omp parallel for collapse(2) schedule(static)")                               \
        for (int64_t n = 0; n < N; ++n)                                                        \
            for (int64_t g = 0; g < G; ++g) {                                                  \
                const int64_t first = (n * C + g * per_group) * HW;                            \
                const T *restrict in = x + first;                                              \
                T sum = 0;                                                                     \
                _Pragma("omp simd reduction(+ : sum)")                                         \
                for (int64_t s = 0; s < span; ++s) sum += in[s];                               \
                const T mean = sum / (T)span;                                                  \
                T squares = 0;                                                                 \
                _Pragma("omp simd reduction(+ : squares)")                                     \
                for (int64_t s = 0; s < span; ++s) squares += (in[s] - mean) * (in[s] - mean); \
                const T inv = (T)1 / sqrt(squares / (T)span + eps);                            \
                for (int64_t c = 0; c < per_group; ++c) {                                      \
                    const int64_t channel = g * per_group + c;                                 \
                    const T scale = inv * weight[channel];                                     \
                    const T shift = bias[channel] - mean * scale;                              \
                    _Pragma("omp simd")                                                        \
                    for (int64_t s = 0; s < HW; ++s)                                           \
                        y[first + c * HW + s] = in[c * HW + s] * scale + shift;                \
                }                                                                              \
            }                                                                                  \
    }

HB_GROUP_NORM(group_norm_fp64, double)
HB_GROUP_NORM(group_norm_fp32, float)
