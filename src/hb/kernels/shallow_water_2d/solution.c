/* shallow_water_2d: per step the fluxes into the workspace, then the Lax-Friedrichs update of h,
   hu and hv into the workspace and back; rows shared among the threads of one parallel region,
   the periodic neighbours found without a modulo. */
#include <stdint.h>
#include <string.h>

#define HB_LXF(F, FX, GY)                                                                        \
    ((quarter * (((F[x + e] + F[x - w]) + F[x + n]) + F[x - s]) - cx * (FX[x + e] - FX[x - w]))  \
     - cy * (GY[x + n] - GY[x - s]))

#define HB_SWE(NAME, T)                                                                          \
    void NAME(T *restrict h, T *restrict hu, T *restrict hv, int64_t ny, int64_t nx,             \
              int64_t TSTEPS, T g, T dt, T dx, T dy, void *workspace, int64_t workspace_bytes) { \
        (void)workspace_bytes;                                                                   \
        const int64_t cells = ny * nx;                                                           \
        T *restrict hn = (T *)workspace;                                                         \
        T *restrict hun = hn + cells;                                                            \
        T *restrict hvn = hun + cells;                                                           \
        T *restrict flux_x = hvn + cells;                                                        \
        T *restrict flux_y = flux_x + cells;                                                     \
        T *restrict cross = flux_y + cells;                                                      \
        const T two = (T)2.0, half_g = g / two, quarter = (T)0.25;                               \
        const T cx = dt / (two * dx), cy = dt / (two * dy);                                      \
        _Pragma("omp parallel")                                                                  \
        for (int64_t t = 0; t < TSTEPS; ++t) {                                                   \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t x = 0; x < cells; ++x) {                                                \
                const T pressure = (half_g * h[x]) * h[x];                                       \
                flux_x[x] = (hu[x] * hu[x]) / h[x] + pressure;                                   \
                flux_y[x] = (hv[x] * hv[x]) / h[x] + pressure;                                   \
                cross[x] = (hu[x] * hv[x]) / h[x];                                               \
            }                                                                                    \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t j = 0; j < ny; ++j) {                                                   \
                /* offsets to the neighbours, wrapped at the edges */                            \
                const int64_t n = j == ny - 1 ? -(ny - 1) * nx : nx;                             \
                const int64_t s = j == 0 ? -(ny - 1) * nx : nx;                                  \
                for (int64_t i = 0; i < nx; ++i) {                                               \
                    const int64_t x = j * nx + i;                                                \
                    const int64_t e = i == nx - 1 ? -(nx - 1) : 1;                               \
                    const int64_t w = i == 0 ? -(nx - 1) : 1;                                    \
                    hn[x] = HB_LXF(h, hu, hv);                                                   \
                    hun[x] = HB_LXF(hu, flux_x, cross);                                          \
                    hvn[x] = HB_LXF(hv, cross, flux_y);                                          \
                }                                                                                \
            }                                                                                    \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t j = 0; j < ny; ++j) {                                                   \
                memcpy(h + j * nx, hn + j * nx, (size_t)nx * sizeof(T));                         \
                memcpy(hu + j * nx, hun + j * nx, (size_t)nx * sizeof(T));                       \
                memcpy(hv + j * nx, hvn + j * nx, (size_t)nx * sizeof(T));                       \
            }                                                                                    \
        }                                                                                        \
    }

HB_SWE(shallow_water_2d_fp64, double)
HB_SWE(shallow_water_2d_fp32, float)
