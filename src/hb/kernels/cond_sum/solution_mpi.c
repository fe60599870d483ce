/* cond_sum on MPI: a split among the ranks (any scheme: the sum does not depend on the order of
   the elements), N local, and sum[1] replicated. Every rank sums the positive elements of its own
   part in double; one MPI_Allreduce adds the partial sums, and every rank stores the total rounded
   once (the judge reads rank 0's). */
#include <mpi.h>
#include <stdint.h>

#define HB_COND_SUM_MPI(NAME, T)                                                                 \
    void NAME(const T *restrict a, T *restrict sum, int64_t N, MPI_Comm comm, void *workspace,   \
              int64_t workspace_bytes) {                                                         \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        double mine = 0.0, total = 0.0;                                                          \
        _Pragma("omp parallel for simd schedule(static) reduction(+ : mine)")                    \
        for (int64_t i = 0; i < N; ++i) mine += a[i] > (T)0 ? (double)a[i] : 0.0;                \
        MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, comm);                              \
        sum[0] = (T)total;                                                                       \
    }

HB_COND_SUM_MPI(cond_sum_mpi_fp64, double)
HB_COND_SUM_MPI(cond_sum_mpi_fp32, float)
