/* column_recurrence on MPI under the default plan: aa and bb split by columns (the second axis,
   block over a 1-D grid), every rank holding all M rows of its N local columns. The recurrence
   runs down each column, so every rank's columns are independent: the interchanged loop on the
   local tile (rows outside, the local columns inside), no communication. */
#include <mpi.h>
#include <stdint.h>

#define HB_COLUMN_MPI(NAME, T)                                                                   \
    void NAME(const T *restrict bb, T *restrict aa, int64_t M, int64_t N, MPI_Comm comm,         \
              void *workspace, int64_t workspace_bytes) {                                        \
        (void)comm;                                                                              \
        (void)workspace;                                                                         \
        (void)workspace_bytes;                                                                   \
        for (int64_t j = 1; j < M; ++j) {                                                        \
            _Pragma("omp parallel for simd schedule(static)")                                    \
            for (int64_t i = 0; i < N; ++i) aa[j * N + i] = aa[(j - 1) * N + i] + bb[j * N + i]; \
        }                                                                                        \
    }

HB_COLUMN_MPI(column_recurrence_mpi_fp64, double)
HB_COLUMN_MPI(column_recurrence_mpi_fp32, float)
