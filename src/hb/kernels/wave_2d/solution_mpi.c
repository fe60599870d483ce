/* wave_2d on MPI under the default plan: rows of U0 and U1 in balanced bands (block over a 1-D
   grid), N global. A step reads the current level one row above and below the band, so both
   levels live in buffers with a ghost row at each end; the current level's ghosts are refreshed
   from the neighbours before every step. Needs N >= the number of ranks. */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HB_WAVE_MPI(NAME, T, MPI_T)                                                            \
    static void NAME##_halo(T *ext, int64_t rows, int64_t N, int up, int down, MPI_Comm comm) { \
        MPI_Sendrecv(ext + N, (int)N, MPI_T, up, 0, ext + (rows + 1) * N, (int)N, MPI_T, down,  \
                     0, comm, MPI_STATUS_IGNORE);                                              \
        MPI_Sendrecv(ext + rows * N, (int)N, MPI_T, down, 1, ext, (int)N, MPI_T, up, 1, comm,   \
                     MPI_STATUS_IGNORE);                                                       \
    }                                                                                          \
    static void NAME##_step(T *restrict old, const T *restrict now, int64_t rows,              \
                            int64_t first, int64_t N, T C2) {                                  \
        _Pragma("omp parallel for schedule(static)")                                           \
        for (int64_t i = 1; i <= rows; ++i) {                                                  \
            const int64_t g = first + i - 1;                                                   \
            if (g < 1 || g > N - 2) continue;                                                  \
            for (int64_t j = 1; j < N - 1; ++j) {                                              \
                const int64_t x = i * N + j;                                                   \
                const T lap = ((now[x - N] + now[x + N]) + (now[x - 1] + now[x + 1]))          \
                              - (T)4.0 * now[x];                                               \
                old[x] = ((T)2.0 * now[x] - old[x]) + C2 * lap;                                \
            }                                                                                  \
        }                                                                                      \
    }                                                                                          \
    void NAME(T *restrict U0, T *restrict U1, int64_t N, int64_t TSTEPS, T C2, MPI_Comm comm,  \
              void *workspace, int64_t workspace_bytes) {                                      \
        (void)workspace;                                                                       \
        (void)workspace_bytes;                                                                 \
        int rank, ranks;                                                                       \
        MPI_Comm_rank(comm, &rank);                                                            \
        MPI_Comm_size(comm, &ranks);                                                           \
        const int64_t base = N / ranks, longer = N % ranks;                                    \
        const int64_t rows = base + (rank < longer);                                           \
        const int64_t first = rank * base + (rank < longer ? rank : longer);                   \
        const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;                                    \
        const int down = rank < ranks - 1 ? rank + 1 : MPI_PROC_NULL;                          \
        T *u0 = calloc((size_t)((rows + 2) * N), sizeof(T));                                   \
        T *u1 = calloc((size_t)((rows + 2) * N), sizeof(T));                                   \
        if (!u0 || !u1) MPI_Abort(comm, 12);                                                   \
        memcpy(u0 + N, U0, (size_t)(rows * N) * sizeof(T));                                    \
        memcpy(u1 + N, U1, (size_t)(rows * N) * sizeof(T));                                    \
        for (int64_t t = 0; t < TSTEPS; ++t) {                                                 \
            NAME##_halo(u1, rows, N, up, down, comm);                                          \
            NAME##_step(u0, u1, rows, first, N, C2);                                           \
            NAME##_halo(u0, rows, N, up, down, comm);                                          \
            NAME##_step(u1, u0, rows, first, N, C2);                                           \
        }                                                                                      \
        memcpy(U0, u0 + N, (size_t)(rows * N) * sizeof(T));                                    \
        memcpy(U1, u1 + N, (size_t)(rows * N) * sizeof(T));                                    \
        free(u0);                                                                              \
        free(u1);                                                                              \
    }

HB_WAVE_MPI(wave_2d_mpi_fp64, double, MPI_DOUBLE)
HB_WAVE_MPI(wave_2d_mpi_fp32, float, MPI_FLOAT)
