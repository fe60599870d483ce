/* gesummv on MPI under the default plan: rows of A, B and y in balanced bands, x replicated. N
   arrives global (it also sizes the rows kept whole), so each rank derives its band's row count;
   every row is independent and needs no communication. */
#include <mpi.h>
#include <stdint.h>

#define HB_GESUMMV_MPI(NAME, T)                                                                  \
    void NAME(const T *restrict A, const T *restrict B, const T *restrict x, T *restrict y,      \
              int64_t N, T alpha, T beta, MPI_Comm comm, void *workspace,                        \
              int64_t workspace_bytes) {                                                         \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        int rank, ranks;                                                                         \
        MPI_Comm_rank(comm, &rank);                                                              \
        MPI_Comm_size(comm, &ranks);                                                             \
        const int64_t rows = N / ranks + (rank < N % ranks);                                     \
        _Pragma("omp parallel for schedule(static)")                                             \
        for (int64_t i = 0; i < rows; ++i) {                                                     \
            T tmp = 0, acc = 0;                                                                  \
            for (int64_t j = 0; j < N; ++j) {                                                    \
                tmp += A[i * N + j] * x[j];                                                      \
                acc += B[i * N + j] * x[j];                                                      \
            }                                                                                    \
            y[i] = alpha * tmp + beta * acc;                                                     \
        }                                                                                        \
    }

HB_GESUMMV_MPI(gesummv_mpi_fp64, double)
HB_GESUMMV_MPI(gesummv_mpi_fp32, float)
