/* three_way_branch on MPI: a, b, c and d split the same way, so each rank applies the
   if-converted loop to its own elements, N local; no communication. */
#include <mpi.h>
#include <stdint.h>

#define HB_THREE_WAY_MPI(NAME, T)                                                                \
    void NAME(const T *restrict b, const T *restrict c, const T *restrict d, T *restrict a,      \
              int64_t N, MPI_Comm comm, void *workspace, int64_t workspace_bytes) {              \
        (void)comm;                                                                              \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        _Pragma("omp parallel for simd schedule(static)")                                        \
        for (int64_t i = 0; i < N; ++i) {                                                        \
            const T add = d[i] < (T)0 ? b[i] * c[i] : (d[i] == (T)0 ? b[i] * b[i] : c[i] * c[i]); \
            a[i] += add;                                                                         \
        }                                                                                        \
    }

HB_THREE_WAY_MPI(three_way_branch_mpi_fp64, double)
HB_THREE_WAY_MPI(three_way_branch_mpi_fp32, float)
