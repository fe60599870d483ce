/* transpose_tiled: 32 x 32 tiles shared among threads (both tile loops collapsed), each tile
 * copied row by row. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                    \
    void NAME(const T *restrict A, T *restrict B, int64_t M, int64_t N, void *workspace,      \
          int64_t workspace_bytes) {                                                          \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        _Pragma("omp parallel for collapse(2) schedule(static)")                              \
        for (int64_t i0 = 0; i0 < M; i0 += 32)                                                \
            for (int64_t j0 = 0; j0 < N; j0 += 32) {                                          \
                const int64_t i1 = i0 + 32 < M ? i0 + 32 : M, j1 = j0 + 32 < N ? j0 + 32 : N; \
                for (int64_t j = j0; j < j1; ++j)                                             \
                    for (int64_t i = i0; i < i1; ++i) B[j * M + i] = A[i * N + j];            \
            }                                                                                 \
    }

HB_KERNEL(transpose_tiled_fp64, double)
HB_KERNEL(transpose_tiled_fp32, float)
