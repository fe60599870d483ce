/* nbody: direct summation, one body per iteration of an OpenMP loop; the inner loop over all bodies
 * (the self term is zero thanks to the softening) is left for the compiler to vectorise. */
#include <math.h>
#include <stdint.h>

#define HB_NBODY(NAME, T, SQRT)                                                                    \
    void NAME(const T *restrict pos, const T *restrict mass, T *restrict acc, int64_t N, T G,      \
              T eps, void *workspace, int64_t workspace_bytes) {                                   \
        (void)workspace;                                                                           \
        (void)workspace_bytes;                                                                     \
        const T eps2 = eps * eps;                                                                  \
        _Pragma("omp parallel for schedule(static)")                                               \
        for (int64_t i = 0; i < N; ++i) {                                                          \
            const T xi = pos[3 * i], yi = pos[3 * i + 1], zi = pos[3 * i + 2];                     \
            T ax = 0, ay = 0, az = 0;                                                              \
            for (int64_t j = 0; j < N; ++j) {                                                      \
                const T dx = pos[3 * j] - xi, dy = pos[3 * j + 1] - yi;                            \
                const T dz = pos[3 * j + 2] - zi;                                                  \
                const T r2 = dx * dx + dy * dy + dz * dz + eps2;                                   \
                const T w = mass[j] / (r2 * SQRT(r2));                                             \
                ax += w * dx;                                                                      \
                ay += w * dy;                                                                      \
                az += w * dz;                                                                      \
            }                                                                                      \
            acc[3 * i] = G * ax;                                                                   \
            acc[3 * i + 1] = G * ay;                                                               \
            acc[3 * i + 2] = G * az;                                                               \
        }                                                                                          \
    }

HB_NBODY(nbody_fp64, double, sqrt)
HB_NBODY(nbody_fp32, float, sqrtf)
