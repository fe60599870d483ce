/* embedding_gather: the looked-up rows shared among threads, each a contiguous row copy. */
#include <stdint.h>
#include <string.h>

#define HB_EMBEDDING_GATHER(NAME, T)                                                         \
    void NAME(const int64_t *restrict idx, const T *restrict table, T *restrict out,         \
              int64_t N, int64_t V, int64_t D, void *workspace, int64_t workspace_bytes) {   \
        (void)V;                                                                             \
        (void)workspace;                                                                     \
        (void)workspace_bytes;                                                               \
        _Pragma("omp parallel for schedule(static)")                                         \
        for (int64_t n = 0; n < N; ++n)                                                      \
            memcpy(out + n * D, table + idx[n] * D, (size_t)D * sizeof(T));                  \
    }

HB_EMBEDDING_GATHER(embedding_gather_fp64, double)
HB_EMBEDDING_GATHER(embedding_gather_fp32, float)
