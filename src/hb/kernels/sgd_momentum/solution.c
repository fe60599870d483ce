/* sgd_momentum: one parallel SIMD loop over the parameters. */
#include <stdint.h>

#define HB_SGD_MOMENTUM(NAME, T)                                                             \
    void NAME(T *restrict param, const T *restrict grad, T *restrict buf, int64_t N, T lr,   \
              T momentum, T weight_decay, void *workspace, int64_t workspace_bytes) {        \
        (void)workspace;                                                                     \
        (void)workspace_bytes;                                                               \
        _Pragma("omp parallel for simd schedule(static)")                                    \
        for (int64_t i = 0; i < N; ++i) {                                                    \
            const T b = momentum * buf[i] + grad[i] + weight_decay * param[i];               \
            buf[i] = b;                                                                      \
            param[i] -= lr * b;                                                              \
        }                                                                                    \
    }

HB_SGD_MOMENTUM(sgd_momentum_fp64, double)
HB_SGD_MOMENTUM(sgd_momentum_fp32, float)
