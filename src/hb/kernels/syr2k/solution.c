/* syr2k: lower triangle of C <- alpha (A B^T + B A^T) + beta C. Each C[i][j] is two dot products
 * over rows of A and B (contiguous in k, vectorised); rows of C are dealt to threads dynamically,
 * as row i holds i + 1 entries. */
#include <stdint.h>

#define HB_DOT2(NAME, T)                                                                         \
    /* not inlined: GCC 12 at -O3 vectorises the loops around an inlined simd reduction badly */ \
    __attribute__((noinline)) static T NAME(const T *restrict a, const T *restrict b,            \
                                            const T *restrict c, const T *restrict d,            \
                                            int64_t n) {                                         \
        T sum = 0;                                                                               \
        _Pragma("omp simd reduction(+ : sum)")                                                   \
        for (int64_t k = 0; k < n; ++k) sum += a[k] * b[k] + c[k] * d[k];                        \
        return sum;                                                                              \
    }

#define HB_SYR2K(NAME, T)                                                                        \
    HB_DOT2(NAME##_dot2, T)                                                                      \
    void NAME(T *restrict C, const T *restrict A, const T *restrict B, int64_t N, int64_t M,     \
              T alpha, T beta, void *workspace, int64_t workspace_bytes) {                       \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        _Pragma("omp parallel for schedule(dynamic, 4)")                                         \
        for (int64_t i = 0; i < N; ++i)                                                          \
            for (int64_t j = 0; j <= i; ++j) {                                                   \
                const T sum = NAME##_dot2(A + j * M, B + i * M, B + j * M, A + i * M, M);        \
                C[i * N + j] = beta * C[i * N + j] + alpha * sum;                                \
            }                                                                                    \
    }

HB_SYR2K(syr2k_fp64, double)
HB_SYR2K(syr2k_fp32, float)
