/* cholesky: column by column (left-looking, dot-product form): the diagonal entry of column j,
 * then every entry below it as a dot product of two rows of L (contiguous, vectorised), those
 * rows shared among threads. */
#include <math.h>
#include <stdint.h>

#define HB_DOT(NAME, T)                                                                          \
    /* not inlined: GCC 12 at -O3 vectorises the loops around an inlined simd reduction badly */ \
    __attribute__((noinline)) static T NAME(const T *restrict a, const T *restrict b,            \
                                            int64_t n) {                                         \
        T sum = 0;                                                                               \
        _Pragma("omp simd reduction(+ : sum)")                                                   \
        for (int64_t k = 0; k < n; ++k) sum += a[k] * b[k];                                      \
        return sum;                                                                              \
    }

#define HB_CHOLESKY(NAME, T, SQRT)                                                               \
    HB_DOT(NAME##_dot, T)                                                                        \
    void NAME(T *restrict A, int64_t N, void *workspace, int64_t workspace_bytes) {              \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        _Pragma("omp parallel")                                                                  \
        for (int64_t j = 0; j < N; ++j) {                                                        \
            const T *restrict aj = A + j * N;                                                    \
            _Pragma("omp single")                                                                \
            A[j * N + j] = SQRT(A[j * N + j] - NAME##_dot(aj, aj, j));                           \
            const T diagonal = A[j * N + j];                                                     \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t i = j + 1; i < N; ++i)                                                  \
                A[i * N + j] = (A[i * N + j] - NAME##_dot(A + i * N, aj, j)) / diagonal;         \
        }                                                                                        \
    }

HB_CHOLESKY(cholesky_fp64, double, sqrt)
HB_CHOLESKY(cholesky_fp32, float, sqrtf)
