/* linear_recurrence (TSVC s321): a two-pass parallel scan: each thread composes its chunk's
 * affine maps x -> b[i] x + a[i] into one (in double), the compositions are chained across chunks
 * to give each chunk its entry value, and each chunk is rerun from it. */
#include <stdint.h>
#include <omp.h>

#define HB_KERNEL(NAME, T)                                                                        \
    void NAME(const T *restrict b, T *restrict a, int64_t N, void *workspace,                     \
          int64_t workspace_bytes) {                                                              \
        (void)workspace;                                                                          \
        (void)workspace_bytes;                                                                    \
        const int threads = omp_get_max_threads() < 256 ? omp_get_max_threads() : 256;            \
        double mul[256], add[256];                                                                \
        _Pragma("omp parallel num_threads(threads)")                                              \
        {                                                                                         \
            const int64_t workers = omp_get_num_threads(), id = omp_get_thread_num();             \
            const int64_t lo = 1 + (N - 1) * id / workers, hi = 1 + (N - 1) * (id + 1) / workers; \
            double m = 1.0, c = 0.0;                                                              \
            for (int64_t i = lo; i < hi; ++i) {                                                   \
                c = (double)a[i] + (double)b[i] * c;                                              \
                m *= (double)b[i];                                                                \
            }                                                                                     \
            mul[id] = m;                                                                          \
            add[id] = c;                                                                          \
            _Pragma("omp barrier")                                                                \
            double entry = (double)a[0];                                                          \
            for (int64_t t = 0; t < id; ++t) entry = add[t] + mul[t] * entry;                     \
            if (lo < hi) {                                                                        \
                a[lo] += (T)entry * b[lo];                                                        \
                for (int64_t i = lo + 1; i < hi; ++i) a[i] += a[i - 1] * b[i];                    \
            }                                                                                     \
        }                                                                                         \
    }

HB_KERNEL(linear_recurrence_fp64, double)
HB_KERNEL(linear_recurrence_fp32, float)
