/* A scaled_add whose last rank dies of a segmentation fault: the grade must fail cleanly. */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>

void scaled_add_mpi_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha,
                         MPI_Comm comm, void *workspace, int64_t workspace_bytes) {
    (void)workspace;
    (void)workspace_bytes;
    int rank, ranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    if (rank == ranks - 1) raise(SIGSEGV);
    for (int64_t i = 0; i < N; ++i) y[i] += alpha * x[i];
}
