/* gemm: C <- alpha * A B + beta * C, rows shared among threads, i-k-j loop order. */
#include <stdint.h>

#define HB_GEMM(NAME, T)                                                                      \
    void NAME(const T *restrict A, const T *restrict B, T *restrict C, int64_t NI, int64_t NJ, \
              int64_t NK, T alpha, T beta, void *workspace, int64_t workspace_bytes) {        \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        _Pragma("omp parallel for schedule(static)")                                          \
        for (int64_t i = 0; i < NI; ++i) {                                                    \
            for (int64_t j = 0; j < NJ; ++j) C[i * NJ + j] *= beta;                           \
            for (int64_t k = 0; k < NK; ++k) {                                                \
                const T a = alpha * A[i * NK + k];                                            \
                for (int64_t j = 0; j < NJ; ++j) C[i * NJ + j] += a * B[k * NJ + j];          \
            }                                                                                 \
        }                                                                                     \
    }

HB_GEMM(gemm_fp64, double)
HB_GEMM(gemm_fp32, float)
