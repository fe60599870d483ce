/* shallow_water_2d on MPI under the default plan: rows of h, hu and hv in balanced bands (block
   over a 1-D grid); ny arrives local (the band's rows), nx global. The grid is periodic in y, so
   the first rank's upper neighbour is the last rank and the last's lower one the first. Each step
   refreshes one ghost row of h, hu and hv at each end of the band from the neighbours, computes the
   fluxes pointwise on the band and its ghosts, then updates the band. */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HB_LXF(F, FX, GY)                                                                          \
    ((quarter * (((F[x + e] + F[x - w]) + F[x + nx]) + F[x - nx]) - cx * (FX[x + e] - FX[x - w]))  \
     - cy * (GY[x + nx] - GY[x - nx]))

#define HB_SWE_MPI(NAME, T, MPI_T)                                                                 \
    static void NAME##_halo(T *ext, int64_t rows, int64_t nx, int up, int down, MPI_Comm comm) {   \
        MPI_Sendrecv(ext + nx, (int)nx, MPI_T, up, 0, ext + (rows + 1) * nx, (int)nx, MPI_T, down, \
                     0, comm, MPI_STATUS_IGNORE);                                                  \
        MPI_Sendrecv(ext + rows * nx, (int)nx, MPI_T, down, 1, ext, (int)nx, MPI_T, up, 1, comm,   \
                     MPI_STATUS_IGNORE);                                                           \
    }                                                                                              \
    void NAME(T *restrict h, T *restrict hu, T *restrict hv, int64_t ny, int64_t nx,               \
              int64_t TSTEPS, T g, T dt, T dx, T dy, MPI_Comm comm, void *workspace,               \
              int64_t workspace_bytes) {                                                           \
        (void)workspace;                                                                           \
        (void)workspace_bytes;                                                                     \
        int rank, ranks;                                                                           \
        MPI_Comm_rank(comm, &rank);                                                                \
        MPI_Comm_size(comm, &ranks);                                                               \
        const int up = (rank + ranks - 1) % ranks, down = (rank + 1) % ranks;                      \
        const int64_t rows = ny, ext = (rows + 2) * nx;                                            \
        /* h, hu, hv with ghost rows; their three fluxes; the band's next h, hu, hv */             \
        T *buf = calloc((size_t)(6 * ext + 3 * rows * nx), sizeof(T));                             \
        if (!buf) MPI_Abort(comm, 12);                                                             \
        T *restrict eh = buf, *restrict ehu = eh + ext, *restrict ehv = ehu + ext;                 \
        T *restrict flux_x = ehv + ext, *restrict flux_y = flux_x + ext;                           \
        T *restrict cross = flux_y + ext;                                                          \
        T *restrict hn = cross + ext, *restrict hun = hn + rows * nx;                              \
        T *restrict hvn = hun + rows * nx;                                                         \
        memcpy(eh + nx, h, (size_t)(rows * nx) * sizeof(T));                                       \
        memcpy(ehu + nx, hu, (size_t)(rows * nx) * sizeof(T));                                     \
        memcpy(ehv + nx, hv, (size_t)(rows * nx) * sizeof(T));                                     \
        const T two = (T)2.0, half_g = g / two, quarter = (T)0.25;                                 \
        const T cx = dt / (two * dx), cy = dt / (two * dy);                                        \
        for (int64_t t = 0; t < TSTEPS; ++t) {                                                     \
            NAME##_halo(eh, rows, nx, up, down, comm);                                             \
            NAME##_halo(ehu, rows, nx, up, down, comm);                                            \
            NAME##_halo(ehv, rows, nx, up, down, comm);                                            \
            _Pragma("omp parallel")                                                                \
            {                                                                                      \
                _Pragma("omp for schedule(static)")                                                \
                for (int64_t x = 0; x < ext; ++x) {                                                \
                    const T pressure = (half_g * eh[x]) * eh[x];                                   \
                    flux_x[x] = (ehu[x] * ehu[x]) / eh[x] + pressure;                              \
                    flux_y[x] = (ehv[x] * ehv[x]) / eh[x] + pressure;                              \
                    cross[x] = (ehu[x] * ehv[x]) / eh[x];                                          \
                }                                                                                  \
                _Pragma("omp for schedule(static)")                                                \
                for (int64_t j = 1; j <= rows; ++j)                                                \
                    for (int64_t i = 0; i < nx; ++i) {                                             \
                        const int64_t x = j * nx + i, o = x - nx;                                  \
                        const int64_t e = i == nx - 1 ? -(nx - 1) : 1;                             \
                        const int64_t w = i == 0 ? -(nx - 1) : 1;                                  \
                        hn[o] = HB_LXF(eh, ehu, ehv);                                              \
                        hun[o] = HB_LXF(ehu, flux_x, cross);                                       \
                        hvn[o] = HB_LXF(ehv, cross, flux_y);                                       \
                    }                                                                              \
            }                                                                                      \
            memcpy(eh + nx, hn, (size_t)(rows * nx) * sizeof(T));                                  \
            memcpy(ehu + nx, hun, (size_t)(rows * nx) * sizeof(T));                                \
            memcpy(ehv + nx, hvn, (size_t)(rows * nx) * sizeof(T));                                \
        }                                                                                          \
        memcpy(h, eh + nx, (size_t)(rows * nx) * sizeof(T));                                       \
        memcpy(hu, ehu + nx, (size_t)(rows * nx) * sizeof(T));                                     \
        memcpy(hv, ehv + nx, (size_t)(rows * nx) * sizeof(T));                                     \
        free(buf);                                                                                 \
    }

HB_SWE_MPI(shallow_water_2d_mpi_fp64, double, MPI_DOUBLE)
HB_SWE_MPI(shallow_water_2d_mpi_fp32, float, MPI_FLOAT)
