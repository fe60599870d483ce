/* symm on MPI under the default plan: the columns of B and C in balanced bands (N arrives local),
   A replicated. The columns of the product are independent, so each rank computes its M x N
   tile of C from its tile of B with no communication. */
#include <mpi.h>
#include <stdint.h>

#define HB_SYMM_MPI(NAME, T)                                                                     \
    void NAME(T *restrict C, const T *restrict A, const T *restrict B, int64_t M, int64_t N,     \
              T alpha, T beta, MPI_Comm comm, void *workspace, int64_t workspace_bytes) {        \
        (void)comm;                                                                              \
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

HB_SYMM_MPI(symm_mpi_fp64, double)
HB_SYMM_MPI(symm_mpi_fp32, float)
