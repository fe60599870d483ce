/* ifft_radix2: iterative radix-2 Cooley-Tukey with conjugate twiddles. The twiddles
 * exp(2 pi i k / N) are computed once in double into the workspace, x is copied to y in
 * bit-reversed order and scaled by 1 / N (exact: N is a power of two), then log2 N stages of
 * butterflies run in place, each stage's N / 2 butterflies split over the threads. */
#include <math.h>
#include <stdint.h>

#define HB_IFFT(NAME, T)                                                                           \
    void NAME(const T *restrict x, T *restrict y, int64_t N, void *workspace,                      \
              int64_t workspace_bytes) {                                                           \
        (void)workspace_bytes;                                                                     \
        T *restrict twiddle = (T *)workspace;                                                      \
        int bits = 0;                                                                              \
        while (((int64_t)1 << bits) < N) ++bits;                                                   \
        const T scale = (T)(1.0 / (double)N);                                                      \
        const double angle = 6.283185307179586476925 / (double)N;                                  \
        _Pragma("omp parallel")                                                                    \
        {                                                                                          \
            _Pragma("omp for schedule(static)")                                                    \
            for (int64_t k = 0; k < N / 2; ++k) {                                                  \
                twiddle[2 * k] = (T)cos(angle * (double)k);                                        \
                twiddle[2 * k + 1] = (T)sin(angle * (double)k);                                    \
            }                                                                                      \
            _Pragma("omp for schedule(static)")                                                    \
            for (int64_t i = 0; i < N; ++i) {                                                      \
                uint64_t r = 0, v = (uint64_t)i;                                                   \
                for (int b = 0; b < bits; ++b, v >>= 1) r = (r << 1) | (v & 1);                    \
                y[2 * r] = x[2 * i] * scale;                                                       \
                y[2 * r + 1] = x[2 * i + 1] * scale;                                               \
            }                                                                                      \
            for (int64_t half = 1, stride = N / 2; half < N; half *= 2, stride /= 2) {             \
                _Pragma("omp for schedule(static)")                                                \
                for (int64_t b = 0; b < N / 2; ++b) {                                              \
                    const int64_t k = b & (half - 1);                                              \
                    const int64_t i = 2 * (b - k) + k, j = i + half;                               \
                    const T wr = twiddle[2 * k * stride], wi = twiddle[2 * k * stride + 1];        \
                    const T tr = wr * y[2 * j] - wi * y[2 * j + 1];                                \
                    const T ti = wr * y[2 * j + 1] + wi * y[2 * j];                                \
                    y[2 * j] = y[2 * i] - tr;                                                      \
                    y[2 * j + 1] = y[2 * i + 1] - ti;                                              \
                    y[2 * i] += tr;                                                                \
                    y[2 * i + 1] += ti;                                                            \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

HB_IFFT(ifft_radix2_fp64, double)
HB_IFFT(ifft_radix2_fp32, float)
