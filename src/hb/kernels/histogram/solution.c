/* histogram: every thread counts into a private copy of the bins (an OpenMP array-section
 * reduction), merged at the end; a value's bin is floor((x - lo) * B / (hi - lo)), taken by
 * truncation once the value is known to be non-negative. */
#include <stdint.h>

#define HB_HISTOGRAM(NAME, T)                                                                      \
    void NAME(const T *restrict x, int64_t *restrict counts, int64_t N, int64_t B, T lo, T hi,     \
              void *workspace, int64_t workspace_bytes) {                                          \
        (void)workspace;                                                                           \
        (void)workspace_bytes;                                                                     \
        const T scale = (T)B / (hi - lo);                                                          \
        for (int64_t k = 0; k < B; ++k) counts[k] = 0;                                             \
        _Pragma("omp parallel for schedule(static) reduction(+ : counts[:B])")                     \
        for (int64_t i = 0; i < N; ++i) {                                                          \
            const T place = (x[i] - lo) * scale;                                                   \
            if (place >= 0 && place < (T)B) counts[(int64_t)place] += 1;                           \
        }                                                                                          \
    }

HB_HISTOGRAM(histogram_fp64, double)
HB_HISTOGRAM(histogram_fp32, float)
