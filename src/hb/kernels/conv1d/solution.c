/* conv1d: the (sample, output channel) rows shared among threads; each row starts at its bias and
   accumulates, per input channel and tap, one SIMD axpy of the shifted input row over the
   positions the tap reaches inside the zero padding. */
#include <stdint.h>

#define HB_CONV1D(NAME, T)                                                                    \
    void NAME(const T *restrict x, const T *restrict w, const T *restrict b, T *restrict y,   \
              int64_t N, int64_t CI, int64_t CO, int64_t L, int64_t K, void *workspace,       \
              int64_t workspace_bytes) {                                                      \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        const int64_t pad = K / 2;                                                            \
        _Pragma("omp parallel for collapse(2) schedule(static)")                              \
        for (int64_t n = 0; n < N; ++n)                                                       \
            for (int64_t o = 0; o < CO; ++o) {                                                \
                T *restrict out = y + (n * CO + o) * L;                                       \
                for (int64_t l = 0; l < L; ++l) out[l] = b[o];                                \
                for (int64_t c = 0; c < CI; ++c) {                                            \
                    const T *restrict in = x + (n * CI + c) * L;                              \
                    for (int64_t k = 0; k < K; ++k) {                                         \
                        const T tap = w[(o * CI + c) * K + k];                                \
                        const int64_t shift = k - pad;                                        \
                        const int64_t lo = shift < 0 ? -shift : 0;                            \
                        const int64_t hi = shift > 0 ? L - shift : L;                         \
                        _Pragma("omp simd")                                                   \
                        for (int64_t l = lo; l < hi; ++l) out[l] += tap * in[l + shift];      \
                    }                                                                         \
                }                                                                             \
            }                                                                                 \
    }

HB_CONV1D(conv1d_fp64, double)
HB_CONV1D(conv1d_fp32, float)
