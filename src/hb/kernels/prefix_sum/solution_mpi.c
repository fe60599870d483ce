/* prefix_sum on MPI: x and y split the same way, so N arrives as the rank's own count. Each rank
 * sums its band (threads over contiguous chunks), MPI_Exscan gives it the total of the bands
 * before it, and each thread rescans its chunk from its offset. Partial sums are held in double.
 * The bands must lie in rank order along x (the default block split). */
#include <mpi.h>
#include <omp.h>
#include <stdint.h>

#define HB_MAX_THREADS 1024

#define HB_SCAN(NAME, T)                                                                           \
    void NAME(const T *restrict x, T *restrict y, int64_t N, MPI_Comm comm, void *workspace,       \
              int64_t workspace_bytes) {                                                           \
        (void)workspace;                                                                           \
        (void)workspace_bytes;                                                                     \
        double totals[HB_MAX_THREADS + 1];                                                         \
        int threads = 1;                                                                           \
        _Pragma("omp parallel")                                                                    \
        {                                                                                          \
            _Pragma("omp single")                                                                  \
            threads = omp_get_num_threads() < HB_MAX_THREADS ? omp_get_num_threads()               \
                                                             : HB_MAX_THREADS;                     \
            const int t = omp_get_thread_num();                                                    \
            if (t < threads) {                                                                     \
                double sum = 0.0;                                                                  \
                for (int64_t i = N * t / threads; i < N * (t + 1) / threads; ++i) sum += x[i];     \
                totals[t + 1] = sum;                                                               \
            }                                                                                      \
        }                                                                                          \
        double local = 0.0, before = 0.0;                                                          \
        for (int k = 1; k <= threads; ++k) local += totals[k];                                     \
        int rank;                                                                                  \
        MPI_Comm_rank(comm, &rank);                                                                \
        MPI_Exscan(&local, &before, 1, MPI_DOUBLE, MPI_SUM, comm);                                 \
        totals[0] = rank == 0 ? 0.0 : before;                                                      \
        for (int k = 1; k <= threads; ++k) totals[k] += totals[k - 1];                             \
        _Pragma("omp parallel num_threads(threads)")                                               \
        {                                                                                          \
            const int t = omp_get_thread_num();                                                    \
            if (t < threads) {                                                                     \
                double running = totals[t];                                                        \
                for (int64_t i = N * t / threads; i < N * (t + 1) / threads; ++i) {                \
                    running += x[i];                                                               \
                    y[i] = (T)running;                                                             \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

HB_SCAN(prefix_sum_mpi_fp64, double)
HB_SCAN(prefix_sum_mpi_fp32, float)
