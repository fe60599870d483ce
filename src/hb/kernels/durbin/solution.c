/* durbin: Durbin's recursion. Step k is a dot product over y[0..k), the reflection coefficient,
 * then y[i] += alpha y[k-1-i], done in place over the pairs (i, k-1-i). Each step depends on the
 * one before through alpha, and at these sizes a step's O(k) work is a few microseconds, less
 * than the barriers a parallel step needs (three), so the recursion runs on one thread with the
 * dot product vectorised. */
#include <stdint.h>

#define HB_DURBIN(NAME, T)                                                                       \
    void NAME(const T *restrict r, T *restrict y, int64_t N, void *workspace,                    \
              int64_t workspace_bytes) {                                                         \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        T alpha = -r[0], beta = 1;                                                               \
        y[0] = -r[0];                                                                            \
        for (int64_t k = 1; k < N; ++k) {                                                        \
            T sum = 0;                                                                           \
            _Pragma("omp simd reduction(+ : sum)")                                               \
            for (int64_t i = 0; i < k; ++i) sum += r[k - i - 1] * y[i];                          \
            beta = (1 - alpha * alpha) * beta;                                                   \
            alpha = -(r[k] + sum) / beta;                                                        \
            for (int64_t i = 0; i < (k + 1) / 2; ++i) {                                          \
                const T low = y[i], high = y[k - 1 - i];                                         \
                y[i] = low + alpha * high;                                                       \
                y[k - 1 - i] = high + alpha * low;                                               \
            }                                                                                    \
            y[k] = alpha;                                                                        \
        }                                                                                        \
    }

HB_DURBIN(durbin_fp64, double)
HB_DURBIN(durbin_fp32, float)
