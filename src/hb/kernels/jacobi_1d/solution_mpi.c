/* jacobi_1d on MPI under the default plan: A and B in balanced blocks (block over a 1-D grid);
   N arrives local (the rank's own count), the global count and offset are summed over the ranks.
   Each sweep reads one point left and right of the block, so the blocks are copied into buffers
   with a ghost point at each end, refreshed from the neighbours before every sweep. */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HB_JACOBI1_MPI(NAME, T, MPI_T)                                                             \
    static void NAME##_halo(T *ext, int64_t n, int left, int right, MPI_Comm comm) {               \
        MPI_Sendrecv(ext + 1, 1, MPI_T, left, 0, ext + n + 1, 1, MPI_T, right, 0, comm,            \
                     MPI_STATUS_IGNORE);                                                           \
        MPI_Sendrecv(ext + n, 1, MPI_T, right, 1, ext, 1, MPI_T, left, 1, comm,                    \
                     MPI_STATUS_IGNORE);                                                           \
    }                                                                                              \
    static void NAME##_sweep(const T *restrict s, T *restrict t, int64_t lo, int64_t hi) {         \
        const T third = (T)0.33333;                                                                \
        _Pragma("omp parallel for schedule(static)")                                               \
        for (int64_t i = lo; i <= hi; ++i) t[i] = third * (s[i - 1] + s[i] + s[i + 1]);            \
    }                                                                                              \
    void NAME(T *restrict A, T *restrict B, int64_t N, int64_t TSTEPS, MPI_Comm comm,              \
              void *workspace, int64_t workspace_bytes) {                                          \
        (void)workspace;                                                                           \
        (void)workspace_bytes;                                                                     \
        int rank, ranks;                                                                           \
        MPI_Comm_rank(comm, &rank);                                                                \
        MPI_Comm_size(comm, &ranks);                                                               \
        const int64_t n = N;                                                                       \
        int64_t total = 0, first = 0;                                                              \
        MPI_Allreduce(&n, &total, 1, MPI_INT64_T, MPI_SUM, comm);                                  \
        MPI_Exscan(&n, &first, 1, MPI_INT64_T, MPI_SUM, comm);                                     \
        if (rank == 0) first = 0;                                                                  \
        const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;                                      \
        const int right = rank < ranks - 1 ? rank + 1 : MPI_PROC_NULL;                             \
        /* local index k holds global point first + k - 1; the global ends are not updated */      \
        const int64_t lo = first == 0 ? 2 : 1;                                                     \
        const int64_t hi = first + n == total ? n - 1 : n;                                         \
        T *a = calloc((size_t)(n + 2), sizeof(T));                                                 \
        T *b = calloc((size_t)(n + 2), sizeof(T));                                                 \
        if (!a || !b) MPI_Abort(comm, 12);                                                         \
        memcpy(a + 1, A, (size_t)n * sizeof(T));                                                   \
        memcpy(b + 1, B, (size_t)n * sizeof(T));                                                   \
        for (int64_t t = 0; t < TSTEPS; ++t) {                                                     \
            NAME##_halo(a, n, left, right, comm);                                                  \
            NAME##_sweep(a, b, lo, hi);                                                            \
            NAME##_halo(b, n, left, right, comm);                                                  \
            NAME##_sweep(b, a, lo, hi);                                                            \
        }                                                                                          \
        memcpy(A, a + 1, (size_t)n * sizeof(T));                                                   \
        memcpy(B, b + 1, (size_t)n * sizeof(T));                                                   \
        free(a);                                                                                   \
        free(b);                                                                                   \
    }

HB_JACOBI1_MPI(jacobi_1d_mpi_fp64, double, MPI_DOUBLE)
HB_JACOBI1_MPI(jacobi_1d_mpi_fp32, float, MPI_FLOAT)
