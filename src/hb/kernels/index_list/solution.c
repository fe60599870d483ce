/* index_list (RAJAPerf INDEXLIST): every thread counts the matches of its contiguous chunk; an
 * exclusive prefix of the counts gives each chunk its first slot, and a second pass writes the
 * indices; the tail is filled with -1. */
#include <stdint.h>
#include <omp.h>

#define HB_KERNEL(NAME, T)                                                                     \
    void NAME(const T *restrict x, int64_t *restrict list, int64_t *restrict count, int64_t N, \
          void *workspace, int64_t workspace_bytes) {                                          \
        (void)workspace;                                                                       \
        (void)workspace_bytes;                                                                 \
        const int threads = omp_get_max_threads() < 256 ? omp_get_max_threads() : 256;         \
        int64_t part[257];                                                                     \
        part[0] = 0;                                                                           \
        _Pragma("omp parallel num_threads(threads)")                                           \
        {                                                                                      \
            const int64_t workers = omp_get_num_threads(), id = omp_get_thread_num();          \
            const int64_t lo = N * id / workers, hi = N * (id + 1) / workers;                  \
            int64_t mine = 0;                                                                  \
            for (int64_t i = lo; i < hi; ++i) mine += x[i] < (T)0;                             \
            part[id + 1] = mine;                                                               \
            _Pragma("omp barrier")                                                             \
            int64_t slot = 0;                                                                  \
            for (int64_t t = 1; t <= id; ++t) slot += part[t];                                 \
            for (int64_t i = lo; i < hi; ++i)                                                  \
                if (x[i] < (T)0) list[slot++] = i;                                             \
            _Pragma("omp barrier")                                                             \
            _Pragma("omp single")                                                              \
            {                                                                                  \
                int64_t total = 0;                                                             \
                for (int64_t t = 1; t <= workers; ++t) total += part[t];                       \
                count[0] = total;                                                              \
            }                                                                                  \
            _Pragma("omp for simd schedule(static)")                                           \
            for (int64_t i = 0; i < N; ++i)                                                    \
                if (i >= count[0]) list[i] = -1;                                               \
        }                                                                                      \
    }

HB_KERNEL(index_list_fp64, double)
HB_KERNEL(index_list_fp32, float)
