/* gelu: y = 0.5 x (1 + erf(x / sqrt 2)), one parallel loop over the elements. */
#include <stdint.h>
#include <tgmath.h>

#define HB_GELU(NAME, T)                                                                    \
    void NAME(const T *restrict x, T *restrict y, int64_t N, void *workspace,               \
              int64_t workspace_bytes) {                                                    \
        (void)workspace;                                                                    \
        (void)workspace_bytes;                                                              \
        const T inv_sqrt2 = (T)0.70710678118654752440;                                      \
        _Pragma("omp parallel for schedule(static)")                                        \
        for (int64_t i = 0; i < N; ++i) y[i] = (T)0.5 * x[i] * ((T)1 + erf(x[i] * inv_sqrt2)); \
    }

HB_GELU(gelu_fp64, double)
HB_GELU(gelu_fp32, float)
