/* mvt on MPI under the default plan: rows of A, x1 and y_2 in balanced bands, y_1 and x2
   replicated; N arrives global (A's rows are kept whole). x1's band needs only the rank's rows;
   each rank's share of A^T y_2 goes to the workspace and one MPI_Allreduce sums it into x2. */
#include <mpi.h>
#include <stdint.h>

#define HB_MVT_MPI(NAME, T, MPI_T)                                                               \
    void NAME(T *restrict x1, T *restrict x2, const T *restrict y_1, const T *restrict y_2,      \
              const T *restrict A, int64_t N, MPI_Comm comm, void *workspace,                    \
              int64_t workspace_bytes) {                                                         \
        (void)workspace_bytes;                                                                   \
        int rank, ranks;                                                                         \
        MPI_Comm_rank(comm, &rank);                                                              \
        MPI_Comm_size(comm, &ranks);                                                             \
        const int64_t rows = N / ranks + (rank < N % ranks);                                     \
        T *restrict share = workspace;                                                           \
        for (int64_t j = 0; j < N; ++j) share[j] = 0;                                            \
        for (int64_t i = 0; i < rows; ++i) {                                                     \
            const T yi = y_2[i];                                                                 \
            T sum = 0;                                                                           \
            for (int64_t j = 0; j < N; ++j) {                                                    \
                sum += A[i * N + j] * y_1[j];                                                    \
                share[j] += A[i * N + j] * yi;                                                   \
            }                                                                                    \
            x1[i] += sum;                                                                        \
        }                                                                                        \
        MPI_Allreduce(MPI_IN_PLACE, share, (int)N, MPI_T, MPI_SUM, comm);                        \
        for (int64_t j = 0; j < N; ++j) x2[j] += share[j];                                       \
    }

HB_MVT_MPI(mvt_mpi_fp64, double, MPI_DOUBLE)
HB_MVT_MPI(mvt_mpi_fp32, float, MPI_FLOAT)
