/* avgpool2d: the (sample, channel, output row) strips shared among threads; each output the mean
   of its K x K window, read as K contiguous runs of K inputs. */
#include <stdint.h>

#define HB_AVGPOOL2D(NAME, T)                                                                 \
    void NAME(const T *restrict x, T *restrict y, int64_t N, int64_t C, int64_t OH,           \
              int64_t OW, int64_t K, void *workspace, int64_t workspace_bytes) {              \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        const int64_t row = OW * K;                                                           \
        const T inv = (T)1 / (T)(K * K);                                                      \
        _Pragma("omp parallel for collapse(2) schedule(static)")                              \
        for (int64_t plane = 0; plane < N * C; ++plane)                                       \
            for (int64_t p = 0; p < OH; ++p) {                                                \
                const T *restrict window_rows = x + (plane * OH + p) * K * row;               \
                T *restrict out = y + (plane * OH + p) * OW;                                  \
                for (int64_t q = 0; q < OW; ++q) {                                            \
                    T sum = 0;                                                                \
                    for (int64_t i = 0; i < K; ++i)                                           \
                        for (int64_t j = 0; j < K; ++j) sum += window_rows[i * row + q * K + j]; \
                    out[q] = sum * inv;                                                       \
                }                                                                             \
            }                                                                                 \
    }

HB_AVGPOOL2D(avgpool2d_fp64, double)
HB_AVGPOOL2D(avgpool2d_fp32, float)
