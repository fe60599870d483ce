/* distance4_recurrence (TSVC s1221): the four chains as 4-wide vectors, scanned in two passes
 * across threads in double (each thread's chunk sums per lane, their prefix, each chunk
 * rescanned). */
#include <stdint.h>
#include <omp.h>

#define HB_KERNEL(NAME, T)                                                                              \
    void NAME(const T *restrict a, T *restrict b, int64_t N, void *workspace,                           \
          int64_t workspace_bytes) {                                                                    \
        (void)workspace;                                                                                \
        (void)workspace_bytes;                                                                          \
        const int threads = omp_get_max_threads() < 256 ? omp_get_max_threads() : 256;                  \
        double part[257][4];                                                                            \
        const int64_t rows = N / 4;                                                                     \
        _Pragma("omp parallel num_threads(threads)")                                                    \
        {                                                                                               \
            const int64_t workers = omp_get_num_threads(), id = omp_get_thread_num();                   \
            const int64_t lo = 1 + (rows - 1) * id / workers, hi = 1 + (rows - 1) * (id + 1) / workers; \
            double mine[4] = {0.0, 0.0, 0.0, 0.0};                                                      \
            for (int64_t r = lo; r < hi; ++r)                                                           \
                for (int l = 0; l < 4; ++l) mine[l] += (double)a[4 * r + l];                            \
            for (int l = 0; l < 4; ++l) part[id][l] = mine[l];                                          \
            _Pragma("omp barrier")                                                                      \
            double carry[4];                                                                            \
            for (int l = 0; l < 4; ++l) {                                                               \
                carry[l] = (double)b[l];                                                                \
                for (int64_t t = 0; t < id; ++t) carry[l] += part[t][l];                                \
            }                                                                                           \
            for (int64_t r = lo; r < hi; ++r)                                                           \
                for (int l = 0; l < 4; ++l) {                                                           \
                    carry[l] += (double)a[4 * r + l];                                                   \
                    b[4 * r + l] = (T)carry[l];                                                         \
                }                                                                                       \
        }                                                                                               \
    }

HB_KERNEL(distance4_recurrence_fp64, double)
HB_KERNEL(distance4_recurrence_fp32, float)
