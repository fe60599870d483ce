/* doitgen on MPI under the default plan: A's first axis in balanced bands (NR arrives local), C4
   replicated. Every (r, q) row is independent, so each rank transforms its own rows with no
   communication. */
#include <mpi.h>
#include <stdint.h>

#define HB_DOITGEN_MPI(NAME, T)                                                                  \
    void NAME(T *restrict A, const T *restrict C4, int64_t NR, int64_t NQ, int64_t NP,           \
              MPI_Comm comm, void *workspace, int64_t workspace_bytes) {                         \
        (void)comm;                                                                              \
        (void)workspace_bytes;                                                                   \
        T *restrict sums = workspace;                                                            \
        _Pragma("omp parallel for schedule(static)")                                             \
        for (int64_t r = 0; r < NR; ++r) {                                                       \
            T *restrict sum = sums + r * NP;                                                     \
            for (int64_t q = 0; q < NQ; ++q) {                                                   \
                T *restrict a = A + (r * NQ + q) * NP;                                           \
                for (int64_t p = 0; p < NP; ++p) sum[p] = 0;                                     \
                for (int64_t s = 0; s < NP; ++s) {                                               \
                    const T as = a[s];                                                           \
                    for (int64_t p = 0; p < NP; ++p) sum[p] += as * C4[s * NP + p];              \
                }                                                                                \
                for (int64_t p = 0; p < NP; ++p) a[p] = sum[p];                                  \
            }                                                                                    \
        }                                                                                        \
    }

HB_DOITGEN_MPI(doitgen_mpi_fp64, double)
HB_DOITGEN_MPI(doitgen_mpi_fp32, float)
