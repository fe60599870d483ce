/* first_min_index (Livermore kernel 24): each thread finds the first minimum of its contiguous
 * chunk, then the chunks' (value, index) pairs are combined so that the smallest value, and of
 * equal values the smallest index, wins. */
#include <stdint.h>
#include <omp.h>

#define HB_KERNEL(NAME, T)                                                                \
    void NAME(const T *restrict x, int64_t *restrict loc, int64_t N, void *workspace,     \
          int64_t workspace_bytes) {                                                      \
        (void)workspace;                                                                  \
        (void)workspace_bytes;                                                            \
        int64_t best = 0;                                                                 \
        T low = x[0];                                                                     \
        _Pragma("omp parallel")                                                           \
        {                                                                                 \
            const int64_t threads = omp_get_num_threads(), id = omp_get_thread_num();     \
            const int64_t lo = N * id / threads, hi = N * (id + 1) / threads;             \
            int64_t mine = lo;                                                            \
            for (int64_t i = lo + 1; i < hi; ++i)                                         \
                if (x[i] < x[mine]) mine = i;                                             \
            _Pragma("omp critical")                                                       \
            if (lo < hi && (x[mine] < low || (x[mine] == low && mine < best))) {          \
                low = x[mine];                                                            \
                best = mine;                                                              \
            }                                                                             \
        }                                                                                 \
        loc[0] = best;                                                                    \
    }

HB_KERNEL(first_min_index_fp64, double)
HB_KERNEL(first_min_index_fp32, float)
