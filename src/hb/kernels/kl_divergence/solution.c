/* kl_divergence: rows shared among threads, each row's sum of target * (log target - input) in the
   problem precision, the rows' sums reduced in double. */
#include <stdint.h>
#include <tgmath.h>

#define HB_KL_DIVERGENCE(NAME, T)                                                             \
    void NAME(const T *restrict input, const T *restrict target, T *restrict loss, int64_t N, \
              int64_t C, void *workspace, int64_t workspace_bytes) {                          \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        double total = 0;                                                                     \
        _Pragma("omp parallel for reduction(+ : total) schedule(static)")                     \
        for (int64_t n = 0; n < N; ++n) {                                                     \
            const T *restrict p = target + n * C, *restrict q = input + n * C;                \
            T row = 0;                                                                        \
            for (int64_t c = 0; c < C; ++c) row += p[c] * (log(p[c]) - q[c]);                 \
            total += (double)row;                                                             \
        }                                                                                     \
        loss[0] = (T)(total / (double)N);                                                     \
    }

HB_KL_DIVERGENCE(kl_divergence_fp64, double)
HB_KL_DIVERGENCE(kl_divergence_fp32, float)
