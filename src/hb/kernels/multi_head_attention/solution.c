/* multi_head_attention: three parallel phases over the workspace. The input projections (rows of x
   shared among threads, SIMD dot products with the weights' rows), each (batch, head, query)'s
   attention over its head's columns, then the output projection of the heads' context. */
#include <stdint.h>
#include <tgmath.h>

#define HB_MHA(NAME, T)                                                                       \
    void NAME(const T *restrict x, const T *restrict wq, const T *restrict wk,                \
              const T *restrict wv, const T *restrict wo, T *restrict y, int64_t B,           \
              int64_t L, int64_t D, int64_t H, void *workspace, int64_t workspace_bytes) {    \
        (void)workspace_bytes;                                                                \
        const int64_t rows = B * L, E = D / H;                                                \
        T *restrict q = (T *)workspace, *restrict k = q + rows * D;                           \
        T *restrict v = k + rows * D, *restrict context = v + rows * D;                       \
        const T scale = (T)1 / sqrt((T)E);                                                    \
        _Pragma("omp parallel")                                                               \
        {                                                                                     \
            _Pragma("omp for schedule(static)")                                               \
            for (int64_t r = 0; r < rows; ++r)                                                \
                for (int64_t j = 0; j < D; ++j) {                                             \
                    T sq = 0, sk = 0, sv = 0;                                                 \
                    _Pragma("omp simd reduction(+ : sq, sk, sv)")                             \
                    for (int64_t d = 0; d < D; ++d) {                                         \
                        const T xd = x[r * D + d];                                            \
                        sq += xd * wq[j * D + d];                                             \
                        sk += xd * wk[j * D + d];                                             \
                        sv += xd * wv[j * D + d];                                             \
                    }                                                                         \
                    q[r * D + j] = sq;                                                        \
                    k[r * D + j] = sk;                                                        \
                    v[r * D + j] = sv;                                                        \
                }                                                                             \
            _Pragma("omp for collapse(3) schedule(static)")                                   \
            for (int64_t b = 0; b < B; ++b)                                                   \
                for (int64_t h = 0; h < H; ++h)                                               \
                    for (int64_t i = 0; i < L; ++i) {                                         \
                        T scores[L];                                                          \
                        const T *restrict qi = q + (b * L + i) * D + h * E;                   \
                        T peak = (T)-INFINITY;                                                \
                        for (int64_t j = 0; j < L; ++j) {                                     \
                            const T *restrict kj = k + (b * L + j) * D + h * E;               \
                            T dot = 0;                                                        \
                            _Pragma("omp simd reduction(+ : dot)")                            \
                            for (int64_t e = 0; e < E; ++e) dot += qi[e] * kj[e];             \
                            scores[j] = dot * scale;                                          \
                            peak = scores[j] > peak ? scores[j] : peak;                       \
                        }                                                                     \
                        T *restrict out = context + (b * L + i) * D + h * E;                  \
                        for (int64_t e = 0; e < E; ++e) out[e] = 0;                           \
                        T sum = 0;                                                            \
                        for (int64_t j = 0; j < L; ++j) {                                     \
                            const T p = exp(scores[j] - peak);                                \
                            const T *restrict vj = v + (b * L + j) * D + h * E;               \
                            sum += p;                                                         \
                            _Pragma("omp simd")                                               \
                            for (int64_t e = 0; e < E; ++e) out[e] += p * vj[e];              \
                        }                                                                     \
                        const T inv = (T)1 / sum;                                             \
                        for (int64_t e = 0; e < E; ++e) out[e] *= inv;                        \
                    }                                                                         \
            _Pragma("omp for schedule(static)")                                               \
            for (int64_t r = 0; r < rows; ++r)                                                \
                for (int64_t j = 0; j < D; ++j) {                                             \
                    T acc = 0;                                                                \
                    _Pragma("omp simd reduction(+ : acc)")                                    \
                    for (int64_t d = 0; d < D; ++d) acc += context[r * D + d] * wo[j * D + d]; \
                    y[r * D + j] = acc;                                                       \
                }                                                                             \
        }                                                                                     \
    }

HB_MHA(multi_head_attention_fp64, double)
HB_MHA(multi_head_attention_fp32, float)
