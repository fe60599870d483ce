/* mc_option_pricing: the paths split over the threads; each path draws its normal by Box-Muller
 * over splitmix64 of its two counters (in double) and adds its payoff to every option's sum, the
 * payoff at the element type's precision, the sums in double through an OpenMP array-section
 * reduction. */
#include <math.h>
#include <stdint.h>

static inline uint64_t hb_splitmix64(uint64_t key, uint64_t counter) {
    uint64_t z = key + (counter + 1) * UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static inline double hb_normal(uint64_t key, int64_t path) {
    const double u1 = ((double)(hb_splitmix64(key, 2 * (uint64_t)path) >> 11) + 1.0) * 0x1p-53;
    const double u2 = (double)(hb_splitmix64(key, 2 * (uint64_t)path + 1) >> 11) * 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
}

#define HB_MC_OPTION(NAME, T, EXP, SQRT)                                                           \
    void NAME(const int64_t *restrict key, const T *restrict S0, const T *restrict K,              \
              const T *restrict Tx, T *restrict price, int64_t M, int64_t N, T r, T sigma,         \
              void *workspace, int64_t workspace_bytes) {                                          \
        (void)workspace;                                                                           \
        (void)workspace_bytes;                                                                     \
        T drift[M], spread[M];                                                                     \
        double total[M];                                                                           \
        for (int64_t m = 0; m < M; ++m) {                                                          \
            drift[m] = (r - (T)0.5 * sigma * sigma) * Tx[m];                                       \
            spread[m] = sigma * SQRT(Tx[m]);                                                       \
            total[m] = 0.0;                                                                        \
        }                                                                                          \
        const uint64_t seed = (uint64_t)key[0];                                                    \
        _Pragma("omp parallel for schedule(static) reduction(+ : total[:M])")                      \
        for (int64_t i = 0; i < N; ++i) {                                                          \
            const T z = (T)hb_normal(seed, i);                                                     \
            for (int64_t m = 0; m < M; ++m) {                                                      \
                const T payoff = S0[m] * EXP(drift[m] + spread[m] * z) - K[m];                     \
                total[m] += payoff > 0 ? payoff : 0;                                               \
            }                                                                                      \
        }                                                                                          \
        for (int64_t m = 0; m < M; ++m)                                                            \
            price[m] = (T)((double)EXP(-r * Tx[m]) * total[m] / (double)N);                        \
    }

HB_MC_OPTION(mc_option_pricing_fp64, double, exp, sqrt)
HB_MC_OPTION(mc_option_pricing_fp32, float, expf, sqrtf)
