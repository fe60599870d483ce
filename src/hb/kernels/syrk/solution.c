/* syrk: lower triangle of C <- alpha A A^T + beta C. Each C[i][j] is a dot product of rows i and
 * j of A (contiguous in k, vectorised); rows of C are dealt to threads dynamically, as row i
 * holds i + 1 entries. */
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

#define HB_SYRK(NAME, T)                                                                         \
    HB_DOT(NAME##_dot, T)                                                                        \
    void NAME(T *restrict C, const T *restrict A, int64_t N, int64_t M, T alpha, T beta,         \
              void *workspace, int64_t workspace_bytes) {                                        \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        _Pragma("omp parallel for schedule(dynamic, 4)")                                         \
        for (int64_t i = 0; i < N; ++i)                                                          \
            for (int64_t j = 0; j <= i; ++j)                                                     \
                C[i * N + j] = beta * C[i * N + j]                                               \
                               + alpha * NAME##_dot(A + i * M, A + j * M, M);                    \
    }

HB_SYRK(syrk_fp64, double)
HB_SYRK(syrk_fp32, float)
