/* swiglu: y = gate / (1 + exp(-gate)) * up, one parallel loop over the elements. */
#include <stdint.h>
#include <tgmath.h>

#define HB_SWIGLU(NAME, T)                                                                    \
    void NAME(const T *restrict gate, const T *restrict up, T *restrict y, int64_t N,         \
              int64_t F, void *workspace, int64_t workspace_bytes) {                          \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        const int64_t count = N * F;                                                          \
        _Pragma("omp parallel for schedule(static)")                                          \
        for (int64_t i = 0; i < count; ++i) y[i] = gate[i] / ((T)1 + exp(-gate[i])) * up[i]; \
    }

HB_SWIGLU(swiglu_fp64, double)
HB_SWIGLU(swiglu_fp32, float)
