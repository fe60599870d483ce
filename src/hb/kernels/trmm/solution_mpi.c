/* trmm on MPI under the default plan: B's columns in balanced bands (N arrives local), A
   replicated. The columns of the product are independent, so each rank applies the single-node
   update to its own M x N tile with no communication. */
#include <mpi.h>
#include <stdint.h>

#define HB_TRMM_MPI(NAME, T)                                                                     \
    void NAME(const T *restrict A, T *restrict B, int64_t M, int64_t N, T alpha, MPI_Comm comm,  \
              void *workspace, int64_t workspace_bytes) {                                        \
        (void)comm;                                                                              \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        for (int64_t i = 0; i < M; ++i) {                                                        \
            T *restrict bi = B + i * N;                                                          \
            for (int64_t k = i + 1; k < M; ++k) {                                                \
                const T a = A[k * M + i];                                                        \
                const T *restrict bk = B + k * N;                                                \
                for (int64_t j = 0; j < N; ++j) bi[j] += a * bk[j];                              \
            }                                                                                    \
            for (int64_t j = 0; j < N; ++j) bi[j] *= alpha;                                      \
        }                                                                                        \
    }

HB_TRMM_MPI(trmm_mpi_fp64, double)
HB_TRMM_MPI(trmm_mpi_fp32, float)
