/* ludcmp: right-looking elimination without pivoting (rows below each pivot shared among
 * threads), then the forward and backward substitutions, each row a contiguous dot product
 * (O(N^2) against the factorisation's O(N^3), run by one thread). */
#include <stdint.h>

#define HB_LUDCMP(NAME, T)                                                                       \
    void NAME(T *restrict A, const T *restrict b, T *restrict x, T *restrict y, int64_t N,       \
              void *workspace, int64_t workspace_bytes) {                                        \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        _Pragma("omp parallel")                                                                  \
        for (int64_t k = 0; k < N - 1; ++k) {                                                    \
            const T *restrict ak = A + k * N;                                                    \
            const T pivot = ak[k];                                                               \
            _Pragma("omp for schedule(static)")                                                  \
            for (int64_t i = k + 1; i < N; ++i) {                                                \
                T *restrict ai = A + i * N;                                                      \
                const T l = ai[k] / pivot;                                                       \
                ai[k] = l;                                                                       \
                for (int64_t j = k + 1; j < N; ++j) ai[j] -= l * ak[j];                          \
            }                                                                                    \
        }                                                                                        \
        for (int64_t i = 0; i < N; ++i) {                                                        \
            T w = b[i];                                                                          \
            for (int64_t j = 0; j < i; ++j) w -= A[i * N + j] * y[j];                            \
            y[i] = w;                                                                            \
        }                                                                                        \
        for (int64_t i = N - 1; i >= 0; --i) {                                                   \
            T w = y[i];                                                                          \
            for (int64_t j = i + 1; j < N; ++j) w -= A[i * N + j] * x[j];                        \
            x[i] = w / A[i * N + i];                                                             \
        }                                                                                        \
    }

HB_LUDCMP(ludcmp_fp64, double)
HB_LUDCMP(ludcmp_fp32, float)
