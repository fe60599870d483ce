/* deriche: the row recursions with the rows shared among threads; the column recursions run down
 * the rows in order with each thread owning a band of columns, so every pass reads and writes
 * along rows (the previous two rows of the state stay in cache). y1, y2 and a row of
 * zeros standing for the state beyond the image's edges are in the workspace. */
#include <math.h>
#include <omp.h>
#include <stdint.h>

#define HB_DERICHE(NAME, T, EXP, POW)                                                            \
    void NAME(const T *restrict imgIn, T *restrict imgOut, int64_t W, int64_t H, T alpha,        \
              void *workspace, int64_t workspace_bytes) {                                        \
        (void)workspace_bytes;                                                                   \
        T *restrict y1 = workspace;                                                              \
        T *restrict y2 = y1 + W * H;                                                             \
        T *restrict zero = y2 + W * H; /* one row of zeros: the state before the first row */    \
        const T e = EXP(-alpha);                                                                 \
        const T k = (1 - e) * (1 - e) / (1 + 2 * alpha * e - EXP(2 * alpha));                    \
        const T a1 = k, a2 = k * e * (alpha - 1), a3 = k * e * (alpha + 1);                      \
        const T a4 = -k * EXP(-2 * alpha), b1 = POW((T)2, -alpha), b2 = -EXP(-2 * alpha);        \
        _Pragma("omp parallel")                                                                  \
        {                                                                                        \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t i = 0; i < W; ++i) {                                                    \
                const T *restrict x = imgIn + i * H;                                             \
                T *restrict c = y1 + i * H, *restrict a = y2 + i * H;                            \
                T xm1 = 0, ym1 = 0, ym2 = 0;                                                     \
                for (int64_t j = 0; j < H; ++j) {                                                \
                    c[j] = a1 * x[j] + a2 * xm1 + b1 * ym1 + b2 * ym2;                           \
                    xm1 = x[j];                                                                  \
                    ym2 = ym1;                                                                   \
                    ym1 = c[j];                                                                  \
                }                                                                                \
                T xp1 = 0, xp2 = 0, yp1 = 0, yp2 = 0;                                            \
                for (int64_t j = H - 1; j >= 0; --j) {                                           \
                    a[j] = a3 * xp1 + a4 * xp2 + b1 * yp1 + b2 * yp2;                            \
                    xp2 = xp1;                                                                   \
                    xp1 = x[j];                                                                  \
                    yp2 = yp1;                                                                   \
                    yp1 = a[j];                                                                  \
                }                                                                                \
                for (int64_t j = 0; j < H; ++j) imgOut[i * H + j] = c[j] + a[j];                 \
            }                                                                                    \
            const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();                  \
            const int64_t j0 = H * t / nt, j1 = H * (t + 1) / nt;                                \
            for (int64_t j = j0; j < j1; ++j) zero[j] = 0;                                       \
            for (int64_t i = 0; i < W; ++i) {                                                    \
                const T *restrict x = imgOut + i * H;                                            \
                const T *restrict xm = i > 0 ? x - H : zero;                                     \
                const T *restrict c1 = i > 0 ? y1 + (i - 1) * H : zero;                          \
                const T *restrict c2 = i > 1 ? y1 + (i - 2) * H : zero;                          \
                T *restrict c = y1 + i * H;                                                      \
                for (int64_t j = j0; j < j1; ++j)                                                \
                    c[j] = a1 * x[j] + a2 * xm[j] + b1 * c1[j] + b2 * c2[j];                     \
            }                                                                                    \
            for (int64_t i = W - 1; i >= 0; --i) {                                               \
                const T *restrict xp = i < W - 1 ? imgOut + (i + 1) * H : zero;                  \
                const T *restrict xpp = i < W - 2 ? imgOut + (i + 2) * H : zero;                 \
                const T *restrict a1r = i < W - 1 ? y2 + (i + 1) * H : zero;                     \
                const T *restrict a2r = i < W - 2 ? y2 + (i + 2) * H : zero;                     \
                T *restrict a = y2 + i * H;                                                      \
                for (int64_t j = j0; j < j1; ++j)                                                \
                    a[j] = a3 * xp[j] + a4 * xpp[j] + b1 * a1r[j] + b2 * a2r[j];                 \
            }                                                                                    \
            for (int64_t i = 0; i < W; ++i)                                                      \
                for (int64_t j = j0; j < j1; ++j)                                                \
                    imgOut[i * H + j] = y1[i * H + j] + y2[i * H + j];                           \
        }                                                                                        \
    }

HB_DERICHE(deriche_fp64, double, exp, pow)
HB_DERICHE(deriche_fp32, float, expf, powf)
