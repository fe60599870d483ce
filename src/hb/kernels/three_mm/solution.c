/* three_mm: E = A B and F = C D, then G = E F; each product in the i-k-j order with rows shared
 * among threads and a contiguous inner loop (one parallel region, a barrier before G). */
#include <stdint.h>

#define HB_THREE_MM_PRODUCT(NAME, T)                                                             \
    static inline void NAME(const T *restrict X, const T *restrict Y, T *restrict Z, int64_t ni, \
                            int64_t nk, int64_t nj) {                                            \
        _Pragma("omp for schedule(static)")                                                      \
        for (int64_t i = 0; i < ni; ++i) {                                                       \
            T *restrict zi = Z + i * nj;                                                         \
            for (int64_t j = 0; j < nj; ++j) zi[j] = 0;                                          \
            for (int64_t k = 0; k < nk; ++k) {                                                   \
                const T x = X[i * nk + k];                                                       \
                for (int64_t j = 0; j < nj; ++j) zi[j] += x * Y[k * nj + j];                     \
            }                                                                                    \
        }                                                                                        \
    }

#define HB_THREE_MM(NAME, T)                                                                     \
    HB_THREE_MM_PRODUCT(NAME##_product, T)                                                       \
    void NAME(const T *restrict A, const T *restrict B, const T *restrict C, const T *restrict D, \
              T *restrict G, int64_t NI, int64_t NJ, int64_t NK, int64_t NL, int64_t NM,         \
              void *workspace, int64_t workspace_bytes) {                                        \
        (void)workspace_bytes;                                                                   \
        T *restrict E = workspace;                                                               \
        T *restrict F = E + NI * NJ;                                                             \
        _Pragma("omp parallel")                                                                  \
        {                                                                                        \
            NAME##_product(A, B, E, NI, NK, NJ);                                                 \
            NAME##_product(C, D, F, NJ, NM, NL);                                                 \
            NAME##_product(E, F, G, NI, NJ, NL);                                                 \
        }                                                                                        \
    }

HB_THREE_MM(three_mm_fp64, double)
HB_THREE_MM(three_mm_fp32, float)
