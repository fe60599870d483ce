/* trisolv: blocked forward substitution. x starts as b; a block of TRISOLV_BLOCK rows is solved
 * by one thread, then every row below it subtracts that block's contribution, those rows shared
 * among threads (contiguous dot products over the block's columns). */
#include <stdint.h>

#define TRISOLV_BLOCK 64

#define HB_TRISOLV(NAME, T)                                                                      \
    void NAME(const T *restrict L, T *restrict x, const T *restrict b, int64_t N,                \
              void *workspace, int64_t workspace_bytes) {                                        \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        _Pragma("omp parallel")                                                                  \
        {                                                                                        \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t i = 0; i < N; ++i) x[i] = b[i];                                         \
            for (int64_t s = 0; s < N; s += TRISOLV_BLOCK) {                                     \
                const int64_t e = s + TRISOLV_BLOCK < N ? s + TRISOLV_BLOCK : N;                 \
                _Pragma("omp single")                                                            \
                for (int64_t i = s; i < e; ++i) {                                                \
                    T w = x[i];                                                                  \
                    for (int64_t j = s; j < i; ++j) w -= L[i * N + j] * x[j];                    \
                    x[i] = w / L[i * N + i];                                                     \
                }                                                                                \
                _Pragma("omp for schedule(static)")                                              \
                for (int64_t i = e; i < N; ++i) {                                                \
                    T w = 0;                                                                     \
                    for (int64_t j = s; j < e; ++j) w += L[i * N + j] * x[j];                    \
                    x[i] -= w;                                                                   \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
    }

HB_TRISOLV(trisolv_fp64, double)
HB_TRISOLV(trisolv_fp32, float)
