/* log_softmax: rows shared among threads; per row the maximum, the log of the sum of the shifted
   exponentials, then y = x - max - log(sum). */
#include <stdint.h>
#include <tgmath.h>

#define HB_LOG_SOFTMAX(NAME, T)                                                             \
    void NAME(const T *restrict x, T *restrict y, int64_t N, int64_t D, void *workspace,    \
              int64_t workspace_bytes) {                                                    \
        (void)workspace;                                                                    \
        (void)workspace_bytes;                                                              \
        _Pragma("omp parallel for schedule(static)")                                        \
        for (int64_t n = 0; n < N; ++n) {                                                   \
            const T *restrict row = x + n * D;                                              \
            T peak = row[0];                                                                \
            for (int64_t d = 1; d < D; ++d) peak = row[d] > peak ? row[d] : peak;           \
            T sum = 0;                                                                      \
            for (int64_t d = 0; d < D; ++d) sum += exp(row[d] - peak);                      \
            const T shift = peak + log(sum);                                                \
            for (int64_t d = 0; d < D; ++d) y[n * D + d] = row[d] - shift;                  \
        }                                                                                   \
    }

HB_LOG_SOFTMAX(log_softmax_fp64, double)
HB_LOG_SOFTMAX(log_softmax_fp32, float)
