/* statement_reorder (TSVC s211), reordered: each thread computes a over its chunk from the old b
 * (the new b[i-1] recomputed), keeps the old b just past its chunk, and after a barrier updates b
 * over its chunk in place. */
#include <stdint.h>
#include <omp.h>

#define HB_KERNEL(NAME, T)                                                                        \
    void NAME(const T *restrict c, const T *restrict d, const T *restrict e, T *restrict a,       \
          T *restrict b, int64_t N, void *workspace, int64_t workspace_bytes) {                   \
        (void)workspace;                                                                          \
        (void)workspace_bytes;                                                                    \
        _Pragma("omp parallel")                                                                   \
        {                                                                                         \
            const int64_t workers = omp_get_num_threads(), id = omp_get_thread_num();             \
            const int64_t lo = 1 + (N - 2) * id / workers, hi = 1 + (N - 2) * (id + 1) / workers; \
            for (int64_t i = lo; i < hi; ++i) {                                                   \
                const T before = i == 1 ? b[0] : b[i] - e[i - 1] * d[i - 1];                      \
                a[i] = before + c[i] * d[i];                                                      \
            }                                                                                     \
            const T next = hi < N ? b[hi] : (T)0;                                                 \
            _Pragma("omp barrier")                                                                \
            for (int64_t i = lo; i + 1 < hi; ++i) b[i] = b[i + 1] - e[i] * d[i];                  \
            if (lo < hi) b[hi - 1] = next - e[hi - 1] * d[hi - 1];                                \
        }                                                                                         \
    }

HB_KERNEL(statement_reorder_fp64, double)
HB_KERNEL(statement_reorder_fp32, float)
