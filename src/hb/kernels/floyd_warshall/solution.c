/* floyd_warshall: for each intermediate vertex k, the rows are shared among threads and relaxed
 * through row k (which step k leaves unchanged), a contiguous inner loop; one barrier per k. */
#include <stdint.h>

#define HB_FLOYD_WARSHALL(NAME, T)                                                               \
    void NAME(T *restrict paths, int64_t N, void *workspace, int64_t workspace_bytes) {          \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        _Pragma("omp parallel")                                                                  \
        for (int64_t k = 0; k < N; ++k) {                                                        \
            const T *restrict pk = paths + k * N;                                                \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t i = 0; i < N; ++i) {                                                    \
                T *restrict pi = paths + i * N;                                                  \
                const T through = pi[k];                                                         \
                for (int64_t j = 0; j < N; ++j) {                                                \
                    const T candidate = through + pk[j];                                         \
                    pi[j] = candidate < pi[j] ? candidate : pi[j];                               \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
    }

HB_FLOYD_WARSHALL(floyd_warshall_fp64, double)
HB_FLOYD_WARSHALL(floyd_warshall_fp32, float)
