/* induction_strength on MPI under the default plan: a and b in balanced contiguous bands (block),
   N local. a[i] = 2 (g + 1) b[i] needs each element's global index g, so every rank learns where
   its band starts from an exclusive prefix sum of the band lengths (MPI_Exscan). */
#include <mpi.h>
#include <stdint.h>

#define HB_INDUCTION_MPI(NAME, T)                                                                \
    void NAME(const T *restrict b, T *restrict a, int64_t N, MPI_Comm comm, void *workspace,     \
              int64_t workspace_bytes) {                                                         \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        int rank;                                                                                \
        MPI_Comm_rank(comm, &rank);                                                              \
        int64_t first = 0;                                                                       \
        MPI_Exscan(&N, &first, 1, MPI_INT64_T, MPI_SUM, comm);                                   \
        if (rank == 0) first = 0; /* MPI_Exscan leaves rank 0's result undefined */              \
        _Pragma("omp parallel for simd schedule(static)")                                        \
        for (int64_t i = 0; i < N; ++i) a[i] = (T)(2 * (first + i + 1)) * b[i];                  \
    }

HB_INDUCTION_MPI(induction_strength_mpi_fp64, double)
HB_INDUCTION_MPI(induction_strength_mpi_fp32, float)
