/* mse_loss: one parallel SIMD reduction of the squared differences, accumulated in double (the
   mean of N terms; a float accumulator would lose digits over millions of them). */
#include <stdint.h>

#define HB_MSE_LOSS(NAME, T)                                                                \
    void NAME(const T *restrict pred, const T *restrict target, T *restrict loss, int64_t N, \
              void *workspace, int64_t workspace_bytes) {                                   \
        (void)workspace;                                                                    \
        (void)workspace_bytes;                                                              \
        double total = 0;                                                                   \
        _Pragma("omp parallel for simd reduction(+ : total) schedule(static)")              \
        for (int64_t i = 0; i < N; ++i) {                                                   \
            const double d = (double)pred[i] - (double)target[i];                           \
            total += d * d;                                                                 \
        }                                                                                   \
        loss[0] = (T)(total / (double)N);                                                   \
    }

HB_MSE_LOSS(mse_loss_fp64, double)
HB_MSE_LOSS(mse_loss_fp32, float)
