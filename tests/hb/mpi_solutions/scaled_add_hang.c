/* A scaled_add whose last rank never returns (and ignores SIGTERM): the timeout must end every rank. */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

void scaled_add_mpi_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha,
                         MPI_Comm comm, void *workspace, int64_t workspace_bytes) {
    (void)workspace;
    (void)workspace_bytes;
    int rank, ranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    if (rank == ranks - 1) {
        signal(SIGTERM, SIG_IGN);
        for (;;) pause();
    }
    for (int64_t i = 0; i < N; ++i) y[i] += alpha * x[i];
}
