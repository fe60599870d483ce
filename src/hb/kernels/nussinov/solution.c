/* nussinov: the table filled one anti-diagonal (span j - i) at a time, its cells shared among
 * threads, one barrier per span. Each cell's split maximum reads row i and column j; column j is
 * read from a mirror by columns kept in the workspace, so both operands stream contiguously. */
#include <stdint.h>

static inline int32_t nussinov_max(int32_t a, int32_t b) { return a > b ? a : b; }

void nussinov_fp64(const int32_t *restrict seq, int32_t *restrict table, int64_t N,
                   void *workspace, int64_t workspace_bytes) {
    (void)workspace_bytes;
    int32_t *restrict column = workspace; /* column[j * N + i] = table[i][j] */
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (int64_t i = 0; i < N * N; ++i) table[i] = column[i] = 0;
        for (int64_t span = 1; span < N; ++span) {
#pragma omp for schedule(static)
            for (int64_t i = 0; i < N - span; ++i) {
                const int64_t j = i + span;
                const int32_t *restrict row = table + i * N;
                const int32_t *restrict col = column + j * N;
                int32_t best = nussinov_max(row[j - 1], col[i + 1]);
                const int32_t pair = span > 1 && seq[i] + seq[j] == 3;
                best = nussinov_max(best, table[(i + 1) * N + j - 1] + pair);
                for (int64_t k = i + 1; k < j; ++k) best = nussinov_max(best, row[k] + col[k + 1]);
                table[i * N + j] = best;
                column[j * N + i] = best;
            }
        }
    }
}
