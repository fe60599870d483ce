/* attention: the (batch, query) rows shared among threads; per query the scaled scores against
   every key (SIMD dot products), a max-shifted softmax, then the weighted sum of the value rows. */
#include <stdint.h>
#include <tgmath.h>

#define HB_ATTENTION(NAME, T)                                                                 \
    void NAME(const T *restrict Q, const T *restrict K, const T *restrict V, T *restrict O,   \
              int64_t B, int64_t L, int64_t E, void *workspace, int64_t workspace_bytes) {    \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        const T scale = (T)1 / sqrt((T)E);                                                    \
        _Pragma("omp parallel for collapse(2) schedule(static)")                              \
        for (int64_t b = 0; b < B; ++b)                                                       \
            for (int64_t i = 0; i < L; ++i) {                                                 \
                T scores[L];                                                                  \
                const T *restrict q = Q + (b * L + i) * E;                                    \
                T peak = (T)-INFINITY;                                                        \
                for (int64_t j = 0; j < L; ++j) {                                             \
                    const T *restrict k = K + (b * L + j) * E;                                \
                    T dot = 0;                                                                \
                    _Pragma("omp simd reduction(+ : dot)")                                    \
                    for (int64_t e = 0; e < E; ++e) dot += q[e] * k[e];                       \
                    scores[j] = dot * scale;                                                  \
                    peak = scores[j] > peak ? scores[j] : peak;                               \
                }                                                                             \
                T *restrict o = O + (b * L + i) * E;                                          \
                for (int64_t e = 0; e < E; ++e) o[e] = 0;                                     \
                T sum = 0;                                                                    \
                for (int64_t j = 0; j < L; ++j) {                                             \
                    const T p = exp(scores[j] - peak);                                        \
                    const T *restrict v = V + (b * L + j) * E;                                \
                    sum += p;                                                                 \
                    _Pragma("omp simd")                                                       \
                    for (int64_t e = 0; e < E; ++e) o[e] += p * v[e];                         \
                }                                                                             \
                const T inv = (T)1 / sum;                                                     \
                for (int64_t e = 0; e < E; ++e) o[e] *= inv;                                  \
            }                                                                                 \
    }

HB_ATTENTION(attention_fp64, double)
HB_ATTENTION(attention_fp32, float)
