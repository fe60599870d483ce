/* top_k: rows shared among threads; each row streams once through a descending list of its K best
   values, an entry entering by insertion only when it beats the current K-th. */
#include <math.h>
#include <stdint.h>

#define HB_TOP_K(NAME, T)                                                                     \
    void NAME(const T *restrict x, T *restrict values, int64_t N, int64_t C, int64_t K,       \
              void *workspace, int64_t workspace_bytes) {                                     \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        _Pragma("omp parallel for schedule(static)")                                          \
        for (int64_t n = 0; n < N; ++n) {                                                     \
            const T *restrict row = x + n * C;                                                \
            T *restrict best = values + n * K;                                                \
            for (int64_t k = 0; k < K; ++k) best[k] = (T)-INFINITY;                           \
            for (int64_t c = 0; c < C; ++c) {                                                 \
                const T value = row[c];                                                       \
                if (!(value > best[K - 1])) continue;                                         \
                int64_t slot = K - 1;                                                         \
                while (slot > 0 && best[slot - 1] < value) {                                  \
                    best[slot] = best[slot - 1];                                              \
                    --slot;                                                                   \
                }                                                                             \
                best[slot] = value;                                                           \
            }                                                                                 \
        }                                                                                     \
    }

HB_TOP_K(top_k_fp64, double)
HB_TOP_K(top_k_fp32, float)
