/* laplace_3d on MPI under the default plan: outer planes of A and B in balanced bands (block over a
   1-D grid), N global. Each sweep reads one plane above and below the band, so the bands are copied
   into buffers with a ghost plane at each end, refreshed from the neighbours before every sweep.
   Needs N >= the number of ranks (every band at least one plane). */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HB_AT(X, i, j, k) X[((i) * N + (j)) * N + (k)]

#define HB_LAPLACE_MPI(NAME, T, MPI_T)                                                             \
    static void NAME##_halo(T *ext, int64_t planes, int64_t N, int up, int down, MPI_Comm comm) {  \
        const int64_t plane = N * N;                                                               \
        MPI_Sendrecv(ext + plane, (int)plane, MPI_T, up, 0, ext + (planes + 1) * plane,            \
                     (int)plane, MPI_T, down, 0, comm, MPI_STATUS_IGNORE);                         \
        MPI_Sendrecv(ext + planes * plane, (int)plane, MPI_T, down, 1, ext, (int)plane, MPI_T,     \
                     up, 1, comm, MPI_STATUS_IGNORE);                                              \
    }                                                                                              \
    static void NAME##_sweep(const T *restrict s, T *restrict t, int64_t planes, int64_t first,    \
                             int64_t N) {                                                          \
        const T sixth = (T)(1.0 / 6.0);                                                            \
        _Pragma("omp parallel for schedule(static)")                                               \
        for (int64_t i = 1; i <= planes; ++i) {                                                    \
            const int64_t g = first + i - 1;                                                       \
            if (g < 1 || g > N - 2) continue;                                                      \
            for (int64_t j = 1; j < N - 1; ++j)                                                    \
                for (int64_t k = 1; k < N - 1; ++k) {                                              \
                    HB_AT(t, i, j, k) =                                                            \
                        sixth * (((HB_AT(s, i - 1, j, k) + HB_AT(s, i + 1, j, k))                  \
                                  + (HB_AT(s, i, j - 1, k) + HB_AT(s, i, j + 1, k)))               \
                                 + (HB_AT(s, i, j, k - 1) + HB_AT(s, i, j, k + 1)));               \
                }                                                                                  \
        }                                                                                          \
    }                                                                                              \
    void NAME(T *restrict A, T *restrict B, int64_t N, int64_t TSTEPS, MPI_Comm comm,              \
              void *workspace, int64_t workspace_bytes) {                                          \
        (void)workspace;                                                                           \
        (void)workspace_bytes;                                                                     \
        int rank, ranks;                                                                           \
        MPI_Comm_rank(comm, &rank);                                                                \
        MPI_Comm_size(comm, &ranks);                                                               \
        const int64_t base = N / ranks, longer = N % ranks, plane = N * N;                         \
        const int64_t planes = base + (rank < longer);                                             \
        const int64_t first = rank * base + (rank < longer ? rank : longer);                       \
        const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;                                        \
        const int down = rank < ranks - 1 ? rank + 1 : MPI_PROC_NULL;                              \
        T *a = calloc((size_t)((planes + 2) * plane), sizeof(T));                                  \
        T *b = calloc((size_t)((planes + 2) * plane), sizeof(T));                                  \
        if (!a || !b) MPI_Abort(comm, 12);                                                         \
        memcpy(a + plane, A, (size_t)(planes * plane) * sizeof(T));                                \
        memcpy(b + plane, B, (size_t)(planes * plane) * sizeof(T));                                \
        for (int64_t t = 0; t < TSTEPS; ++t) {                                                     \
            NAME##_halo(a, planes, N, up, down, comm);                                             \
            NAME##_sweep(a, b, planes, first, N);                                                  \
            NAME##_halo(b, planes, N, up, down, comm);                                             \
            NAME##_sweep(b, a, planes, first, N);                                                  \
        }                                                                                          \
        memcpy(A, a + plane, (size_t)(planes * plane) * sizeof(T));                                \
        memcpy(B, b + plane, (size_t)(planes * plane) * sizeof(T));                                \
        free(a);                                                                                   \
        free(b);                                                                                   \
    }

HB_LAPLACE_MPI(laplace_3d_mpi_fp64, double, MPI_DOUBLE)
HB_LAPLACE_MPI(laplace_3d_mpi_fp32, float, MPI_FLOAT)
