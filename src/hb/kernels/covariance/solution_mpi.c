/* covariance on MPI under the default plan: the observations (rows of data) in balanced bands, N
   arriving local; mean and cov replicated. The column sums and the observation count are summed
   over ranks, each rank centres its rows and forms its share of data^T data's upper triangle,
   packed in the workspace; one MPI_Reduce sums the shares on rank 0, the rank a replicated
   output is gathered from, which mirrors and scales them into cov. */
#include <mpi.h>
#include <stdint.h>

#define HB_COVARIANCE_MPI(NAME, T, MPI_T)                                                        \
    void NAME(T *restrict data, T *restrict cov, T *restrict mean, int64_t M, int64_t N,         \
              MPI_Comm comm, void *workspace, int64_t workspace_bytes) {                         \
        (void)workspace_bytes;                                                                   \
        T *restrict t = workspace; /* t[j * N + i] = data[i][j] - mean[j] */                     \
        int64_t total = N;                                                                       \
        MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT64_T, MPI_SUM, comm);                      \
        for (int64_t j = 0; j < M; ++j) mean[j] = 0;                                             \
        for (int64_t i = 0; i < N; ++i)                                                          \
            for (int64_t j = 0; j < M; ++j) mean[j] += data[i * M + j];                          \
        MPI_Allreduce(MPI_IN_PLACE, mean, (int)M, MPI_T, MPI_SUM, comm);                         \
        for (int64_t j = 0; j < M; ++j) mean[j] /= (T)total;                                     \
        for (int64_t i = 0; i < N; ++i)                                                          \
            for (int64_t j = 0; j < M; ++j) {                                                    \
                const T centred = data[i * M + j] - mean[j];                                     \
                data[i * M + j] = centred;                                                       \
                t[j * N + i] = centred;                                                          \
            }                                                                                    \
        int rank;                                                                                \
        MPI_Comm_rank(comm, &rank);                                                              \
        T *restrict packed = t + M * N; /* the upper triangle, row by row */                     \
        int64_t p = 0;                                                                           \
        for (int64_t i = 0; i < M; ++i)                                                          \
            for (int64_t j = i; j < M; ++j) {                                                    \
                T sum = 0;                                                                       \
                _Pragma("omp simd reduction(+ : sum)")                                           \
                for (int64_t k = 0; k < N; ++k) sum += t[i * N + k] * t[j * N + k];              \
                packed[p++] = sum;                                                               \
            }                                                                                    \
        /* only rank 0's copy of a replicated output is gathered */                              \
        MPI_Reduce(rank == 0 ? MPI_IN_PLACE : packed, packed, (int)p, MPI_T, MPI_SUM, 0, comm);  \
        if (rank == 0) {                                                                         \
            p = 0;                                                                               \
            for (int64_t i = 0; i < M; ++i)                                                      \
                for (int64_t j = i; j < M; ++j)                                                  \
                    cov[i * M + j] = cov[j * M + i] = packed[p++] / (T)(total - 1);              \
        }                                                                                        \
    }

HB_COVARIANCE_MPI(covariance_mpi_fp64, double, MPI_DOUBLE)
HB_COVARIANCE_MPI(covariance_mpi_fp32, float, MPI_FLOAT)
