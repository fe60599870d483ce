/* muladdsub on MPI: the five arrays split the same way (block, cyclic or block_cyclic alike), so
   each rank applies the fused loop to its own elements, N local; no communication. */
#include <mpi.h>
#include <stdint.h>

#define HB_MULADDSUB_MPI(NAME, T)                                                               \
    void NAME(const T *restrict in1, const T *restrict in2, T *restrict out1, T *restrict out2, \
              T *restrict out3, int64_t N, MPI_Comm comm, void *workspace,                      \
              int64_t workspace_bytes) {                                                        \
        (void)comm;                                                                             \
        (void)workspace;                                                                        \
        (void)workspace_bytes;                                                                  \
        _Pragma("omp parallel for simd schedule(static)")                                       \
        for (int64_t i = 0; i < N; ++i) {                                                       \
            out1[i] = in1[i] * in2[i];                                                          \
            out2[i] = in1[i] + in2[i];                                                          \
            out3[i] = in1[i] - in2[i];                                                          \
        }                                                                                       \
    }

HB_MULADDSUB_MPI(muladdsub_mpi_fp64, double)
HB_MULADDSUB_MPI(muladdsub_mpi_fp32, float)
