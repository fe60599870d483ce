/* column_recurrence (TSVC s231), interchanged: every thread owns a contiguous band of columns and
 * walks the rows in order, the columns of its band updated by one SIMD loop per row. */
#include <stdint.h>
#include <omp.h>

#define HB_KERNEL(NAME, T)                                                                             \
    void NAME(const T *restrict bb, T *restrict aa, int64_t M, int64_t N, void *workspace,             \
          int64_t workspace_bytes) {                                                                   \
        (void)workspace;                                                                               \
        (void)workspace_bytes;                                                                         \
        _Pragma("omp parallel")                                                                        \
        {                                                                                              \
            const int64_t workers = omp_get_num_threads(), id = omp_get_thread_num();                  \
            const int64_t lo = N * id / workers, hi = N * (id + 1) / workers;                          \
            for (int64_t j = 1; j < M; ++j) {                                                          \
                _Pragma("omp simd")                                                                    \
                for (int64_t i = lo; i < hi; ++i) aa[j * N + i] = aa[(j - 1) * N + i] + bb[j * N + i]; \
            }                                                                                          \
        }                                                                                              \
    }

HB_KERNEL(column_recurrence_fp64, double)
HB_KERNEL(column_recurrence_fp32, float)
