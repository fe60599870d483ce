/* running_sum (TSVC s3112): a two-pass parallel scan in double: each thread sums its contiguous
 * chunk, the chunk sums are prefixed, and each chunk is rescanned from its offset. */
#include <stdint.h>
#include <omp.h>

#define HB_KERNEL(NAME, T)                                                                     \
    void NAME(const T *restrict a, T *restrict b, T *restrict sum, int64_t N, void *workspace, \
          int64_t workspace_bytes) {                                                           \
        (void)workspace;                                                                       \
        (void)workspace_bytes;                                                                 \
        const int threads = omp_get_max_threads() < 256 ? omp_get_max_threads() : 256;         \
        double part[257];                                                                      \
        part[0] = 0.0;                                                                         \
        _Pragma("omp parallel num_threads(threads)")                                           \
        {                                                                                      \
            const int64_t workers = omp_get_num_threads(), id = omp_get_thread_num();          \
            const int64_t lo = N * id / workers, hi = N * (id + 1) / workers;                  \
            double mine = 0.0;                                                                 \
            _Pragma("omp simd reduction(+ : mine)")                                            \
            for (int64_t i = lo; i < hi; ++i) mine += (double)a[i];                            \
            part[id + 1] = mine;                                                               \
            _Pragma("omp barrier")                                                             \
            double carry = 0.0;                                                                \
            for (int64_t t = 1; t <= id; ++t) carry += part[t];                                \
            for (int64_t i = lo; i < hi; ++i) {                                                \
                carry += (double)a[i];                                                         \
                b[i] = (T)carry;                                                               \
            }                                                                                  \
            if (id == workers - 1) sum[0] = (T)carry;                                          \
        }                                                                                      \
    }

HB_KERNEL(running_sum_fp64, double)
HB_KERNEL(running_sum_fp32, float)
