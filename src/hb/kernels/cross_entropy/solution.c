/* cross_entropy: rows shared among threads, each row's max-shifted log-sum-exp less its target's
   logit, summed in a double reduction (the mean of N positive terms). */
#include <stdint.h>
#include <tgmath.h>

#define HB_CROSS_ENTROPY(NAME, T)                                                             \
    void NAME(const T *restrict logits, const int64_t *restrict target, T *restrict loss,     \
              int64_t N, int64_t C, void *workspace, int64_t workspace_bytes) {               \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        double total = 0;                                                                     \
        _Pragma("omp parallel for reduction(+ : total) schedule(static)")                     \
        for (int64_t n = 0; n < N; ++n) {                                                     \
            const T *restrict row = logits + n * C;                                           \
            T peak = row[0];                                                                  \
            for (int64_t c = 1; c < C; ++c) peak = row[c] > peak ? row[c] : peak;            \
            T sum = 0;                                                                        \
            for (int64_t c = 0; c < C; ++c) sum += exp(row[c] - peak);                        \
            total += (double)(peak + log(sum) - row[target[n]]);                              \
        }                                                                                     \
        loss[0] = (T)(total / (double)N);                                                     \
    }

HB_CROSS_ENTROPY(cross_entropy_fp64, double)
HB_CROSS_ENTROPY(cross_entropy_fp32, float)
