/* gesummv: y <- alpha A x + beta B x, both row products in one pass, rows shared among threads. */
#include <stdint.h>

#define HB_GESUMMV(NAME, T)                                                                      \
    void NAME(const T *restrict A, const T *restrict B, const T *restrict x, T *restrict y,      \
              int64_t N, T alpha, T beta, void *workspace, int64_t workspace_bytes) {            \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        _Pragma("omp parallel for schedule(static)")                                             \
        for (int64_t i = 0; i < N; ++i) {                                                        \
            T tmp = 0, acc = 0;                                                                  \
            for (int64_t j = 0; j < N; ++j) {                                                    \
                tmp += A[i * N + j] * x[j];                                                      \
                acc += B[i * N + j] * x[j];                                                      \
            }                                                                                    \
            y[i] = alpha * tmp + beta * acc;                                                     \
        }                                                                                        \
    }

HB_GESUMMV(gesummv_fp64, double)
HB_GESUMMV(gesummv_fp32, float)
