/* pagerank: iters pull steps rank_i = (1 - damping) / N + damping * (P rank)_i from the uniform
 * vector, P in canonical CSR (row i: the pages linking to i, weighted by 1 / their out-degree).
 * Two vectors (rank and one of the workspace) alternate; each step is one parallel loop over
 * rows, and the last step lands in rank. */
#include <stdint.h>

#define HB_PAGERANK(NAME, T)                                                                    \
    void NAME(const T *restrict P_data, const int64_t *restrict P_indices,                      \
              const int64_t *restrict P_indptr, T *restrict rank, int64_t N, int64_t nnz,       \
              T damping, int64_t iters, void *workspace, int64_t workspace_bytes) {             \
        (void)nnz;                                                                              \
        (void)workspace_bytes;                                                                  \
        const T teleport = ((T)1 - damping) / (T)N;                                             \
        /* start in the vector the last step does not write, so rank is written last */        \
        T *restrict from = iters % 2 ? (T *)workspace : rank;                                   \
        T *restrict to = iters % 2 ? rank : (T *)workspace;                                     \
        _Pragma("omp parallel for simd schedule(static)")                                       \
        for (int64_t i = 0; i < N; ++i) from[i] = (T)1 / (T)N;                                  \
        for (int64_t step = 0; step < iters; ++step) {                                          \
            _Pragma("omp parallel for schedule(static)")                                        \
            for (int64_t i = 0; i < N; ++i) {                                                   \
                T sum = 0;                                                                      \
                for (int64_t k = P_indptr[i]; k < P_indptr[i + 1]; ++k)                         \
                    sum += P_data[k] * from[P_indices[k]];                                      \
                to[i] = teleport + damping * sum;                                               \
            }                                                                                   \
            T *swap = from;                                                                     \
            from = to;                                                                          \
            to = swap;                                                                          \
        }                                                                                       \
    }

HB_PAGERANK(pagerank_fp64, double)
HB_PAGERANK(pagerank_fp32, float)
