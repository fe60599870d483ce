/* hdiff: each interior point's Laplacians and limited fluxes computed where they are needed
   (outer rows i shared among threads, the vertical index k innermost and contiguous); the edge
   band two columns wide keeps the input. */
#include <stdint.h>
#include <string.h>

#define HB_HDIFF(NAME, T)                                                                        \
    static inline T NAME##_lap(const T *restrict f, int64_t x, int64_t sx, int64_t sy) {         \
        return (T)4.0 * f[x] - (((f[x + sx] + f[x - sx]) + f[x + sy]) + f[x - sy]);              \
    }                                                                                            \
    /* the flux from x to x + s: the Laplacian's difference, zero where it runs with f's */      \
    static inline T NAME##_flux(const T *restrict f, int64_t x, int64_t s, int64_t sx,           \
                                int64_t sy) {                                                    \
        const T res = NAME##_lap(f, x + s, sx, sy) - NAME##_lap(f, x, sx, sy);                   \
        return res * (f[x + s] - f[x]) > (T)0.0 ? (T)0.0 : res;                                  \
    }                                                                                            \
    void NAME(const T *restrict in_field, const T *restrict coeff, T *restrict out_field,        \
              int64_t I, int64_t J, int64_t K, void *workspace, int64_t workspace_bytes) {       \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        const int64_t sx = J * K, sy = K;                                                        \
        _Pragma("omp parallel for schedule(static)")                                             \
        for (int64_t i = 0; i < I; ++i) {                                                        \
            if (i < 2 || i >= I - 2) {                                                           \
                memcpy(out_field + i * sx, in_field + i * sx, (size_t)sx * sizeof(T));           \
                continue;                                                                        \
            }                                                                                    \
            memcpy(out_field + i * sx, in_field + i * sx, (size_t)(2 * K) * sizeof(T));          \
            memcpy(out_field + i * sx + (J - 2) * K, in_field + i * sx + (J - 2) * K,            \
                   (size_t)(2 * K) * sizeof(T));                                                 \
            for (int64_t j = 2; j < J - 2; ++j)                                                  \
                for (int64_t k = 0; k < K; ++k) {                                                \
                    const int64_t x = i * sx + j * sy + k;                                       \
                    const T fx = NAME##_flux(in_field, x, sx, sx, sy)                            \
                                 - NAME##_flux(in_field, x - sx, sx, sx, sy);                    \
                    out_field[x] = in_field[x]                                                   \
                                   - coeff[x] * ((fx + NAME##_flux(in_field, x, sy, sx, sy))     \
                                                 - NAME##_flux(in_field, x - sy, sy, sx, sy));   \
                }                                                                                \
        }                                                                                        \
    }

HB_HDIFF(hdiff_fp64, double)
HB_HDIFF(hdiff_fp32, float)
