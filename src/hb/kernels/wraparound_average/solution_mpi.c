/* wraparound_average on MPI under the default plan: a and b in balanced contiguous bands (block),
   N local. a[i] reads b[i - 1], which for a band's first element is the previous band's last (and
   for rank 0 the last rank's, the wrap-around): every rank sends its last b to the next rank
   around the ring and receives its left neighbour's. Needs N >= 1 on every rank (global N at
   least the number of ranks). */
#include <mpi.h>
#include <stdint.h>

#define HB_WRAP_MPI(NAME, T, MPI_T)                                                              \
    void NAME(const T *restrict b, T *restrict a, int64_t N, MPI_Comm comm, void *workspace,     \
              int64_t workspace_bytes) {                                                         \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        int rank, ranks;                                                                         \
        MPI_Comm_rank(comm, &rank);                                                              \
        MPI_Comm_size(comm, &ranks);                                                             \
        if (N < 1) MPI_Abort(comm, 13);                                                          \
        T left = 0;                                                                              \
        MPI_Sendrecv(&b[N - 1], 1, MPI_T, (rank + 1) % ranks, 0, &left, 1, MPI_T,                \
                     (rank + ranks - 1) % ranks, 0, comm, MPI_STATUS_IGNORE);                    \
        a[0] = (b[0] + left) * (T)0.5;                                                           \
        _Pragma("omp parallel for simd schedule(static)")                                        \
        for (int64_t i = 1; i < N; ++i) a[i] = (b[i] + b[i - 1]) * (T)0.5;                       \
    }

HB_WRAP_MPI(wraparound_average_mpi_fp64, double, MPI_DOUBLE)
HB_WRAP_MPI(wraparound_average_mpi_fp32, float, MPI_FLOAT)
