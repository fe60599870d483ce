/* fission_prefix (TSVC s221), split in two: a's update is a parallel SIMD loop, then b's
 * recurrence a two-pass parallel scan in double (chunk sums, their prefix, each chunk rescanned). */
#include <stdint.h>
#include <omp.h>

#define HB_KERNEL(NAME, T)                                                                        \
    void NAME(const T *restrict c, const T *restrict d, T *restrict a, T *restrict b, int64_t N,  \
          void *workspace, int64_t workspace_bytes) {                                             \
        (void)workspace;                                                                          \
        (void)workspace_bytes;                                                                    \
        _Pragma("omp parallel for simd schedule(static)")                                         \
        for (int64_t i = 1; i < N; ++i) a[i] += c[i] * d[i];                                      \
        const int threads = omp_get_max_threads() < 256 ? omp_get_max_threads() : 256;            \
        double part[257];                                                                         \
        part[0] = 0.0;                                                                            \
        _Pragma("omp parallel num_threads(threads)")                                              \
        {                                                                                         \
            const int64_t workers = omp_get_num_threads(), id = omp_get_thread_num();             \
            const int64_t lo = 1 + (N - 1) * id / workers, hi = 1 + (N - 1) * (id + 1) / workers; \
            double mine = 0.0;                                                                    \
            _Pragma("omp simd reduction(+ : mine)")                                               \
            for (int64_t i = lo; i < hi; ++i) mine += (double)a[i] + (double)d[i];                \
            part[id + 1] = mine;                                                                  \
            _Pragma("omp barrier")                                                                \
            double carry = (double)b[0];                                                          \
            for (int64_t t = 1; t <= id; ++t) carry += part[t];                                   \
            for (int64_t i = lo; i < hi; ++i) {                                                   \
                carry += (double)a[i] + (double)d[i];                                             \
                b[i] = (T)carry;                                                                  \
            }                                                                                     \
        }                                                                                         \
    }

HB_KERNEL(fission_prefix_fp64, double)
HB_KERNEL(fission_prefix_fp32, float)
