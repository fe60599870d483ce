/* mlp_block on MPI: each rank runs its own rows of x through the replicated layers (x and y split
   by rows, so N arrives local, the workspace holds the rank's own hidden rows, and no
   communication is needed). */
#include <mpi.h>
#include <stdint.h>
#include <tgmath.h>

#define HB_MLP_BLOCK_MPI(NAME, T)                                                             \
    void NAME(const T *restrict x, const T *restrict w1, const T *restrict b1,                \
              const T *restrict w2, const T *restrict b2, T *restrict y, int64_t N,           \
              int64_t D, int64_t F, MPI_Comm comm, void *workspace,                           \
              int64_t workspace_bytes) {                                                      \
        (void)comm;                                                                           \
        (void)workspace_bytes;                                                                \
        T *restrict hidden = (T *)workspace;                                                  \
        const T inv_sqrt2 = (T)0.70710678118654752440;                                        \
        _Pragma("omp parallel for schedule(static)")                                          \
        for (int64_t n = 0; n < N; ++n) {                                                     \
            const T *restrict row = x + n * D;                                                \
            T *restrict h = hidden + n * F;                                                   \
            for (int64_t f = 0; f < F; ++f) {                                                 \
                T acc = 0;                                                                    \
                _Pragma("omp simd reduction(+ : acc)")                                        \
                for (int64_t d = 0; d < D; ++d) acc += row[d] * w1[f * D + d];                \
                acc += b1[f];                                                                 \
                h[f] = (T)0.5 * acc * ((T)1 + erf(acc * inv_sqrt2));                          \
            }                                                                                 \
            for (int64_t d = 0; d < D; ++d) {                                                 \
                T acc = 0;                                                                    \
                _Pragma("omp simd reduction(+ : acc)")                                        \
                for (int64_t f = 0; f < F; ++f) acc += h[f] * w2[d * F + f];                  \
                y[n * D + d] = acc + b2[d];                                                   \
            }                                                                                 \
        }                                                                                     \
    }

HB_MLP_BLOCK_MPI(mlp_block_mpi_fp64, double)
HB_MLP_BLOCK_MPI(mlp_block_mpi_fp32, float)
