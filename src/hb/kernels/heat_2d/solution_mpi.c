/* heat_2d on MPI under the default plan: rows of A and B in balanced bands (block over a 1-D
   grid), N global. Each sweep reads one row above and below the band, so the bands are copied into
   buffers with a ghost row at each end, refreshed from the neighbours before every sweep.
   Needs N >= the number of ranks (every band at least one row). */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HB_HEAT2_MPI(NAME, T, MPI_T)                                                            \
    static void NAME##_halo(T *ext, int64_t rows, int64_t N, int up, int down, MPI_Comm comm) {  \
        /* first owned row -> up's bottom ghost; last owned row -> down's top ghost */           \
        MPI_Sendrecv(ext + N, (int)N, MPI_T, up, 0, ext + (rows + 1) * N, (int)N, MPI_T, down,    \
                     0, comm, MPI_STATUS_IGNORE);                                                \
        MPI_Sendrecv(ext + rows * N, (int)N, MPI_T, down, 1, ext, (int)N, MPI_T, up, 1, comm,     \
                     MPI_STATUS_IGNORE);                                                         \
    }                                                                                            \
    static void NAME##_sweep(const T *restrict s, T *restrict t, int64_t rows, int64_t first,    \
                             int64_t N) {                                                        \
        const T c = (T)0.125, two = (T)2.0;                                                      \
        _Pragma("omp parallel for schedule(static)")                                             \
        for (int64_t i = 1; i <= rows; ++i) {                                                    \
            const int64_t g = first + i - 1;                                                     \
            if (g < 1 || g > N - 2) continue;                                                    \
            for (int64_t j = 1; j < N - 1; ++j) {                                                \
                const T mid = s[i * N + j];                                                      \
                t[i * N + j] = c * (s[(i + 1) * N + j] - two * mid + s[(i - 1) * N + j])         \
                               + c * (s[i * N + j + 1] - two * mid + s[i * N + j - 1]) + mid;    \
            }                                                                                    \
        }                                                                                        \
    }                                                                                            \
    void NAME(T *restrict A, T *restrict B, int64_t N, int64_t TSTEPS, MPI_Comm comm,            \
              void *workspace, int64_t workspace_bytes) {                                        \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        int rank, ranks;                                                                         \
        MPI_Comm_rank(comm, &rank);                                                              \
        MPI_Comm_size(comm, &ranks);                                                             \
        const int64_t base = N / ranks, longer = N % ranks;                                      \
        const int64_t rows = base + (rank < longer);                                             \
        const int64_t first = rank * base + (rank < longer ? rank : longer);                     \
        const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;                                      \
        const int down = rank < ranks - 1 ? rank + 1 : MPI_PROC_NULL;                            \
        T *a = calloc((size_t)((rows + 2) * N), sizeof(T));                                      \
        T *b = calloc((size_t)((rows + 2) * N), sizeof(T));                                      \
        if (!a || !b) MPI_Abort(comm, 12);                                                       \
        memcpy(a + N, A, (size_t)(rows * N) * sizeof(T));                                        \
        memcpy(b + N, B, (size_t)(rows * N) * sizeof(T));                                        \
        for (int64_t t = 0; t < TSTEPS; ++t) {                                                   \
            NAME##_halo(a, rows, N, up, down, comm);                                             \
            NAME##_sweep(a, b, rows, first, N);                                                  \
            NAME##_halo(b, rows, N, up, down, comm);                                             \
            NAME##_sweep(b, a, rows, first, N);                                                  \
        }                                                                                        \
        memcpy(A, a + N, (size_t)(rows * N) * sizeof(T));                                        \
        memcpy(B, b + N, (size_t)(rows * N) * sizeof(T));                                        \
        free(a);                                                                                 \
        free(b);                                                                                 \
    }

HB_HEAT2_MPI(heat_2d_mpi_fp64, double, MPI_DOUBLE)
HB_HEAT2_MPI(heat_2d_mpi_fp32, float, MPI_FLOAT)
