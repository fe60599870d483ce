/* dropout_scale: one parallel loop; each element's keep decision from SplitMix64 at its own
   counter, so the mask is the same whatever the thread count or order. */
#include <stdint.h>

static inline double hb_dropout_uniform(uint64_t seed, int64_t i) {
    uint64_t z = seed + (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

#define HB_DROPOUT(NAME, T)                                                                   \
    void NAME(const T *restrict x, T *restrict y, int64_t N, T p, int64_t seed,               \
              void *workspace, int64_t workspace_bytes) {                                     \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        const double threshold = (double)p;                                                   \
        const T scale = (T)(1.0 / (1.0 - threshold));                                         \
        _Pragma("omp parallel for schedule(static)")                                          \
        for (int64_t i = 0; i < N; ++i)                                                       \
            y[i] = hb_dropout_uniform((uint64_t)seed, i) >= threshold ? x[i] * scale : (T)0;  \
    }

HB_DROPOUT(dropout_scale_fp64, double)
HB_DROPOUT(dropout_scale_fp32, float)
