/* maxpool2d: the (sample, channel, output row) strips shared among threads; each output the
   maximum of its K x K window, read as K contiguous runs of K inputs. */
#include <stdint.h>

#define HB_MAXPOOL2D(NAME, T)                                                                 \
    void NAME(const T *restrict x, T *restrict y, int64_t N, int64_t C, int64_t OH,           \
              int64_t OW, int64_t K, void *workspace, int64_t workspace_bytes) {              \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        const int64_t row = OW * K;                                                           \
        _Pragma("omp parallel for collapse(2) schedule(static)")                              \
        for (int64_t plane = 0; plane < N * C; ++plane)                                       \
            for (int64_t p = 0; p < OH; ++p) {                                                \
                const T *restrict window_rows = x + (plane * OH + p) * K * row;               \
                T *restrict out = y + (plane * OH + p) * OW;                                  \
                for (int64_t q = 0; q < OW; ++q) {                                            \
                    T best = window_rows[q * K];                                              \
                    for (int64_t i = 0; i < K; ++i)                                           \
                        for (int64_t j = 0; j < K; ++j) {                                     \
                            const T value = window_rows[i * row + q * K + j];                 \
                            best = value > best ? value : best;                               \
                        }                                                                     \
                    out[q] = best;                                                            \
                }                                                                             \
            }                                                                                 \
    }

HB_MAXPOOL2D(maxpool2d_fp64, double)
HB_MAXPOOL2D(maxpool2d_fp32, float)
