/* fdtd_2d on MPI under the default plan: rows of ex, ey and hz in balanced bands (block over a
   1-D grid), NX arriving local (the band's rows), NY global, the source fict replicated. ey's
   update reads hz one row above the band and hz's reads ey one row below it, so each step fetches
   the upper neighbour's last hz row before the E-field updates and the lower neighbour's first
   ey row before the H-field update. Needs every band at least one row. */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

#define HB_FDTD_MPI(NAME, T, MPI_T)                                                                \
    void NAME(T *restrict ex, T *restrict ey, T *restrict hz, const T *restrict fict,              \
              int64_t NX, int64_t NY, int64_t TMAX, MPI_Comm comm, void *workspace,                \
              int64_t workspace_bytes) {                                                           \
        (void)workspace;                                                                           \
        (void)workspace_bytes;                                                                     \
        int rank, ranks;                                                                           \
        MPI_Comm_rank(comm, &rank);                                                                \
        MPI_Comm_size(comm, &ranks);                                                               \
        const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;                                        \
        const int down = rank < ranks - 1 ? rank + 1 : MPI_PROC_NULL;                              \
        /* the hz row above the band and the ey row below it */                                    \
        T *hz_above = calloc((size_t)NY, sizeof(T));                                               \
        T *ey_below = calloc((size_t)NY, sizeof(T));                                               \
        if (!hz_above || !ey_below) MPI_Abort(comm, 12);                                           \
        /* the global last row's hz is never updated */                                            \
        const int64_t hz_rows = rank == ranks - 1 ? NX - 1 : NX;                                   \
        const T half = (T)0.5, c = (T)0.7;                                                         \
        for (int64_t t = 0; t < TMAX; ++t) {                                                       \
            MPI_Sendrecv(hz + (NX - 1) * NY, (int)NY, MPI_T, down, 0, hz_above, (int)NY, MPI_T,    \
                         up, 0, comm, MPI_STATUS_IGNORE);                                          \
            _Pragma("omp parallel for schedule(static)")                                           \
            for (int64_t i = 0; i < NX; ++i) {                                                     \
                T *restrict eyr = ey + i * NY, *restrict exr = ex + i * NY;                        \
                const T *restrict h = hz + i * NY;                                                 \
                const T *restrict h_up = i > 0 ? h - NY : hz_above;                                \
                if (i == 0 && rank == 0)                                                           \
                    for (int64_t j = 0; j < NY; ++j) eyr[j] = fict[t];                             \
                else                                                                               \
                    for (int64_t j = 0; j < NY; ++j) eyr[j] = eyr[j] - half * (h[j] - h_up[j]);    \
                for (int64_t j = 1; j < NY; ++j) exr[j] = exr[j] - half * (h[j] - h[j - 1]);       \
            }                                                                                      \
            MPI_Sendrecv(ey, (int)NY, MPI_T, up, 1, ey_below, (int)NY, MPI_T, down, 1, comm,       \
                         MPI_STATUS_IGNORE);                                                       \
            _Pragma("omp parallel for schedule(static)")                                           \
            for (int64_t i = 0; i < hz_rows; ++i) {                                                \
                T *restrict h = hz + i * NY;                                                       \
                const T *restrict exr = ex + i * NY, *restrict eyr = ey + i * NY;                  \
                const T *restrict ey_dn = i < NX - 1 ? eyr + NY : ey_below;                        \
                for (int64_t j = 0; j < NY - 1; ++j)                                               \
                    h[j] = h[j] - c * (((exr[j + 1] - exr[j]) + ey_dn[j]) - eyr[j]);               \
            }                                                                                      \
        }                                                                                          \
        free(hz_above);                                                                            \
        free(ey_below);                                                                            \
    }

HB_FDTD_MPI(fdtd_2d_mpi_fp64, double, MPI_DOUBLE)
HB_FDTD_MPI(fdtd_2d_mpi_fp32, float, MPI_FLOAT)
