/* atax on MPI under the default plan: rows of A in balanced bands (M arrives local), x and y
   replicated. Each rank forms its rows' share of A^T (A x); one MPI_Allreduce sums the shares. */
#include <mpi.h>
#include <stdint.h>

#define HB_ATAX_MPI(NAME, T, MPI_T)                                                              \
    void NAME(const T *restrict A, const T *restrict x, T *restrict y, int64_t M, int64_t N,     \
              MPI_Comm comm, void *workspace, int64_t workspace_bytes) {                         \
        (void)workspace_bytes;                                                                   \
        T *restrict tmp = workspace;                                                             \
        _Pragma("omp parallel for schedule(static)")                                             \
        for (int64_t i = 0; i < M; ++i) {                                                        \
            T sum = 0;                                                                           \
            for (int64_t j = 0; j < N; ++j) sum += A[i * N + j] * x[j];                          \
            tmp[i] = sum;                                                                        \
        }                                                                                        \
        for (int64_t j = 0; j < N; ++j) y[j] = 0;                                                \
        for (int64_t i = 0; i < M; ++i) {                                                        \
            const T s = tmp[i];                                                                  \
            for (int64_t j = 0; j < N; ++j) y[j] += A[i * N + j] * s;                            \
        }                                                                                        \
        MPI_Allreduce(MPI_IN_PLACE, y, (int)N, MPI_T, MPI_SUM, comm);                            \
    }

HB_ATAX_MPI(atax_mpi_fp64, double, MPI_DOUBLE)
HB_ATAX_MPI(atax_mpi_fp32, float, MPI_FLOAT)
