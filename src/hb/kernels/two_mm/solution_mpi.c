/* two_mm on MPI under the default plan: rows of A and D in balanced bands (NI arrives local), B
   and C replicated. Row i of D needs only row i of A, so each rank computes its band with the
   single-node row loop and no communication; its tmp band is the workspace. */
#include <mpi.h>
#include <stdint.h>

#define HB_TWO_MM_MPI(NAME, T)                                                                   \
    void NAME(const T *restrict A, const T *restrict B, const T *restrict C, T *restrict D,      \
              int64_t NI, int64_t NJ, int64_t NK, int64_t NL, T alpha, T beta, MPI_Comm comm,    \
              void *workspace, int64_t workspace_bytes) {                                        \
        (void)comm;                                                                              \
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

HB_TWO_MM_MPI(two_mm_mpi_fp64, double)
HB_TWO_MM_MPI(two_mm_mpi_fp32, float)
