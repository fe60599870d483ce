/* muladdsub (RAJAPerf MULADDSUB): the three maps fused into one parallel SIMD loop. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                      \
    void NAME(const T *restrict in1, const T *restrict in2, T *restrict out1, T *restrict out2, \
          T *restrict out3, int64_t N, void *workspace, int64_t workspace_bytes) {              \
        (void)workspace;                                                                        \
        (void)workspace_bytes;                                                                  \
        _Pragma("omp parallel for simd schedule(static)")                                       \
        for (int64_t i = 0; i < N; ++i) {                                                       \
            out1[i] = in1[i] * in2[i];                                                          \
            out2[i] = in1[i] + in2[i];                                                          \
            out3[i] = in1[i] - in2[i];                                                          \
        }                                                                                       \
    }

HB_KERNEL(muladdsub_fp64, double)
HB_KERNEL(muladdsub_fp32, float)
