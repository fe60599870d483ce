/* scaled_add on MPI: y <- y + alpha * x on each rank's own elements. N arrives local when x and y
   are split the same way (block, cyclic or block_cyclic alike), so no communication is needed. */
#include <mpi.h>
#include <stdint.h>

void scaled_add_mpi_fp64(const double *restrict x, double *restrict y, int64_t N, double alpha,
                         MPI_Comm comm, void *workspace, int64_t workspace_bytes) {
    (void)comm;
    (void)workspace;
    (void)workspace_bytes;
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < N; ++i) y[i] += alpha * x[i];
}

void scaled_add_mpi_fp32(const float *restrict x, float *restrict y, int64_t N, float alpha,
                         MPI_Comm comm, void *workspace, int64_t workspace_bytes) {
    (void)comm;
    (void)workspace;
    (void)workspace_bytes;
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < N; ++i) y[i] += alpha * x[i];
}
