/* bicg on MPI under the default plan: rows of A, q and r in balanced bands (N arrives local), p
   and s replicated. q needs only the rank's rows; s is each rank's share of A^T r, summed by one
   MPI_Allreduce. */
#include <mpi.h>
#include <stdint.h>

#define HB_BICG_MPI(NAME, T, MPI_T)                                                              \
    void NAME(const T *restrict A, T *restrict s, T *restrict q, const T *restrict p,            \
              const T *restrict r, int64_t M, int64_t N, MPI_Comm comm, void *workspace,         \
              int64_t workspace_bytes) {                                                         \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        for (int64_t j = 0; j < M; ++j) s[j] = 0;                                                \
        for (int64_t i = 0; i < N; ++i) {                                                        \
            const T ri = r[i];                                                                   \
            T sum = 0;                                                                           \
            for (int64_t j = 0; j < M; ++j) {                                                    \
                s[j] += A[i * M + j] * ri;                                                       \
                sum += A[i * M + j] * p[j];                                                      \
            }                                                                                    \
            q[i] = sum;                                                                          \
        }                                                                                        \
        MPI_Allreduce(MPI_IN_PLACE, s, (int)M, MPI_T, MPI_SUM, comm);                            \
    }

HB_BICG_MPI(bicg_mpi_fp64, double, MPI_DOUBLE)
HB_BICG_MPI(bicg_mpi_fp32, float, MPI_FLOAT)
