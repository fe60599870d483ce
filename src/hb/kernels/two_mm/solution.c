/* two_mm: per row i (rows shared among threads), tmp[i] = alpha A[i] B and then
 * D[i] = tmp[i] C + beta D[i], both in the i-k-j order with contiguous inner loops; a row's tmp
 * is still in cache when the second product reads it. */
#include <stdint.h>

#define HB_TWO_MM(NAME, T)                                                                       \
    void NAME(const T *restrict A, const T *restrict B, const T *restrict C, T *restrict D,      \
              int64_t NI, int64_t NJ, int64_t NK, int64_t NL, T alpha, T beta, void *workspace,  \
              int64_t workspace_bytes) {                                                         \
        (void)workspace_bytes;                                                                   \
        T *restrict tmp = workspace;                                                             \
        _Pragma("omp parallel for schedule(static)")                                             \
        for (int64_t i = 0; i < NI; ++i) {                                                       \
            T *restrict ti = tmp + i * NJ;                                                       \
            T *restrict di = D + i * NL;                                                         \
            for (int64_t j = 0; j < NJ; ++j) ti[j] = 0;                                          \
            for (int64_t k = 0; k < NK; ++k) {                                                   \
                const T a = alpha * A[i * NK + k];                                               \
                for (int64_t j = 0; j < NJ; ++j) ti[j] += a * B[k * NJ + j];                     \
            }                                                                                    \
            for (int64_t l = 0; l < NL; ++l) di[l] *= beta;                                      \
            for (int64_t j = 0; j < NJ; ++j) {                                                   \
                const T t = ti[j];                                                               \
                for (int64_t l = 0; l < NL; ++l) di[l] += t * C[j * NL + l];                     \
            }                                                                                    \
        }                                                                                        \
    }

HB_TWO_MM(two_mm_fp64, double)
HB_TWO_MM(two_mm_fp32, float)
