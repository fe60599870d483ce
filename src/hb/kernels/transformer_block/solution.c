/* transformer_block: one parallel region, its phases separated by the worksharing loops' barriers.
   Rows (b, l) are shared among threads for the norms and projections (SIMD dot products with the
   weights' contiguous rows), (batch, head, query) triples in dynamic chunks for the causal
   attention (query i sees i + 1 keys); the MLP runs per row on the workspace's hidden rows. */
#include <stdint.h>
#include <tgmath.h>

#define HB_TRANSFORMER_BLOCK(NAME, T)                                                          \
    static void NAME##_rmsnorm(const T *restrict in, const T *restrict gain, T *restrict out,  \
                               int64_t D, T eps) {                                             \
        T squares = 0;                                                                         \
        _Pragma("omp simd reduction(+ : squares)")                                             \
        for (int64_t d = 0; d < D; ++d) squares += in[d] * in[d];                              \
        const T inv = (T)1 / sqrt(squares / (T)D + eps);                                       \
        for (int64_t d = 0; d < D; ++d) out[d] = in[d] * inv * gain[d];                        \
    }                                                                                          \
    static T NAME##_dot(const T *restrict a, const T *restrict b, int64_t n) {                 \
        T acc = 0;                                                                             \
        _Pragma("omp simd reduction(+ : acc)")                                                 \
        for (int64_t i = 0; i < n; ++i) acc += a[i] * b[i];                                    \
        return acc;                                                                            \
    }                                                                                          \
    void NAME(const T *restrict x, const T *restrict g1, const T *restrict wq,                 \
              const T *restrict wk, const T *restrict wv, const T *restrict wo,                \
              const T *restrict g2, const T *restrict w1, const T *restrict b1,                \
              const T *restrict w2, const T *restrict b2, T *restrict y, int64_t B,            \
              int64_t L, int64_t D, int64_t H, int64_t F, T eps, void *workspace,              \
              int64_t workspace_bytes) {                                                       \
        (void)workspace_bytes;                                                                 \
        const int64_t rows = B * L, E = D / H;                                                 \
        T *restrict normed = (T *)workspace, *restrict q = normed + rows * D;                  \
        T *restrict k = q + rows * D, *restrict v = k + rows * D;                              \
        T *restrict context = v + rows * D, *restrict h = context + rows * D;                  \
        T *restrict hidden = h + rows * D;                                                     \
        const T scale = (T)1 / sqrt((T)E), inv_sqrt2 = (T)0.70710678118654752440;              \
        _Pragma("omp parallel")                                                                \
        {                                                                                      \
            _Pragma("omp for schedule(static)")                                                \
            for (int64_t r = 0; r < rows; ++r) {                                               \
                NAME##_rmsnorm(x + r * D, g1, normed + r * D, D, eps);                         \
                for (int64_t j = 0; j < D; ++j) {                                              \
                    q[r * D + j] = NAME##_dot(normed + r * D, wq + j * D, D);                  \
                    k[r * D + j] = NAME##_dot(normed + r * D, wk + j * D, D);                  \
                    v[r * D + j] = NAME##_dot(normed + r * D, wv + j * D, D);                  \
                }                                                                              \
            }                                                                                  \
            _Pragma("omp for collapse(3) schedule(dynamic, 8)")                                \
            for (int64_t b = 0; b < B; ++b)                                                    \
                for (int64_t hd = 0; hd < H; ++hd)                                             \
                    for (int64_t i = 0; i < L; ++i) {                                          \
                        T scores[i + 1];                                                       \
                        const T *restrict qi = q + (b * L + i) * D + hd * E;                   \
                        T peak = (T)-INFINITY;                                                 \
                        for (int64_t j = 0; j <= i; ++j) {                                     \
                            scores[j] = NAME##_dot(qi, k + (b * L + j) * D + hd * E, E) * scale; \
                            peak = scores[j] > peak ? scores[j] : peak;                        \
                        }                                                                      \
                        T *restrict out = context + (b * L + i) * D + hd * E;                  \
                        for (int64_t e = 0; e < E; ++e) out[e] = 0;                            \
                        T sum = 0;                                                             \
                        for (int64_t j = 0; j <= i; ++j) {                                     \
                            const T p = exp(scores[j] - peak);                                 \
                            const T *restrict vj = v + (b * L + j) * D + hd * E;               \
                            sum += p;                                                          \
                            _Pragma("omp simd")                                                \
                            for (int64_t e = 0; e < E; ++e) out[e] += p * vj[e];               \
                        }                                                                      \
                        const T inv = (T)1 / sum;                                              \
                        for (int64_t e = 0; e < E; ++e) out[e] *= inv;                         \
                    }                                                                          \
            _Pragma("omp for schedule(static)")                                                \
            for (int64_t r = 0; r < rows; ++r) {                                               \
                for (int64_t j = 0; j < D; ++j)                                                \
                    h[r * D + j] = x[r * D + j] + NAME##_dot(context + r * D, wo + j * D, D);  \
                NAME##_rmsnorm(h + r * D, g2, normed + r * D, D, eps);                         \
                T *restrict hid = hidden + r * F;                                              \
                for (int64_t f = 0; f < F; ++f) {                                              \
                    const T a = NAME##_dot(normed + r * D, w1 + f * D, D) + b1[f];             \
                    hid[f] = (T)0.5 * a * ((T)1 + erf(a * inv_sqrt2));                         \
                }                                                                              \
                for (int64_t d = 0; d < D; ++d)                                                \
                    y[r * D + d] = h[r * D + d] + NAME##_dot(hid, w2 + d * F, F) + b2[d];      \
            }                                                                                  \
        }                                                                                      \
    }

HB_TRANSFORMER_BLOCK(transformer_block_fp64, double)
HB_TRANSFORMER_BLOCK(transformer_block_fp32, float)
