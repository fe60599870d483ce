/* gemver on MPI under the default plan: rows of A, u1, u2, w and y in balanced bands; v1, v2, x
   and z replicated; N arrives global (A's rows are kept whole). Each rank updates its rows and
   forms its share of A^T y; one MPI_Allreduce sums the shares, every rank completes the same x,
   and w's band needs only the rank's rows. */
#include <mpi.h>
#include <stdint.h>

#define HB_GEMVER_MPI(NAME, T, MPI_T)                                                            \
    void NAME(T *restrict A, const T *restrict u1, const T *restrict v1, const T *restrict u2,   \
              const T *restrict v2, T *restrict w, T *restrict x, const T *restrict y,           \
              const T *restrict z, int64_t N, T alpha, T beta, MPI_Comm comm, void *workspace,   \
              int64_t workspace_bytes) {                                                         \
        (void)workspace_bytes;                                                                   \
        int rank, ranks;                                                                         \
        MPI_Comm_rank(comm, &rank);                                                              \
        MPI_Comm_size(comm, &ranks);                                                             \
        const int64_t rows = N / ranks + (rank < N % ranks);                                     \
        T *restrict share = workspace;                                                           \
        for (int64_t j = 0; j < N; ++j) share[j] = 0;                                            \
        for (int64_t i = 0; i < rows; ++i) {                                                     \
            const T a1 = u1[i], a2 = u2[i], by = beta * y[i];                                    \
            for (int64_t j = 0; j < N; ++j) {                                                    \
                const T aij = A[i * N + j] + a1 * v1[j] + a2 * v2[j];                            \
                A[i * N + j] = aij;                                                              \
                share[j] += by * aij;                                                            \
            }                                                                                    \
        }                                                                                        \
        MPI_Allreduce(MPI_IN_PLACE, share, (int)N, MPI_T, MPI_SUM, comm);                        \
        for (int64_t j = 0; j < N; ++j) x[j] += share[j] + z[j];                                 \
        for (int64_t i = 0; i < rows; ++i) {                                                     \
            T sum = 0;                                                                           \
            for (int64_t j = 0; j < N; ++j) sum += A[i * N + j] * x[j];                          \
            w[i] += alpha * sum;                                                                 \
        }                                                                                        \
    }

HB_GEMVER_MPI(gemver_mpi_fp64, double, MPI_DOUBLE)
HB_GEMVER_MPI(gemver_mpi_fp32, float, MPI_FLOAT)
