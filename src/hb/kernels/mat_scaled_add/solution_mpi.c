/* mat_scaled_add on MPI: B <- B + alpha * A over each rank's M x N tile. Under any plan that splits
   A and B the same way M and N arrive local (or global for a dimension kept whole), so the tile is
   exactly M x N and no communication is needed. */
#include <mpi.h>
#include <stdint.h>

#define HB_MAT_SCALED_ADD(NAME, T)                                                              \
    void NAME(const T *restrict A, T *restrict B, int64_t M, int64_t N, T alpha, MPI_Comm comm, \
              void *workspace, int64_t workspace_bytes) {                                       \
        (void)comm;                                                                             \
        (void)workspace;                                                                        \
        (void)workspace_bytes;                                                                  \
        _Pragma("omp parallel for schedule(static)")                                            \
        for (int64_t i = 0; i < M; ++i)                                                         \
            for (int64_t j = 0; j < N; ++j) B[i * N + j] += alpha * A[i * N + j];               \
    }

HB_MAT_SCALED_ADD(mat_scaled_add_mpi_fp64, double)
HB_MAT_SCALED_ADD(mat_scaled_add_mpi_fp32, float)
