/* symm: C <- alpha S B + beta C with S[i][k] = A[max(i,k)][min(i,k)]. Rows of C are independent:
 * they are shared among threads, each row accumulated over k with a contiguous inner loop (the
 * i-k-j order of gemm). */
#include <stdint.h>

#define HB_SYMM(NAME, T)                                                                         \
    void NAME(T *restrict C, const T *restrict A, const T *restrict B, int64_t M, int64_t N,     \
              T alpha, T beta, void *workspace, int64_t workspace_bytes) {                       \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        _Pragma("omp parallel for schedule(static)")                                             \
        for (int64_t i = 0; i < M; ++i) {                                                        \
            T *restrict ci = C + i * N;                                                          \
            for (int64_t j = 0; j < N; ++j) ci[j] *= beta;                                       \
            for (int64_t k = 0; k < M; ++k) {                                                    \
                const T s = alpha * (k <= i ? A[i * M + k] : A[k * M + i]);                      \
                const T *restrict bk = B + k * N;                                                \
                for (int64_t j = 0; j < N; ++j) ci[j] += s * bk[j];                              \
            }                                                                                    \
        }                                                                                        \
    }

HB_SYMM(symm_fp64, double)
HB_SYMM(symm_fp32, float)
