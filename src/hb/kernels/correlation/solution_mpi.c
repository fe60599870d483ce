/* correlation on MPI under the default plan: the observations (rows of data) in balanced bands, N
   arriving local; mean, stddev and corr replicated. The observation count, the column sums and
   then the squared deviations are summed over ranks; each rank standardises its rows and forms
   its share of data^T data's strict upper triangle, packed in the workspace; one MPI_Reduce sums
   the shares on rank 0, the rank a replicated output is gathered from, which mirrors them into
   corr. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>

#define HB_CORRELATION_MPI(NAME, T, MPI_T, SQRT)                                                 \
    void NAME(T *restrict data, T *restrict corr, T *restrict mean, T *restrict stddev,          \
              int64_t M, int64_t N, MPI_Comm comm, void *workspace, int64_t workspace_bytes) {   \
        (void)workspace_bytes;                                                                   \
        T *restrict t = workspace; /* t[j * N + i] = the standardised data[i][j] */              \
        const T eps = (T)0.1;                                                                    \
        int64_t total = N;                                                                       \
        MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT64_T, MPI_SUM, comm);                      \
        const T root_n = SQRT((T)total);                                                         \
        for (int64_t j = 0; j < M; ++j) mean[j] = stddev[j] = 0;                                 \
        for (int64_t i = 0; i < N; ++i)                                                          \
            for (int64_t j = 0; j < M; ++j) mean[j] += data[i * M + j];                          \
        MPI_Allreduce(MPI_IN_PLACE, mean, (int)M, MPI_T, MPI_SUM, comm);                         \
        for (int64_t j = 0; j < M; ++j) mean[j] /= (T)total;                                     \
        for (int64_t i = 0; i < N; ++i)                                                          \
            for (int64_t j = 0; j < M; ++j) {                                                    \
                const T d = data[i * M + j] - mean[j];                                           \
                stddev[j] += d * d;                                                              \
            }                                                                                    \
        MPI_Allreduce(MPI_IN_PLACE, stddev, (int)M, MPI_T, MPI_SUM, comm);                       \
        for (int64_t j = 0; j < M; ++j) {                                                        \
            const T s = SQRT(stddev[j] / (T)total);                                              \
            stddev[j] = s <= eps ? (T)1 : s;                                                     \
        }                                                                                        \
        for (int64_t i = 0; i < N; ++i)                                                          \
            for (int64_t j = 0; j < M; ++j) {                                                    \
                const T z = (data[i * M + j] - mean[j]) / (root_n * stddev[j]);                  \
                data[i * M + j] = z;                                                             \
                t[j * N + i] = z;                                                                \
            }                                                                                    \
        int rank;                                                                                \
        MPI_Comm_rank(comm, &rank);                                                              \
        T *restrict packed = t + M * N; /* the strict upper triangle, row by row */              \
        int64_t p = 0;                                                                           \
        for (int64_t i = 0; i < M; ++i)                                                          \
            for (int64_t j = i + 1; j < M; ++j) {                                                \
                T sum = 0;                                                                       \
                _Pragma("omp simd reduction(+ : sum)")                                           \
                for (int64_t k = 0; k < N; ++k) sum += t[i * N + k] * t[j * N + k];              \
                packed[p++] = sum;                                                               \
            }                                                                                    \
        /* only rank 0's copy of a replicated output is gathered */                              \
        MPI_Reduce(rank == 0 ? MPI_IN_PLACE : packed, packed, (int)p, MPI_T, MPI_SUM, 0, comm);  \
        if (rank == 0) {                                                                         \
            p = 0;                                                                               \
            for (int64_t i = 0; i < M; ++i) {                                                    \
                corr[i * M + i] = 1;                                                             \
                for (int64_t j = i + 1; j < M; ++j)                                              \
                    corr[i * M + j] = corr[j * M + i] = packed[p++];                             \
            }                                                                                    \
        }                                                                                        \
    }

HB_CORRELATION_MPI(correlation_mpi_fp64, double, MPI_DOUBLE, sqrt)
HB_CORRELATION_MPI(correlation_mpi_fp32, float, MPI_FLOAT, sqrtf)
