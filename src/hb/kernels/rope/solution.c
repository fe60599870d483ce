/* rope: positions shared among threads; per position the R rotations' cosines and sines (angles
   formed in double: m * theta reaches L radians), then every head's pairs rotated. */
#include <math.h>
#include <stdint.h>

#define HB_ROPE(NAME, T)                                                                      \
    void NAME(const T *restrict x, T *restrict y, int64_t L, int64_t H, int64_t R, T base,    \
              void *workspace, int64_t workspace_bytes) {                                     \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        _Pragma("omp parallel for schedule(static)")                                          \
        for (int64_t m = 0; m < L; ++m) {                                                     \
            T cosines[R], sines[R];                                                           \
            for (int64_t i = 0; i < R; ++i) {                                                 \
                const double angle = (double)m * pow((double)base, -(double)i / (double)R);   \
                cosines[i] = (T)cos(angle);                                                   \
                sines[i] = (T)sin(angle);                                                     \
            }                                                                                 \
            for (int64_t h = 0; h < H; ++h) {                                                 \
                const T *restrict in = x + (m * H + h) * R * 2;                               \
                T *restrict out = y + (m * H + h) * R * 2;                                    \
                for (int64_t i = 0; i < R; ++i) {                                             \
                    const T first = in[2 * i], second = in[2 * i + 1];                        \
                    out[2 * i] = first * cosines[i] - second * sines[i];                      \
                    out[2 * i + 1] = first * sines[i] + second * cosines[i];                  \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    }

HB_ROPE(rope_fp64, double)
HB_ROPE(rope_fp32, float)
