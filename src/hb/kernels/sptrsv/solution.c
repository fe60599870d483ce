/* sptrsv: forward substitution x = L^-1 b over canonical CSR (the diagonal last in every row),
 * by level scheduling (Saad §11.6): a serial pass gives each row its level, one more than the
 * deepest row it reads; rows are bucketed by level (a counting sort into the workspace), and the
 * rows of one level, independent of each other, are solved in parallel, level after level, in
 * one parallel region. Workspace: each row's level, the rows in level order, the level bounds. */
#include <stdint.h>

#define HB_SPTRSV(NAME, T)                                                                      \
    void NAME(const T *restrict L_data, const int64_t *restrict L_indices,                      \
              const int64_t *restrict L_indptr, const T *restrict b, T *restrict x, int64_t N,  \
              int64_t nnz, void *workspace, int64_t workspace_bytes) {                          \
        (void)nnz;                                                                              \
        (void)workspace_bytes;                                                                  \
        int64_t *restrict level = (int64_t *)workspace;                                         \
        int64_t *restrict order = level + N;                                                    \
        int64_t *restrict bounds = order + N; /* N + 2 entries at most */                       \
        int64_t depth = 0;                                                                      \
        for (int64_t i = 0; i < N; ++i) {                                                       \
            int64_t deepest = -1;                                                               \
            for (int64_t k = L_indptr[i]; k < L_indptr[i + 1] - 1; ++k)                         \
                if (level[L_indices[k]] > deepest) deepest = level[L_indices[k]];               \
            level[i] = deepest + 1;                                                             \
            if (level[i] + 1 > depth) depth = level[i] + 1;                                     \
        }                                                                                       \
        for (int64_t l = 0; l <= depth; ++l) bounds[l] = 0;                                     \
        for (int64_t i = 0; i < N; ++i) ++bounds[level[i] + 1];                                 \
        for (int64_t l = 0; l < depth; ++l) bounds[l + 1] += bounds[l];                         \
        for (int64_t i = 0; i < N; ++i) order[bounds[level[i]]++] = i;                          \
        for (int64_t l = depth; l > 0; --l) bounds[l] = bounds[l - 1];                          \
        bounds[0] = 0;                                                                          \
        _Pragma("omp parallel")                                                                 \
        for (int64_t l = 0; l < depth; ++l) {                                                   \
            _Pragma("omp for schedule(static)")                                                 \
            for (int64_t r = bounds[l]; r < bounds[l + 1]; ++r) {                               \
                const int64_t i = order[r];                                                     \
                const int64_t last = L_indptr[i + 1] - 1;                                       \
                T sum = b[i];                                                                   \
                for (int64_t k = L_indptr[i]; k < last; ++k) sum -= L_data[k] * x[L_indices[k]]; \
                x[i] = sum / L_data[last];                                                      \
            }                                                                                   \
        }                                                                                       \
    }

HB_SPTRSV(sptrsv_fp64, double)
HB_SPTRSV(sptrsv_fp32, float)
