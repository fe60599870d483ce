/* scaled_add with x replicated and y in balanced bands: N arrives global, so each rank finds its
   own band of y (numpy.array_split's partition) and reads x at the band's global offset. */
#include <mpi.h>
#include <stdint.h>

void scaled_add_mpi_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha,
                         MPI_Comm comm, void *workspace, int64_t workspace_bytes) {
    (void)workspace;
    (void)workspace_bytes;
    int rank, ranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    const int64_t base = N / ranks, longer = N % ranks;
    const int64_t count = base + (rank < longer);
    const int64_t first = rank * base + (rank < longer ? rank : longer);
    for (int64_t i = 0; i < count; ++i) y[i] += alpha * x[first + i];
}
