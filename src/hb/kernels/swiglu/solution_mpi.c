/* swiglu on MPI: each rank applies y = SiLU(gate) * up to its own rows (gate, up and y split by
   rows, F kept whole, so N arrives local and no communication is needed). */
#include <mpi.h>
#include <stdint.h>
#include <tgmath.h>

#define HB_SWIGLU_MPI(NAME, T)                                                                \
    void NAME(const T *restrict gate, const T *restrict up, T *restrict y, int64_t N,         \
              int64_t F, MPI_Comm comm, void *workspace, int64_t workspace_bytes) {           \
        (void)comm;                                                                           \
        (void)workspace;                                                                      \
        (void)workspace_bytes;                                                                \
        const int64_t count = N * F;                                                          \
        _Pragma("omp parallel for schedule(static)")                                          \
        for (int64_t i = 0; i < count; ++i) y[i] = gate[i] / ((T)1 + exp(-gate[i])) * up[i]; \
    }

HB_SWIGLU_MPI(swiglu_mpi_fp64, double)
HB_SWIGLU_MPI(swiglu_mpi_fp32, float)
