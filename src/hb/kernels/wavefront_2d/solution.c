/* wavefront_2d (TSVC s2111, divisor 2): the interior in 64 x 64 tiles; tile (tj, ti) needs its
 * left and upper neighbours only, so the tiles of one anti-diagonal are shared among threads,
 * diagonal after diagonal, each tile swept row by row. */
#include <stdint.h>

#define HB_KERNEL(NAME, T)                                                                                \
    void NAME(T *restrict aa, int64_t N, void *workspace, int64_t workspace_bytes) {                      \
        (void)workspace;                                                                                  \
        (void)workspace_bytes;                                                                            \
        const int64_t tile = 64, tiles = (N - 2 + tile) / tile;                                           \
        for (int64_t diagonal = 0; diagonal < 2 * tiles - 1; ++diagonal) {                                \
            const int64_t first = diagonal < tiles ? 0 : diagonal - tiles + 1;                            \
            const int64_t last = diagonal < tiles ? diagonal : tiles - 1;                                 \
            _Pragma("omp parallel for schedule(dynamic, 1)")                                              \
            for (int64_t tj = first; tj <= last; ++tj) {                                                  \
                const int64_t ti = diagonal - tj;                                                         \
                const int64_t j1 = 1 + (tj + 1) * tile < N ? 1 + (tj + 1) * tile : N;                     \
                const int64_t i0 = 1 + ti * tile, i1 = 1 + (ti + 1) * tile < N ? 1 + (ti + 1) * tile : N; \
                for (int64_t j = 1 + tj * tile; j < j1; ++j)                                              \
                    for (int64_t i = i0; i < i1; ++i)                                                     \
                        aa[j * N + i] = (aa[j * N + i - 1] + aa[(j - 1) * N + i]) / (T)2;                 \
            }                                                                                             \
        }                                                                                                 \
    }

HB_KERNEL(wavefront_2d_fp64, double)
HB_KERNEL(wavefront_2d_fp32, float)
