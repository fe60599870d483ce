/* bfs: level-synchronous top-down breadth-first search. The frontier of level d is shared among
 * threads (dynamic chunks: out-degrees differ); a thread claims each unvisited successor with one
 * compare-and-swap of its level from -1 to d + 1, keeps it in a local buffer and appends the
 * buffer to the next frontier with one atomic add per 1024 vertices. Workspace: the two frontiers
 * (N vertices each) and the next frontier's length. */
#include <stdint.h>

#define HB_BFS_BATCH 1024

#define HB_BFS(NAME, T)                                                                          \
    void NAME(const T *restrict A_data, const int64_t *restrict A_indices,                       \
              const int64_t *restrict A_indptr, int64_t *restrict level, int64_t N, int64_t nnz, \
              int64_t source, void *workspace, int64_t workspace_bytes) {                        \
        (void)A_data;                                                                            \
        (void)nnz;                                                                               \
        (void)workspace_bytes;                                                                   \
        int64_t *frontier = (int64_t *)workspace;                                                \
        int64_t *next = frontier + N;                                                            \
        int64_t *next_size = next + N;                                                           \
        _Pragma("omp parallel for simd schedule(static)")                                        \
        for (int64_t v = 0; v < N; ++v) level[v] = -1;                                           \
        if (source < 0 || source >= N) return;                                                   \
        level[source] = 0;                                                                       \
        frontier[0] = source;                                                                    \
        int64_t size = 1;                                                                        \
        for (int64_t depth = 0; size > 0; ++depth) {                                             \
            *next_size = 0;                                                                      \
            _Pragma("omp parallel")                                                              \
            {                                                                                    \
                int64_t local[HB_BFS_BATCH];                                                     \
                int64_t held = 0;                                                                \
                _Pragma("omp for schedule(dynamic, 64) nowait")                                  \
                for (int64_t f = 0; f < size; ++f) {                                             \
                    const int64_t u = frontier[f];                                               \
                    for (int64_t k = A_indptr[u]; k < A_indptr[u + 1]; ++k) {                    \
                        const int64_t v = A_indices[k];                                          \
                        int64_t unseen = -1;                                                     \
                        if (__atomic_load_n(&level[v], __ATOMIC_RELAXED) == -1                   \
                            && __atomic_compare_exchange_n(&level[v], &unseen, depth + 1, 0,     \
                                                           __ATOMIC_RELAXED, __ATOMIC_RELAXED)) { \
                            local[held++] = v;                                                   \
                            if (held == HB_BFS_BATCH) {                                          \
                                const int64_t at = __atomic_fetch_add(next_size, held,           \
                                                                      __ATOMIC_RELAXED);         \
                                for (int64_t i = 0; i < held; ++i) next[at + i] = local[i];      \
                                held = 0;                                                        \
                            }                                                                    \
                        }                                                                        \
                    }                                                                            \
                }                                                                                \
                const int64_t at = __atomic_fetch_add(next_size, held, __ATOMIC_RELAXED);        \
                for (int64_t i = 0; i < held; ++i) next[at + i] = local[i];                      \
            }                                                                                    \
            size = *next_size;                                                                   \
            int64_t *swap = frontier;                                                            \
            frontier = next;                                                                     \
            next = swap;                                                                         \
        }                                                                                        \
    }

HB_BFS(bfs_fp64, double)
HB_BFS(bfs_fp32, float)
