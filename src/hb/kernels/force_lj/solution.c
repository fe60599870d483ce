/* force_lj: all-pairs Lennard-Jones forces, one particle per iteration. */
#include <stdint.h>

#define HB_LJ(NAME, T)                                                                         \
    void NAME(const T *restrict pos, T *restrict force, int64_t N, T epsilon, T sigma,         \
              void *workspace, int64_t workspace_bytes) {                                      \
        (void)workspace;                                                                       \
        (void)workspace_bytes;                                                                 \
        const T s2 = sigma * sigma, scale = (T)24.0 * epsilon;                                 \
        _Pragma("omp parallel for schedule(static)")                                           \
        for (int64_t i = 0; i < N; ++i) {                                                      \
            T fx = 0, fy = 0, fz = 0;                                                          \
            for (int64_t j = 0; j < N; ++j) {                                                  \
                if (j == i) continue;                                                          \
                const T dx = pos[3 * i] - pos[3 * j], dy = pos[3 * i + 1] - pos[3 * j + 1];    \
                const T dz = pos[3 * i + 2] - pos[3 * j + 2];                                  \
                const T r2 = dx * dx + dy * dy + dz * dz;                                      \
                const T q = s2 / r2, s6 = q * q * q;                                           \
                const T m = scale * ((T)2.0 * s6 * s6 - s6) / r2;                              \
                fx += m * dx;                                                                  \
                fy += m * dy;                                                                  \
                fz += m * dz;                                                                  \
            }                                                                                  \
            force[3 * i] = fx;                                                                 \
            force[3 * i + 1] = fy;                                                             \
            force[3 * i + 2] = fz;                                                             \
        }                                                                                      \
    }

HB_LJ(force_lj_fp64, double)
HB_LJ(force_lj_fp32, float)
