/* adam_update: one parallel SIMD loop over the parameters; the bias corrections computed once. */
#include <stdint.h>
#include <tgmath.h>

#define HB_ADAM(NAME, T)                                                                      \
    void NAME(T *restrict param, const T *restrict grad, T *restrict m, T *restrict v,        \
              int64_t N, T lr, T beta1, T beta2, T eps, T weight_decay, int64_t step,         \
              void *workspace, int64_t workspace_bytes) {                                     \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        const T step_size = lr / ((T)1 - pow(beta1, (T)step));                                \
        const T inv_sqrt_bc2 = (T)1 / sqrt((T)1 - pow(beta2, (T)step));                       \
        _Pragma("omp parallel for simd schedule(static)")                                     \
        for (int64_t i = 0; i < N; ++i) {                                                     \
            const T g = grad[i] + weight_decay * param[i];                                    \
            const T mi = beta1 * m[i] + ((T)1 - beta1) * g;                                   \
            const T vi = beta2 * v[i] + ((T)1 - beta2) * g * g;                               \
            m[i] = mi;                                                                        \
            v[i] = vi;                                                                        \
            param[i] -= step_size * mi / (sqrt(vi) * inv_sqrt_bc2 + eps);                     \
        }                                                                                     \
    }

HB_ADAM(adam_update_fp64, double)
HB_ADAM(adam_update_fp32, float)
