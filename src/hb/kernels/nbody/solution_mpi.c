/* nbody on MPI: positions and masses replicated (N arrives global), acc split by rows. Each rank
 * sums the accelerations of its own band of bodies (numpy.array_split's partition) over all N,
 * one body per iteration of an OpenMP loop, with no communication. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>

#define HB_NBODY(NAME, T, SQRT)                                                                    \
    void NAME(const T *restrict pos, const T *restrict mass, T *restrict acc, int64_t N, T G,      \
              T eps, MPI_Comm comm, void *workspace, int64_t workspace_bytes) {                    \
        (void)workspace;                                                                           \
        (void)workspace_bytes;                                                                     \
        int rank, ranks;                                                                           \
        MPI_Comm_rank(comm, &rank);                                                                \
        MPI_Comm_size(comm, &ranks);                                                               \
        const int64_t base = N / ranks, longer = N % ranks;                                        \
        const int64_t first = rank * base + (rank < longer ? rank : longer);                       \
        const int64_t last = first + base + (rank < longer);                                       \
        const T eps2 = eps * eps;                                                                  \
        _Pragma("omp parallel for schedule(static)")                                               \
        for (int64_t i = first; i < last; ++i) {                                                   \
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
            acc[3 * (i - first)] = G * ax;                                                         \
            acc[3 * (i - first) + 1] = G * ay;                                                     \
            acc[3 * (i - first) + 2] = G * az;                                                     \
        }                                                                                          \
    }

HB_NBODY(nbody_mpi_fp64, double, sqrt)
HB_NBODY(nbody_mpi_fp32, float, sqrtf)
