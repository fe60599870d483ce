/* prefix_sum: a two-pass blocked scan. Each thread sums its contiguous chunk, the chunk totals are
 * scanned to give every thread its offset, then each thread rescans its chunk from that offset.
 * Partial sums are held in double whatever the element type. */
#include <omp.h>
#include <stdint.h>

#define HB_MAX_THREADS 1024

#define HB_SCAN(NAME, T)                                                                           \
    void NAME(const T *restrict x, T *restrict y, int64_t N, void *workspace,                      \
              int64_t workspace_bytes) {                                                           \
        (void)workspace;                                                                           \
        (void)workspace_bytes;                                                                     \
        double totals[HB_MAX_THREADS + 1];                                                         \
        _Pragma("omp parallel")                                                                    \
        {                                                                                          \
            const int threads = omp_get_num_threads() < HB_MAX_THREADS ? omp_get_num_threads()     \
                                                                       : HB_MAX_THREADS;           \
            const int t = omp_get_thread_num();                                                    \
            const int64_t first = t < threads ? N * t / threads : N;                               \
            const int64_t last = t < threads ? N * (t + 1) / threads : N;                          \
            double sum = 0.0;                                                                      \
            for (int64_t i = first; i < last; ++i) sum += x[i];                                    \
            if (t < threads) totals[t + 1] = sum;                                                  \
            _Pragma("omp barrier")                                                                 \
            _Pragma("omp single")                                                                  \
            {                                                                                      \
                totals[0] = 0.0;                                                                   \
                for (int k = 1; k <= threads; ++k) totals[k] += totals[k - 1];                     \
            }                                                                                      \
            double running = t < threads ? totals[t] : 0.0;                                        \
            for (int64_t i = first; i < last; ++i) {                                               \
                running += x[i];                                                                   \
                y[i] = (T)running;                                                                 \
            }                                                                                      \
        }                                                                                          \
    }

HB_SCAN(prefix_sum_fp64, double)
HB_SCAN(prefix_sum_fp32, float)
