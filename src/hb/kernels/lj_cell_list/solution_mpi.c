/* lj_cell_list on MPI: positions replicated (N arrives global), forces split by rows. Every rank
 * builds the whole cell list (cells of side >= rc, one cell when fewer than 3 fit; particles
 * counting-sorted by cell into a packed copy of their positions), then sums the shifted-force pair
 * forces of its own band of particles (numpy.array_split's partition) over the 27 cells around
 * each, one particle per iteration of an OpenMP loop, with no communication. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

#define HB_LJ_CELLS(NAME, T, SQRT, FLOOR, RINT)                                                    \
    void NAME(const T *restrict pos, T *restrict force, int64_t N, T epsilon, T sigma, T rc,       \
              T box, MPI_Comm comm, void *workspace, int64_t workspace_bytes) {                    \
        (void)workspace;                                                                           \
        (void)workspace_bytes;                                                                     \
        int64_t nc = (int64_t)FLOOR(box / rc);                                                     \
        if (nc < 3) nc = 1;                                                                        \
        const int64_t cells = nc * nc * nc;                                                        \
        const T inv_cell = (T)nc / box, inv_box = (T)1 / box;                                      \
        int64_t *cell_of = (int64_t *)malloc(sizeof(int64_t) * (size_t)N);                         \
        int64_t *start = (int64_t *)calloc((size_t)cells + 1, sizeof(int64_t));                    \
        int64_t *order = (int64_t *)malloc(sizeof(int64_t) * (size_t)N);                           \
        T *packed = (T *)malloc(sizeof(T) * 3 * (size_t)N);                                        \
        if (!cell_of || !start || !order || !packed) {                                             \
            free(cell_of);                                                                         \
            free(start);                                                                           \
            free(order);                                                                           \
            free(packed);                                                                          \
            return;                                                                                \
        }                                                                                          \
        _Pragma("omp parallel for schedule(static)")                                               \
        for (int64_t i = 0; i < N; ++i) {                                                          \
            int64_t c[3];                                                                          \
            for (int a = 0; a < 3; ++a) {                                                          \
                const T x = pos[3 * i + a] - box * FLOOR(pos[3 * i + a] * inv_box);                \
                c[a] = (int64_t)(x * inv_cell);                                                    \
                c[a] = c[a] < 0 ? 0 : c[a] >= nc ? nc - 1 : c[a];                                  \
            }                                                                                      \
            cell_of[i] = (c[0] * nc + c[1]) * nc + c[2];                                           \
        }                                                                                          \
        for (int64_t i = 0; i < N; ++i) ++start[cell_of[i] + 1];                                   \
        for (int64_t c = 0; c < cells; ++c) start[c + 1] += start[c];                              \
        for (int64_t i = 0; i < N; ++i) {                                                          \
            const int64_t slot = start[cell_of[i]]++;                                              \
            order[slot] = i;                                                                       \
        }                                                                                          \
        for (int64_t c = cells; c > 0; --c) start[c] = start[c - 1];                               \
        start[0] = 0;                                                                              \
        _Pragma("omp parallel for schedule(static)")                                               \
        for (int64_t s = 0; s < N; ++s)                                                            \
            for (int a = 0; a < 3; ++a) packed[3 * s + a] = pos[3 * order[s] + a];                 \
        const T rc2 = rc * rc, s2 = sigma * sigma, scale = (T)24 * epsilon;                        \
        const T q = s2 / rc2, q3 = q * q * q;                                                      \
        const T at_cutoff = scale * ((T)2 * q3 * q3 - q3) / rc;                                    \
        const int64_t reach = nc == 1 ? 0 : 1;                                                     \
        int rank, ranks;                                                                           \
        MPI_Comm_rank(comm, &rank);                                                                \
        MPI_Comm_size(comm, &ranks);                                                               \
        const int64_t base = N / ranks, longer = N % ranks;                                        \
        const int64_t first = rank * base + (rank < longer ? rank : longer);                       \
        const int64_t last = first + base + (rank < longer);                                       \
        _Pragma("omp parallel for schedule(static)")                                               \
        for (int64_t i = first; i < last; ++i) {                                                   \
            const int64_t c = cell_of[i];                                                          \
            const int64_t cx = c / (nc * nc), cy = (c / nc) % nc, cz = c % nc;                     \
            const T xi = pos[3 * i], yi = pos[3 * i + 1], zi = pos[3 * i + 2];                     \
            T fx = 0, fy = 0, fz = 0;                                                              \
            for (int64_t ox = -reach; ox <= reach; ++ox)                                           \
                for (int64_t oy = -reach; oy <= reach; ++oy)                                       \
                    for (int64_t oz = -reach; oz <= reach; ++oz) {                                 \
                        const int64_t n = (((cx + ox + nc) % nc) * nc + (cy + oy + nc) % nc)       \
                                              * nc + (cz + oz + nc) % nc;                          \
                        for (int64_t u = start[n]; u < start[n + 1]; ++u) {                        \
                            if (order[u] == i) continue;                                           \
                            T dx = xi - packed[3 * u], dy = yi - packed[3 * u + 1];                \
                            T dz = zi - packed[3 * u + 2];                                         \
                            dx -= box * RINT(dx * inv_box);                                        \
                            dy -= box * RINT(dy * inv_box);                                        \
                            dz -= box * RINT(dz * inv_box);                                        \
                            const T r2 = dx * dx + dy * dy + dz * dz;                              \
                            if (r2 >= rc2) continue;                                               \
                            const T p = s2 / r2, s6 = p * p * p;                                   \
                            const T m = scale * ((T)2 * s6 * s6 - s6) / r2                         \
                                        - at_cutoff / SQRT(r2);                                    \
                            fx += m * dx;                                                          \
                            fy += m * dy;                                                          \
                            fz += m * dz;                                                          \
                        }                                                                          \
                    }                                                                              \
            force[3 * (i - first)] = fx;                                                           \
            force[3 * (i - first) + 1] = fy;                                                       \
            force[3 * (i - first) + 2] = fz;                                                       \
        }                                                                                          \
        free(cell_of);                                                                             \
        free(start);                                                                               \
        free(order);                                                                               \
        free(packed);                                                                              \
    }

HB_LJ_CELLS(lj_cell_list_mpi_fp64, double, sqrt, floor, rint)
HB_LJ_CELLS(lj_cell_list_mpi_fp32, float, sqrtf, floorf, rintf)
