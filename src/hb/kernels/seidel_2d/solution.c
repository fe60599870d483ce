/* seidel_2d: TSTEPS in-place Gauss-Seidel sweeps, pipelined over rows. A point needs the row
   above finished one column to its right, so rows are dealt cyclically to the threads and each row
   advances in blocks of columns behind the row above (an OpenMP doacross loop: block (i, b) waits
   for blocks (i - 1, b) and (i - 1, b + 1), the latter outside the loop at the last block, where
   the former is what covers the row's end); every point sees the values the serial sweep sees.
   Only the left neighbour's new value lies on the row's critical path, so the other eight terms
   are summed first and the division by 9 is a multiplication by its reciprocal (within a unit in
   the last place, and the sweep is a contraction). */
#include <stdint.h>

#define HB_SEIDEL_COLUMNS 64

#define HB_SEIDEL(NAME, T)                                                                         \
    void NAME(T *restrict A, int64_t N, int64_t TSTEPS, void *workspace,                           \
              int64_t workspace_bytes) {                                                           \
        (void)workspace;                                                                           \
        (void)workspace_bytes;                                                                     \
        const T ninth = (T)(1.0 / 9.0);                                                            \
        const int64_t blocks = (N - 2 + HB_SEIDEL_COLUMNS - 1) / HB_SEIDEL_COLUMNS;                \
        _Pragma("omp parallel")                                                                    \
        for (int64_t t = 0; t < TSTEPS; ++t) {                                                     \
            _Pragma("omp for ordered(2) schedule(static, 1)")                                      \
            for (int64_t i = 1; i < N - 1; ++i)                                                    \
                for (int64_t b = 0; b < blocks; ++b) {                                             \
                    _Pragma("omp ordered depend(sink: i - 1, b) depend(sink: i - 1, b + 1)")       \
                    const int64_t lo = 1 + b * HB_SEIDEL_COLUMNS;                                  \
                    const int64_t hi =                                                             \
                        lo + HB_SEIDEL_COLUMNS < N - 1 ? lo + HB_SEIDEL_COLUMNS : N - 1;           \
                    T *restrict r = A + i * N;                                                     \
                    const T *restrict up = r - N, *restrict dn = r + N;                            \
                    for (int64_t j = lo; j < hi; ++j) {                                            \
                        const T rest = ((up[j - 1] + up[j] + up[j + 1]) + (r[j] + r[j + 1]))       \
                                       + (dn[j - 1] + dn[j] + dn[j + 1]);                          \
                        r[j] = (rest + r[j - 1]) * ninth;                                          \
                    }                                                                              \
                    _Pragma("omp ordered depend(source)")                                          \
                }                                                                                  \
        }                                                                                          \
    }

HB_SEIDEL(seidel_2d_fp64, double)
HB_SEIDEL(seidel_2d_fp32, float)
